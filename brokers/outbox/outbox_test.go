package outbox

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestNewDoesNoIO: New builds the access to a database nothing answers
// for; only Connect finds out.
func TestNewDoesNoIO(t *testing.T) {
	for driver, dsn := range map[string]string{
		config.OutboxPostgres: "postgres://queuewatch:queuewatch@127.0.0.1:1/x?sslmode=disable",
		config.OutboxMySQL:    "queuewatch:queuewatch@tcp(127.0.0.1:1)/x",
	} {
		d, err := New(config.Outbox{Name: "down-db", Driver: driver, DSN: dsn}, 0)
		if err != nil {
			t.Fatalf("%s: New: %v", driver, err)
		}
		if err := d.Connect(t.Context()); err == nil || !strings.Contains(err.Error(), "connect to down-db") {
			t.Errorf("%s: Connect = %v, want it to fail", driver, err)
		}
		_ = d.Close()
	}
}

// TestNewRefusesAMalformedDSN: a DSN its driver cannot parse is refused
// with the parser's reason and the source's name, never the password.
func TestNewRefusesAMalformedDSN(t *testing.T) {
	for _, tc := range []struct{ driver, dsn, want string }{
		{config.OutboxPostgres, "postgres://u:s3cret@h/db?sslmode=bogus", "outbox o: not a PostgreSQL DSN: failed to configure TLS (sslmode is invalid)"},
		{config.OutboxMySQL, "mysql://u:s3cret@h:3306/db", "outbox o: not a MySQL DSN (user:password@tcp(host:3306)/database): default addr for network 'h:3306' unknown"},
	} {
		_, err := New(config.Outbox{Name: "o", Driver: tc.driver, DSN: tc.dsn}, 0)
		if err == nil || err.Error() != tc.want {
			t.Errorf("New(%s %q) = %v, want %s", tc.driver, tc.dsn, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error reveals the password: %v", err)
		}
	}
}

// TestPostgresSessionsAreReadOnly: the pool's sessions refuse writes even
// outside the read-only transactions queries run in, and the pool holds
// at most two connections.
func TestPostgresSessionsAreReadOnly(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, "CREATE TABLE outbox (id bigserial PRIMARY KEY, payload text)")
	d, err := New(config.Outbox{Name: "orders-db", Driver: config.OutboxPostgres, DSN: db.DSN}, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, err = d.db.ExecContext(t.Context(), "INSERT INTO outbox (payload) VALUES ('x')")
	if err == nil || !strings.Contains(err.Error(), "read-only transaction") {
		t.Errorf("write through the pool: %v, want a read-only refusal", err)
	}
	for range 5 {
		err := d.ReadOnly(t.Context(), func(ctx context.Context, tx *sql.Tx) error {
			var n int
			return tx.QueryRowContext(ctx, "SELECT count(*) FROM outbox").Scan(&n)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if st := d.db.Stats(); st.MaxOpenConnections != 2 {
		t.Errorf("pool size = %d, want 2", st.MaxOpenConnections)
	}
	if n, err := pgConnCount(t.Context(), db.DB); err != nil || n < 1 || n > 2 {
		t.Errorf("queuewatch sessions on the database = %d (%v), want 1 or 2", n, err)
	}
}

// pgConnCount is how many sessions queuewatch holds on db.
func pgConnCount(ctx context.Context, db *sql.DB) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'queuewatch' AND datname = current_database()").Scan(&n)
	return n, err
}
