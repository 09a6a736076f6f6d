package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // registers "mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
)

// The outbox test databases that databases-setup.sh (run by .ci/run)
// prepares: a password-authenticated account allowed to create databases
// (and, on PostgreSQL, replication slots).
const (
	PostgresAdminDSN = "postgres://queuewatch:queuewatch@127.0.0.1:5432/postgres?sslmode=disable"
	MariaDBAdminDSN  = "queuewatch:queuewatch@tcp(127.0.0.1:3306)/"
)

// Database is a database created for one test and dropped after it.
type Database struct {
	// Name is the database's name.
	Name string
	// DSN connects to it as the test account, in the driver's format.
	DSN string
	// DB is a connection pool to it for the test's own setup statements.
	DB *sql.DB
}

// Exec runs statements in order on d.DB and fails the test on the first
// error.
func (d *Database) Exec(t testing.TB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := d.DB.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// Postgres creates a fresh database on the local PostgreSQL for the test;
// an unreachable server goes to Require.
func Postgres(t testing.TB) *Database {
	t.Helper()
	admin := openReachable(t, "postgresql on 127.0.0.1:5432", "pgx", PostgresAdminDSN)
	name := strings.ReplaceAll(Unique("pg"), "-", "_")
	if _, err := admin.ExecContext(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	d := &Database{Name: name, DSN: strings.Replace(PostgresAdminDSN, "/postgres?", "/"+name+"?", 1)}
	d.DB = mustOpen(t, "pgx", d.DSN)
	t.Cleanup(func() {
		_ = d.DB.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// A test may leave a replication slot behind; it would keep the
		// database from being dropped.
		_, _ = admin.ExecContext(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1", name)
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
		_ = admin.Close()
	})
	return d
}

// MariaDB creates a fresh database on the local MariaDB for the test; an
// unreachable server goes to Require.
func MariaDB(t testing.TB) *Database {
	t.Helper()
	admin := openReachable(t, "mariadb on 127.0.0.1:3306", "mysql", MariaDBAdminDSN)
	name := strings.ReplaceAll(Unique("my"), "-", "_")
	if _, err := admin.ExecContext(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	d := &Database{Name: name, DSN: MariaDBAdminDSN + name}
	d.DB = mustOpen(t, "mysql", d.DSN)
	t.Cleanup(func() {
		_ = d.DB.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
		_ = admin.Close()
	})
	return d
}

func openReachable(t testing.TB, what, driver, dsn string) *sql.DB {
	t.Helper()
	db := mustOpen(t, driver, dsn)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		Require(t, what, fmt.Errorf("%w (internal/testenv/databases-setup.sh starts it)", err))
	}
	return db
}

func mustOpen(t testing.TB, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return db
}
