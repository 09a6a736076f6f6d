package outbox

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// myOutbox is the outbox table on MariaDB, with the index the pending
// query needs there (no partial indexes): the condition's column, then
// created_at.
const myOutbox = `CREATE TABLE outbox (
	id BIGINT AUTO_INCREMENT PRIMARY KEY,
	created_at DATETIME(6) NOT NULL DEFAULT NOW(6),
	sent_at DATETIME(6) NULL,
	payload TEXT,
	KEY outbox_pending (sent_at, created_at)
) ENGINE=InnoDB`

// myInsert adds n pending rows created ago seconds before now.
func myInsert(t *testing.T, db *testenv.Database, n int, ago float64) {
	t.Helper()
	rows := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("(NOW(6) - INTERVAL %d MICROSECOND),", int64(ago*1e6)), n), ",")
	db.Exec(t, "INSERT INTO outbox (created_at) VALUES "+rows)
}

func mariaSource(t *testing.T, db *testenv.Database, timeout time.Duration, tables ...Table) *Source {
	t.Helper()
	return newSource(t, testSource{Name: "billing-db", Dialect: MySQL, DSN: db.DSN, Tables: tables, StatementTimeout: timeout})
}

func TestMariaDBPendingRowsAgesAndPublishRate(t *testing.T) {
	db := testenv.MariaDB(t)
	db.Exec(t, myOutbox)
	myInsert(t, db, 3, 100)
	myInsert(t, db, 2, 40)
	db.Exec(t, "INSERT INTO outbox (created_at, sent_at) VALUES (NOW(6) - INTERVAL 1 HOUR, NOW(6))")
	s := mariaSource(t, db, 0, pgTable)

	before1 := time.Now()
	ot := table(t, poll(t, s), "outbox")
	after1 := time.Now()
	if ot.Pending != 5 || ot.Err != "" || ot.HasPublishRate {
		t.Fatalf("first poll: %+v, want 5 pending and no rate yet", ot)
	}
	wantAge(t, ot.OldestPendingAge, 100)
	if !s.db.MariaDB() {
		t.Errorf("the server was not recognized as MariaDB")
	}

	db.Exec(t, "UPDATE outbox SET sent_at = NOW(6) WHERE sent_at IS NULL ORDER BY created_at LIMIT 3")
	myInsert(t, db, 2, 0)
	time.Sleep(200 * time.Millisecond)
	before2 := time.Now()
	ot = table(t, poll(t, s), "outbox")
	after2 := time.Now()
	if ot.Pending != 4 {
		t.Errorf("second poll pending = %d, want 4", ot.Pending)
	}
	wantAge(t, ot.OldestPendingAge, 40)
	wantPublished(t, ot, 3, before2.Sub(after1), after2.Sub(before1))
}

func TestMariaDBStalledWorker(t *testing.T) {
	db := testenv.MariaDB(t)
	db.Exec(t, myOutbox)
	myInsert(t, db, 4, 300)
	s := mariaSource(t, db, 0, pgTable)
	var hist []*queue.Snapshot
	for range 3 {
		snap := poll(t, s)
		alerts.EvaluateOutbox(hist, snap, alerts.StatusOptions{Window: 3})
		hist = append(hist, snap)
		time.Sleep(50 * time.Millisecond)
	}
	if ot := hist[2].OutboxTables[0]; ot.Status != queue.StatusStall || !strings.HasPrefix(ot.StatusReason, "4 rows pending and none published") {
		t.Errorf("stalled worker: %s %q, want stall", ot.Status, ot.StatusReason)
	}
}

func TestMariaDBDroppedTableFailsThatTableOnly(t *testing.T) {
	db := testenv.MariaDB(t)
	db.Exec(t, myOutbox, "CREATE TABLE billing_outbox LIKE outbox")
	myInsert(t, db, 2, 10)
	billing := Table{Table: "billing_outbox", CreatedAt: "created_at", Pending: "sent_at IS NULL"}
	s := mariaSource(t, db, 0, pgTable, billing)
	poll(t, s)
	db.Exec(t, "DROP TABLE billing_outbox")
	snap := poll(t, s)
	if ot := table(t, snap, "outbox"); ot.Err != "" || ot.Pending != 2 {
		t.Errorf("surviving table: %+v", ot)
	}
	if gone := table(t, snap, "billing_outbox"); !strings.Contains(gone.Err, "billing_outbox' doesn't exist") {
		t.Errorf("dropped table error = %q", gone.Err)
	}
	if len(snap.Partial) != 1 {
		t.Errorf("partial = %q", snap.Partial)
	}
}

func TestMariaDBWrongPasswordFailsTheSource(t *testing.T) {
	db := testenv.MariaDB(t)
	dsn := strings.Replace(db.DSN, "queuewatch:queuewatch@", "queuewatch:wrong@", 1)
	s := newSource(t, testSource{Name: "billing-db", Dialect: MySQL, DSN: dsn, Tables: []Table{pgTable}})
	_, err := s.Poll(t.Context())
	if err == nil || !strings.Contains(err.Error(), "Access denied for user 'queuewatch'") {
		t.Fatalf("poll with a wrong password: %v", err)
	}
}

// TestMariaDBStatementTimeout holds a write lock on the table from another
// session; max_statement_time ends the waiting count on the server.
func TestMariaDBStatementTimeout(t *testing.T) {
	db := testenv.MariaDB(t)
	db.Exec(t, myOutbox)
	myInsert(t, db, 1, 5)
	s := mariaSource(t, db, 300*time.Millisecond, pgTable)
	poll(t, s) // learns the server is MariaDB

	conn, err := db.DB.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := conn.ExecContext(t.Context(), "LOCK TABLES outbox WRITE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(t.Context(), "UNLOCK TABLES") //nolint:errcheck // test cleanup
	start := time.Now()
	ot := table(t, poll(t, s), "outbox")
	took := time.Since(start)
	if !strings.Contains(ot.Err, "statement timeout after 300ms") {
		t.Errorf("locked table error = %q, want the statement timeout", ot.Err)
	}
	if took > 2*time.Second {
		t.Errorf("poll took %s with a 300ms statement timeout", took)
	}
}
