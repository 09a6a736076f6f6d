package outbox

import (
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestPostgresAdviseExistingIndexName: an index with the name check would
// suggest exists but does not serve the query; check says so instead of
// advising to create it again.
func TestPostgresAdviseExistingIndexName(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutbox,
		"INSERT INTO outbox (created_at, sent_at) SELECT now(), now() FROM generate_series(1, 50000)",
		"CREATE INDEX outbox_pending_idx ON outbox (id)",
		"ANALYZE outbox")
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: db.DSN, Tables: []Table{pgTable}})
	warns, err := s.Advise(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := "although index outbox_pending_idx exists: if ANALYZE outbox does not help, it does not serve the query; replace it with CREATE INDEX CONCURRENTLY outbox_pending_idx ON outbox (created_at) WHERE sent_at IS NULL"
	if len(warns) != 1 || !strings.Contains(warns[0], want) {
		t.Errorf("warnings = %q, want one containing %q", warns, want)
	}
}

// TestMariaDBAdviseExistingIndexName is the same on MariaDB, whose index
// names belong to their table.
func TestMariaDBAdviseExistingIndexName(t *testing.T) {
	db := testenv.MariaDB(t)
	db.Exec(t, `CREATE TABLE outbox (
		id BIGINT AUTO_INCREMENT PRIMARY KEY,
		created_at DATETIME(6) NOT NULL DEFAULT NOW(6),
		sent_at DATETIME(6) NULL,
		INDEX outbox_pending_idx (created_at)
	) ENGINE=InnoDB`)
	values := strings.TrimSuffix(strings.Repeat("(NOW(6)),", 1000), ",")
	for range 20 {
		db.Exec(t, "INSERT INTO outbox (sent_at) VALUES "+values)
	}
	db.Exec(t, "ANALYZE TABLE outbox")
	s := mariaSource(t, db, 0, pgTable)
	warns, err := s.Advise(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := "although index outbox_pending_idx exists: if ANALYZE TABLE outbox does not help, it does not serve the query; replace it with CREATE INDEX outbox_pending_idx ON outbox (sent_at, created_at)"
	if len(warns) != 1 || !strings.Contains(warns[0], want) {
		t.Errorf("warnings = %q, want one containing %q", warns, want)
	}
}

// TestPostgresAdviseFailingTableKeepsOthers: a table EXPLAIN cannot read
// is reported, and the tables after it are still advised.
func TestPostgresAdviseFailingTableKeepsOthers(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutbox,
		"INSERT INTO outbox (created_at, sent_at) SELECT now(), now() FROM generate_series(1, 50000)",
		"ANALYZE outbox")
	missing := Table{Table: "missing_outbox", CreatedAt: "created_at", Pending: "sent_at IS NULL"}
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: db.DSN, Tables: []Table{missing, pgTable}})
	warns, err := s.Advise(t.Context())
	if err == nil || !strings.Contains(err.Error(), `explain table missing_outbox: ERROR: relation "missing_outbox" does not exist`) {
		t.Errorf("advise error = %v, want the missing table's", err)
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], "table outbox: the pending query reads the whole table") {
		t.Errorf("warnings = %q, want the one for outbox", warns)
	}
}
