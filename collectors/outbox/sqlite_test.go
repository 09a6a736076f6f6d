package outbox

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the demo's embedded outbox
)

// TestSQLiteDemoOutbox covers the dialect the demo's embedded outbox uses:
// created_at in Unix seconds.
func TestSQLiteDemoOutbox(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "outbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	now := float64(time.Now().UnixNano()) / 1e9
	for _, q := range []string{
		"CREATE TABLE outbox (id INTEGER PRIMARY KEY, created_at REAL NOT NULL, sent_at REAL)",
		"CREATE INDEX outbox_pending ON outbox (created_at) WHERE sent_at IS NULL",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	insert := func(ago float64) {
		if _, err := db.Exec("INSERT INTO outbox (created_at) VALUES (?)", now-ago); err != nil {
			t.Fatal(err)
		}
	}
	insert(60)
	insert(30)
	insert(10)
	s := newSource(t, testSource{Name: "demo", Dialect: SQLite, DB: db, Tables: []Table{pgTable}})
	ot := table(t, poll(t, s), "outbox")
	if ot.Pending != 3 || ot.HasPublishRate {
		t.Fatalf("first poll: %+v", ot)
	}
	wantAge(t, ot.OldestPendingAge, 60)
	if _, err := db.Exec("UPDATE outbox SET sent_at = created_at WHERE created_at < ?", now-20); err != nil {
		t.Fatal(err)
	}
	insert(0)
	ot = table(t, poll(t, s), "outbox")
	if ot.Pending != 2 || !ot.HasPublishRate || ot.PublishRate <= 0 {
		t.Errorf("second poll: %+v, want 2 pending and a positive rate", ot)
	}
	wantAge(t, ot.OldestPendingAge, 10)
	if err := s.db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(); err != nil {
		t.Errorf("Close closed the demo's database: %v", err)
	}
}
