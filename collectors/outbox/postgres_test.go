package outbox

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

const pgOutbox = `CREATE TABLE outbox (
	id bigserial PRIMARY KEY,
	created_at timestamptz NOT NULL DEFAULT now(),
	sent_at timestamptz,
	payload text
)`

var pgTable = Table{Table: "outbox", CreatedAt: "created_at", Pending: "sent_at IS NULL"}

// pgInsert adds n pending rows created ago seconds before now.
func pgInsert(t *testing.T, db *testenv.Database, n int, ago float64) {
	t.Helper()
	db.Exec(t, fmt.Sprintf("INSERT INTO outbox (created_at) SELECT now() - make_interval(secs => %g) FROM generate_series(1, %d)", ago, n))
}

func TestPostgresPendingRowsAgesAndPublishRate(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutbox)
	pgInsert(t, db, 3, 100)
	pgInsert(t, db, 2, 40)
	db.Exec(t, "INSERT INTO outbox (created_at, sent_at) VALUES (now() - interval '1 hour', now())") // already sent
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: db.DSN, Tables: []Table{pgTable}})

	before1 := time.Now()
	snap := poll(t, s)
	after1 := time.Now()
	if snap.Broker != queue.Outbox || snap.Cluster != "orders-db" || len(snap.Partial) != 0 {
		t.Fatalf("snapshot %s/%s partial %v", snap.Broker, snap.Cluster, snap.Partial)
	}
	ot := table(t, snap, "outbox")
	if ot.Pending != 5 || ot.Err != "" || ot.HasPublishRate {
		t.Fatalf("first poll: %+v, want 5 pending and no rate yet", ot)
	}
	wantAge(t, ot.OldestPendingAge, 100)

	// The worker publishes the three oldest rows; two new rows arrive.
	db.Exec(t, "UPDATE outbox SET sent_at = now() WHERE id IN (SELECT id FROM outbox WHERE sent_at IS NULL ORDER BY created_at LIMIT 3)")
	pgInsert(t, db, 2, 0)
	time.Sleep(200 * time.Millisecond)
	before2 := time.Now()
	ot = table(t, poll(t, s), "outbox")
	after2 := time.Now()
	if ot.Pending != 4 {
		t.Errorf("second poll pending = %d, want 4", ot.Pending)
	}
	wantAge(t, ot.OldestPendingAge, 40)
	wantPublished(t, ot, 3, before2.Sub(after1), after2.Sub(before1))

	// Everything sent: nothing pending, no age.
	db.Exec(t, "UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL")
	ot = table(t, poll(t, s), "outbox")
	if ot.Pending != 0 || ot.OldestPendingAge != 0 || !ot.HasPublishRate || ot.PublishRate <= 0 {
		t.Errorf("drained: %+v, want 0 pending, age 0 and a positive rate", ot)
	}
}

// TestPostgresStalledWorker polls a table whose worker sends nothing while
// rows keep waiting; over a full window the status is stall.
func TestPostgresStalledWorker(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutbox)
	pgInsert(t, db, 7, 300)
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: db.DSN, Tables: []Table{pgTable}})
	ev := alerts.NewEvaluator(alerts.StatusOptions{Window: 3})
	var hist []*queue.Snapshot
	// The stall is judged once the window is full (poll 2) and shown once
	// a second poll agrees (poll 3).
	for i := range 4 {
		snap := poll(t, s)
		ev.Evaluate(snap)
		hist = append(hist, snap)
		ot := snap.OutboxTables[0]
		if i < 3 && ot.Status != queue.StatusOK {
			t.Errorf("poll %d: status %s before the window is full and a second poll agrees", i, ot.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ot := hist[3].OutboxTables[0]
	if ot.Status != queue.StatusStall || !strings.HasPrefix(ot.StatusReason, "7 rows pending and none published since ") {
		t.Errorf("stalled worker: %s %q, want stall", ot.Status, ot.StatusReason)
	}

	// The worker comes back: one published row is progress, shown once a
	// second poll agrees; the first says what it found.
	db.Exec(t, "UPDATE outbox SET sent_at = now() WHERE id = (SELECT min(id) FROM outbox)")
	snap := poll(t, s)
	ev.Evaluate(snap)
	if ot := snap.OutboxTables[0]; ot.Status != queue.StatusStall || !strings.Contains(ot.StatusReason, "; the last poll found ok (6 rows pending") {
		t.Errorf("at the publish: %s %q, want stall held, saying the poll found ok", ot.Status, ot.StatusReason)
	}
	snap = poll(t, s)
	ev.Evaluate(snap)
	if ot := snap.OutboxTables[0]; ot.Status != queue.StatusOK || ot.Pending != 6 {
		t.Errorf("after a publish: %s %q pending %d, want ok with 6", ot.Status, ot.StatusReason, ot.Pending)
	}
}

// TestPostgresDroppedTableFailsThatTableOnly: a dropped table is an error
// on that table; the source's other table and slot go on.
func TestPostgresDroppedTableFailsThatTableOnly(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutbox, "CREATE TABLE billing_outbox (LIKE outbox INCLUDING ALL)")
	pgInsert(t, db, 2, 10)
	db.Exec(t, "INSERT INTO billing_outbox (created_at) VALUES (now())")
	billing := Table{Table: "billing_outbox", CreatedAt: "created_at", Pending: "sent_at IS NULL"}
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: db.DSN, Tables: []Table{pgTable, billing}})
	poll(t, s)
	db.Exec(t, "DROP TABLE billing_outbox")
	snap := poll(t, s)
	if ot := table(t, snap, "outbox"); ot.Err != "" || ot.Pending != 2 {
		t.Errorf("surviving table: %+v", ot)
	}
	gone := table(t, snap, "billing_outbox")
	if !strings.Contains(gone.Err, `relation "billing_outbox" does not exist`) {
		t.Errorf("dropped table error = %q", gone.Err)
	}
	if len(snap.Partial) != 1 || !strings.HasPrefix(snap.Partial[0], "table billing_outbox: ") {
		t.Errorf("partial = %q", snap.Partial)
	}
	alerts.EvaluateOutbox(nil, snap, alerts.StatusOptions{})
	if gone := table(t, snap, "billing_outbox"); gone.Status != queue.StatusError {
		t.Errorf("dropped table status = %s", gone.Status)
	}
}

func TestPostgresWrongPasswordFailsTheSource(t *testing.T) {
	db := testenv.Postgres(t)
	dsn := strings.Replace(db.DSN, "queuewatch:queuewatch@", "queuewatch:wrong@", 1)
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: dsn, Tables: []Table{pgTable}})
	_, err := s.Poll(t.Context())
	if err == nil || !strings.Contains(err.Error(), "password authentication failed") {
		t.Fatalf("poll with a wrong password: %v", err)
	}

	// Nothing listens on port 1: the poll fails with the reason.
	down := newSource(t, testSource{Name: "down-db", Dialect: Postgres, DSN: "postgres://queuewatch:queuewatch@127.0.0.1:1/x?sslmode=disable", Tables: []Table{pgTable}})
	_, err = down.Poll(t.Context())
	if err == nil || !strings.Contains(err.Error(), "connect to down-db") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("poll of an unreachable database: %v", err)
	}
}

// TestPostgresStatementTimeout holds an ACCESS EXCLUSIVE lock on the
// table from another transaction, so the count waits; the statement
// timeout ends it on the server and the table carries the error.
func TestPostgresStatementTimeout(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutbox, "CREATE TABLE other_outbox (LIKE outbox INCLUDING ALL)")
	pgInsert(t, db, 1, 5)
	other := Table{Table: "other_outbox", CreatedAt: "created_at", Pending: "sent_at IS NULL"}
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: db.DSN, Tables: []Table{pgTable, other}, StatementTimeout: 300 * time.Millisecond})

	lockTx, err := db.DB.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lockTx.Rollback() //nolint:errcheck // test cleanup
	if _, err := lockTx.ExecContext(t.Context(), "LOCK TABLE outbox IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	snap := poll(t, s)
	took := time.Since(start)
	ot := table(t, snap, "outbox")
	if !strings.Contains(ot.Err, "statement timeout after 300ms") || !strings.Contains(ot.Err, "57014") {
		t.Errorf("locked table error = %q, want the statement timeout", ot.Err)
	}
	if took > 2*time.Second {
		t.Errorf("poll took %s with a 300ms statement timeout", took)
	}
	if o := table(t, snap, "other_outbox"); o.Err != "" {
		t.Errorf("the other table failed too: %q", o.Err)
	}
	// No session of queuewatch still waits on the lock.
	var waiting int
	if err := db.DB.QueryRowContext(t.Context(), "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'queuewatch' AND wait_event_type = 'Lock'").Scan(&waiting); err != nil {
		t.Fatal(err)
	}
	if waiting != 0 {
		t.Errorf("%d queuewatch sessions still wait on the lock", waiting)
	}
}

// TestPostgresHostileConditionRefusedByConfig: conditions that would wait,
// write or leave the WHERE clause never reach the database: config refuses
// them, and the table is untouched.
func TestPostgresHostileConditionRefusedByConfig(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutbox)
	for _, pending := range []string{
		"sent_at IS NULL) OR (SELECT pg_sleep(30)) IS NULL OR (true",
		"sent_at IS NULL; DROP TABLE outbox",
		"id IN (WITH d AS (DELETE FROM outbox RETURNING id) SELECT id FROM d)",
		"pg_sleep(30) IS NULL",
		"pg_catalog.lower(payload) = 'x'",
		"outbox.evil IS NULL",
	} {
		yml := fmt.Sprintf("outbox: [{name: o, driver: postgres, dsn: %q, tables: [{table: outbox, created_at: created_at, pending: %q}]}]", db.DSN, pending)
		if _, err := config.Parse([]byte(yml), "q.yml"); err == nil || !strings.Contains(err.Error(), "outbox[0].tables[0].pending") {
			t.Errorf("pending %q: config error %v, want it refused", pending, err)
		}
	}
	var n int
	if err := db.DB.QueryRowContext(t.Context(), "SELECT count(*) FROM outbox").Scan(&n); err != nil {
		t.Fatalf("outbox table: %v", err)
	}
}

// TestPostgresReplicationSlotLag creates a real logical replication slot
// (test_decoding): its lag in bytes grows as the database writes and falls
// to zero once the changes are consumed.
func TestPostgresReplicationSlotLag(t *testing.T) {
	db := testenv.Postgres(t)
	var level string
	if err := db.DB.QueryRowContext(t.Context(), "SHOW wal_level").Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != "logical" {
		testenv.Require(t, "postgresql with wal_level=logical", fmt.Errorf("wal_level is %q; databases-setup.sh sets it", level))
	}
	db.Exec(t, pgOutbox)
	slot := db.Name + "_slot"
	db.Exec(t, "SELECT pg_create_logical_replication_slot('"+slot+"', 'test_decoding')")
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: db.DSN, Slots: []string{slot, "no_such_slot"}})

	snap := poll(t, s)
	if len(snap.Slots) != 2 {
		t.Fatalf("slots = %+v", snap.Slots)
	}
	first := snap.Slots[0]
	if first.Err != "" || first.Active || first.Slot != slot {
		t.Fatalf("new slot: %+v", first)
	}
	if miss := snap.Slots[1]; miss.Err != "no replication slot named no_such_slot" {
		t.Errorf("missing slot: %+v", miss)
	}

	pgInsert(t, db, 2000, 0)
	grown := poll(t, s).Slots[0]
	if grown.LagBytes < first.LagBytes+100_000 {
		t.Errorf("lag after 2000 inserts = %d bytes, was %d: want it to grow by the WAL written", grown.LagBytes, first.LagBytes)
	}

	// Consuming the changes confirms them. WAL the server writes on its
	// own (a checkpoint, a standby snapshot) can land between the two
	// statements, so consume and look again a few times.
	var lag int64 = -1
	for range 10 {
		db.Exec(t, "SELECT count(*) FROM pg_logical_slot_get_changes('"+slot+"', NULL, NULL)")
		if lag = poll(t, s).Slots[0].LagBytes; lag == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if lag != 0 {
		t.Errorf("lag after consuming every change = %d bytes, want 0", lag)
	}

	// A CDC client streaming from the slot makes it active; when it goes
	// away the slot is inactive again, which status shows as stop.
	recv := exec.CommandContext(t.Context(), "pg_recvlogical", "--dbname", db.DSN, "--slot", slot, "--start", "--file", "/dev/null", "--no-loop")
	if err := recv.Start(); err != nil {
		testenv.Require(t, "pg_recvlogical (postgresql-client)", err)
	}
	t.Cleanup(func() { _ = recv.Process.Kill(); _ = recv.Wait() })
	waitSlot(t, s, true)
	_ = recv.Process.Kill()
	_ = recv.Wait()
	snap = waitSlot(t, s, false)
	alerts.EvaluateOutbox(nil, snap, alerts.StatusOptions{})
	if st := snap.Slots[0]; st.Status != queue.StatusStop {
		t.Errorf("inactive slot status = %s %q, want stop", st.Status, st.StatusReason)
	}
}

// waitSlot polls until the first slot's active flag is active.
func waitSlot(t *testing.T, s *Source, active bool) *queue.Snapshot {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		snap := poll(t, s)
		if snap.Slots[0].Active == active {
			return snap
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot active = %v after 10s, want %v", snap.Slots[0].Active, active)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPostgresConnectNotBoundByStatementTimeout: the statement timeout is
// for queries; logging in (TCP, SCRAM, perhaps TLS to a remote server) may
// take longer, and is bounded by the poll's deadline instead.
func TestPostgresConnectNotBoundByStatementTimeout(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutbox)
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: db.DSN, Tables: []Table{pgTable}, StatementTimeout: time.Microsecond})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	snap, err := s.Poll(ctx)
	if err != nil {
		t.Fatalf("poll with a 1µs statement timeout failed as a whole: %v", err)
	}
	if ot := snap.OutboxTables[0]; ot.Err != "" && !strings.Contains(ot.Err, "statement timeout") {
		t.Errorf("table error %q, want none or the statement timeout", ot.Err)
	}
}

// TestPostgresTimestampWithoutZoneIsUTC: a created_at without a time zone,
// written in UTC as most applications do, has its true age even when the
// database's zone is another one.
func TestPostgresTimestampWithoutZoneIsUTC(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, "CREATE TABLE outbox (id bigserial PRIMARY KEY, created_at timestamp NOT NULL, sent_at timestamp)")
	db.Exec(t, "INSERT INTO outbox (created_at) VALUES ((now() AT TIME ZONE 'UTC') - interval '90 seconds')")
	db.Exec(t, "ALTER DATABASE "+db.Name+" SET timezone = 'Asia/Kolkata'") // UTC+5:30, for new sessions
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: db.DSN, Tables: []Table{pgTable}})
	wantAge(t, table(t, poll(t, s), "outbox").OldestPendingAge, 90)
}

// TestPostgresPhysicalSlotLagUnknown: a physical slot no standby has used
// has neither a confirmed flush nor a restart position, so its lag is
// unknown, not 0: the slot says why, and status repeats it.
func TestPostgresPhysicalSlotLagUnknown(t *testing.T) {
	db := testenv.Postgres(t)
	slot := db.Name + "_physical"
	db.Exec(t, "SELECT pg_create_physical_replication_slot('"+slot+"')")
	t.Cleanup(func() {
		_, _ = db.DB.ExecContext(context.Background(), "SELECT pg_drop_replication_slot($1)", slot)
	})
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: db.DSN, Slots: []string{slot}})
	snap := poll(t, s)
	sl := snap.Slots[0]
	if sl.Err != "" || sl.Active || sl.LagBytes != 0 || !strings.Contains(sl.LagUnknown, "physical slot") {
		t.Fatalf("unused physical slot: %+v, want no error and an unknown lag that says why", sl)
	}
	alerts.EvaluateOutbox(nil, snap, alerts.StatusOptions{})
	if sl := snap.Slots[0]; sl.Status != queue.StatusStop || !strings.Contains(sl.StatusReason, "lag is unknown: "+sl.LagUnknown) {
		t.Errorf("status %s %q, want stop saying the lag is unknown and why", sl.Status, sl.StatusReason)
	}
}

// TestPostgresSlotQueryReadOnlyWithTimeout traces the statements the
// source sends: the slot query, like the table queries, runs inside a
// read-only transaction whose statement timeout is set first.
func TestPostgresSlotQueryReadOnlyWithTimeout(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutbox)
	cfg, err := pgx.ParseConfig(db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	rec := &statementRecorder{}
	cfg.Tracer = rec
	pool := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = pool.Close() })
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DB: pool, Tables: []Table{pgTable}, Slots: []string{"no_such_slot"}, StatementTimeout: 1500 * time.Millisecond})
	poll(t, s)
	got := rec.statements()
	at := slices.IndexFunc(got, func(q string) bool { return strings.Contains(q, "pg_replication_slots") })
	if at < 2 || at+1 >= len(got) {
		t.Fatalf("statements %q: want the slot query between begin and rollback", got)
	}
	if b, set, end := got[at-2], got[at-1], got[at+1]; !strings.HasPrefix(b, "begin") || !strings.Contains(b, "read only") ||
		set != "SET LOCAL statement_timeout = 1500" || end != "rollback" {
		t.Errorf("around the slot query: %q, %q, …, %q; want begin read only, SET LOCAL statement_timeout = 1500, …, rollback", b, set, end)
	}
}

// statementRecorder is a pgx tracer that records every statement sent.
type statementRecorder struct {
	mu   sync.Mutex
	sent []string
}

func (r *statementRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, data.SQL)
	return ctx
}

func (r *statementRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *statementRecorder) statements() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sent)
}

// TestPostgresPublishRateIsALowerBound pins down what the publish rate
// means: rows inserted and published between two polls are never seen
// pending, so they do not count; only rows pending at the earlier poll do.
func TestPostgresPublishRateIsALowerBound(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutbox)
	pgInsert(t, db, 2, 10)
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: db.DSN, Tables: []Table{pgTable}})
	poll(t, s)
	start := time.Now()
	// Between the polls: 5 new rows come and go, and 1 of the 2 old ones is sent.
	pgInsert(t, db, 5, 0)
	db.Exec(t, "UPDATE outbox SET sent_at = now() WHERE id IN (SELECT id FROM outbox ORDER BY id DESC LIMIT 5)",
		"UPDATE outbox SET sent_at = now() WHERE id = (SELECT min(id) FROM outbox)")
	time.Sleep(100 * time.Millisecond)
	minGap := time.Since(start)
	ot := table(t, poll(t, s), "outbox")
	if ot.Pending != 1 {
		t.Fatalf("pending = %d, want 1", ot.Pending)
	}
	wantPublished(t, ot, 1, minGap, time.Since(start)+time.Second)
}
