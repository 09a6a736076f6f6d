package store

import (
	"context"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// engine is one driver the store tests run on. A database is where a
// store lives (a data directory, a PostgreSQL DSN); open opens a Store on
// it, again after a restart or as a second replica.
type engine struct {
	name string
	// database makes a fresh, empty database for one test.
	database func(t *testing.T) string
	open     func(t *testing.T, db string) *Store
	// crash is how long a dead process's running jobs take to count as
	// interrupted: at once on SQLite (the store is the process's alone),
	// after the lease TTL on PostgreSQL (other replicas may be running).
	crash time.Duration
}

// testLeaseTTL is the PostgreSQL stores' lease TTL in these tests.
const testLeaseTTL = 300 * time.Millisecond

var engines = []engine{
	{
		name:     DriverSQLite,
		database: func(t *testing.T) string { return t.TempDir() },
		open: func(t *testing.T, dir string) *Store {
			t.Helper()
			s, err := Open(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			s.leaseTTL = testLeaseTTL
			return s
		},
	},
	{
		name:     DriverPostgres,
		database: func(t *testing.T) string { return testenv.Postgres(t).DSN },
		open: func(t *testing.T, dsn string) *Store {
			t.Helper()
			s, err := OpenPostgres(context.Background(), dsn, testLeaseTTL)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		crash: testLeaseTTL + 100*time.Millisecond,
	},
}

// forEngines runs test once per engine, each on a fresh database.
func forEngines(t *testing.T, test func(t *testing.T, e engine, db string)) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { test(t, e, e.database(t)) })
	}
}
