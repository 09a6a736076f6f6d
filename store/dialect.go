package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// Drivers name the engines a Store runs on (config audit.driver).
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// conn is the store's pool with its engine. Queries are written once with
// ? placeholders; conn rewrites them to $n for PostgreSQL, so no query
// text is duplicated per engine.
type conn struct {
	db *sql.DB
	pg bool
}

// bind rewrites q's ? placeholders to $1, $2, … on PostgreSQL. No query
// here has a ? inside a string literal, so a plain scan is enough.
func (c conn) bind(q string) string {
	if !c.pg || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (c conn) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return c.db.ExecContext(ctx, c.bind(q), args...)
}

func (c conn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return c.db.QueryContext(ctx, c.bind(q), args...)
}

func (c conn) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return c.db.QueryRowContext(ctx, c.bind(q), args...)
}

// BeginTx starts a transaction; its statements are rewritten like conn's.
func (c conn) BeginTx(ctx context.Context) (tx, error) {
	t, err := c.db.BeginTx(ctx, nil)
	return tx{t, c}, err
}

// tx is a transaction whose queries are rewritten like conn's.
type tx struct {
	*sql.Tx
	c conn
}

func (t tx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(ctx, t.c.bind(q), args...)
}

func (t tx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return t.Tx.QueryRowContext(ctx, t.c.bind(q), args...)
}

func (t tx) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return t.Tx.PrepareContext(ctx, t.c.bind(q))
}
