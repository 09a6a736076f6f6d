package outbox

import (
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestPostgresAdviseIndex: a large outbox without an index gets a warning
// naming the partial index; with that index, no warning.
func TestPostgresAdviseIndex(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutbox,
		"INSERT INTO outbox (created_at, sent_at) SELECT now(), now() FROM generate_series(1, 50000)",
		"INSERT INTO outbox (created_at) SELECT now() FROM generate_series(1, 10)",
		"ANALYZE outbox",
		"CREATE TABLE small_outbox (LIKE outbox INCLUDING ALL)",
		"ANALYZE small_outbox")
	small := Table{Table: "small_outbox", CreatedAt: "created_at", Pending: "sent_at IS NULL"}
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: db.DSN, Tables: []Table{pgTable, small}})
	warns, err := s.Advise(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := "CREATE INDEX CONCURRENTLY outbox_pending_idx ON outbox (created_at) WHERE sent_at IS NULL"
	if len(warns) != 1 || !strings.HasPrefix(warns[0], "table outbox: the pending query reads the whole table") || !strings.HasSuffix(warns[0], want) {
		t.Fatalf("warnings = %q, want one for outbox ending in %q", warns, want)
	}
	db.Exec(t, strings.Replace(want, " CONCURRENTLY", "", 1), "ANALYZE outbox")
	if warns, err := s.Advise(t.Context()); err != nil || len(warns) != 0 {
		t.Errorf("with the index: %q %v, want none", warns, err)
	}
}

func TestMariaDBAdviseIndex(t *testing.T) {
	db := testenv.MariaDB(t)
	db.Exec(t, `CREATE TABLE outbox (
		id BIGINT AUTO_INCREMENT PRIMARY KEY,
		created_at DATETIME(6) NOT NULL DEFAULT NOW(6),
		sent_at DATETIME(6) NULL
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
	want := "CREATE INDEX outbox_pending_idx ON outbox (sent_at, created_at)"
	if len(warns) != 1 || !strings.HasSuffix(warns[0], want) {
		t.Fatalf("warnings = %q, want one ending in %q", warns, want)
	}
	db.Exec(t, want, "ANALYZE TABLE outbox")
	if warns, err := s.Advise(t.Context()); err != nil || len(warns) != 0 {
		t.Errorf("with the index: %q %v, want none", warns, err)
	}
}

func TestConditionColumns(t *testing.T) {
	for cond, want := range map[string]string{
		"sent_at IS NULL": "sent_at",
		"status IN ('new', 'retry') AND attempts < coalesce(max_attempts, 5)": "status attempts max_attempts",
		"NOT published AND kind::text LIKE 'a b'":                             "published kind",
	} {
		if got := strings.Join(conditionColumns(cond), " "); got != want {
			t.Errorf("conditionColumns(%q) = %q, want %q", cond, got, want)
		}
	}
}
