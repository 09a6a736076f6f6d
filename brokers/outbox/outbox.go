package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/queuewatch/queuewatch/config"
)

// Dialect is the SQL flavour of an outbox database.
type Dialect string

// The dialects. SQLite serves the demo's embedded outbox only (config
// offers postgres and mysql).
const (
	Postgres Dialect = "postgres"
	MySQL    Dialect = "mysql" // MariaDB too; see DB.MariaDB
	SQLite   Dialect = "sqlite"
)

// DefaultStatementTimeout bounds each query when none is given.
const DefaultStatementTimeout = 5 * time.Second

// timeoutGrace is how long after the server's statement timeout the
// client gives up on its own.
const timeoutGrace = time.Second

// maxConns is the size of a source's own pool: one query runs at a time,
// and a second connection lets check's EXPLAIN or a slow close overlap.
const maxConns = 2

// ErrStatementTimeout marks a query the database cancelled because it ran
// past the statement timeout.
var ErrStatementTimeout = errors.New("statement timeout")

// DB is the access to one outbox database. It is safe for concurrent use.
type DB struct {
	name    string
	dialect Dialect
	db      *sql.DB
	ownDB   bool
	timeout time.Duration

	mu      sync.Mutex
	mariaDB *bool // learned on the first successful MySQL Connect
}

// New builds the access to outbox source o, whose queries the server stops
// after statementTimeout (DefaultStatementTimeout when 0). It parses the
// DSN and makes the pool but does no I/O.
func New(o config.Outbox, statementTimeout time.Duration) (*DB, error) {
	pool, err := open(Dialect(o.Driver), o.DSN)
	if err != nil {
		return nil, fmt.Errorf("outbox %s: %w", o.Name, err)
	}
	d := Wrap(o.Name, Dialect(o.Driver), pool, statementTimeout)
	d.ownDB = true
	return d, nil
}

// Wrap reads an open pool, such as the demo's embedded SQLite database.
// Close leaves the pool open: its owner closes it.
func Wrap(name string, d Dialect, pool *sql.DB, statementTimeout time.Duration) *DB {
	if statementTimeout <= 0 {
		statementTimeout = DefaultStatementTimeout
	}
	pool.SetMaxOpenConns(maxConns)
	pool.SetMaxIdleConns(maxConns)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	return &DB{name: name, dialect: d, db: pool, timeout: statementTimeout}
}

// open builds a pool for dsn, naming queuewatch to the server and, on
// PostgreSQL, making every transaction read-only by default as a second
// guard behind the read-only transactions the queries run in.
func open(d Dialect, dsn string) (*sql.DB, error) {
	if err := config.CheckDSN(string(d), dsn); err != nil {
		// The parsers' own errors may quote the DSN and its password.
		return nil, err
	}
	switch d {
	case Postgres:
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, errors.New("not a PostgreSQL DSN")
		}
		if cfg.ConnectTimeout == 0 {
			cfg.ConnectTimeout = 10 * time.Second
		}
		if cfg.RuntimeParams["application_name"] == "" {
			cfg.RuntimeParams["application_name"] = "queuewatch"
		}
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
		if cfg.RuntimeParams["timezone"] == "" && cfg.RuntimeParams["TimeZone"] == "" {
			// A created_at without a time zone is read as UTC, as most
			// applications write it, whatever the server's zone; a DSN
			// that sets timezone says otherwise.
			cfg.RuntimeParams["timezone"] = "UTC"
		}
		return stdlib.OpenDB(*cfg), nil
	case MySQL:
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return nil, errors.New("not a MySQL DSN")
		}
		if cfg.Timeout == 0 {
			cfg.Timeout = 10 * time.Second
		}
		if _, set := cfg.Params["time_zone"]; !set {
			// As for PostgreSQL: a DATETIME is read as UTC, and NOW() is
			// UTC, unless the DSN sets time_zone.
			if cfg.Params == nil {
				cfg.Params = map[string]string{}
			}
			cfg.Params["time_zone"] = "'+00:00'"
		}
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, fmt.Errorf("mysql connector: %w", err)
		}
		return sql.OpenDB(conn), nil
	}
	return nil, fmt.Errorf("driver %q: want postgres or mysql", d)
}

// Name is the source's configured name, the source label everywhere.
func (d *DB) Name() string { return d.name }

// Dialect is the database's SQL flavour.
func (d *DB) Dialect() Dialect { return d.dialect }

// StatementTimeout is how long the server lets one query run.
func (d *DB) StatementTimeout() time.Duration { return d.timeout }

// Close closes the pool New opened.
func (d *DB) Close() error {
	if !d.ownDB {
		return nil
	}
	return d.db.Close()
}

// Connect checks that the database answers and learns, on MySQL, whether
// it is MariaDB (whose statement timeout is set differently). It is bounded
// by ctx, not the statement timeout: logging in to a remote server (TCP,
// TLS, SCRAM) may well take longer than a query should.
func (d *DB) Connect(ctx context.Context) error {
	if err := d.db.PingContext(ctx); err != nil {
		return fmt.Errorf("connect to %s: %w", d.name, err)
	}
	if d.dialect != MySQL {
		return nil
	}
	d.mu.Lock()
	known := d.mariaDB != nil
	d.mu.Unlock()
	if known {
		return nil
	}
	isMaria, err := d.probeMariaDB(ctx)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.mariaDB = &isMaria
	d.mu.Unlock()
	return nil
}

// probeMariaDB tells MariaDB from MySQL by the statement-timeout variable
// each has, rather than by VERSION(), which a proxy may answer with its own
// string: a guess wrong here would run the query with a timeout the server
// ignores. A server with neither variable is refused: without a timeout a
// slow query would keep running on it after queuewatch gave up.
func (d *DB) probeMariaDB(ctx context.Context) (bool, error) {
	var v sql.NullString
	err := d.db.QueryRowContext(ctx, "SELECT @@max_statement_time").Scan(&v)
	if err == nil {
		return true, nil
	}
	if !unknownVariable(err) {
		return false, fmt.Errorf("probe statement timeout of %s: %w", d.name, err)
	}
	if err := d.db.QueryRowContext(ctx, "SELECT @@max_execution_time").Scan(&v); err != nil {
		return false, fmt.Errorf("%s has neither max_statement_time (MariaDB) nor max_execution_time (MySQL 5.7.8+), so its queries cannot be bounded: %w", d.name, err)
	}
	return false, nil
}

// unknownVariable reports MySQL's ER_UNKNOWN_SYSTEM_VARIABLE.
func unknownVariable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1193
}

// MariaDB reports whether a MySQL-dialect database proved to be MariaDB on
// Connect. A MariaDB query sets its statement timeout with SET STATEMENT
// max_statement_time, a MySQL one with the MAX_EXECUTION_TIME hint; neither
// takes the other's, so the query must be written for the server it meets.
func (d *DB) MariaDB() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mariaDB != nil && *d.mariaDB
}

// ReadOnly runs read in a read-only transaction bounded by the statement
// timeout, and marks a query the server cancelled for running past it
// with ErrStatementTimeout. On PostgreSQL the timeout is set for the
// transaction; MySQL and MariaDB queries carry their own (see MariaDB).
func (d *DB) ReadOnly(ctx context.Context, read func(context.Context, *sql.Tx) error) error {
	// The context deadline is a backstop a little after the server's own
	// timeout, which is the one that frees the server's resources.
	ctx, cancel := context.WithTimeout(ctx, d.timeout+timeoutGrace)
	defer cancel()
	tx, err := d.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: d.dialect != SQLite})
	if err != nil {
		return fmt.Errorf("begin read-only transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep, and a failed rollback closes the connection
	if d.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", max(d.timeout.Milliseconds(), 1))); err != nil {
			return fmt.Errorf("set statement timeout: %w", err)
		}
	}
	if err := read(ctx, tx); err != nil {
		if isTimeout(err) {
			return fmt.Errorf("%w after %s: %w", ErrStatementTimeout, d.timeout, err)
		}
		return err
	}
	return nil
}

// isTimeout recognizes the servers' statement-timeout errors: PostgreSQL
// 57014 query_canceled, MariaDB 1969 ER_STATEMENT_TIMEOUT, MySQL 3024
// ER_QUERY_TIMEOUT.
func isTimeout(err error) bool {
	if me, ok := errors.AsType[*mysql.MySQLError](err); ok {
		return me.Number == 1969 || me.Number == 3024
	}
	return strings.Contains(err.Error(), "SQLSTATE 57014")
}
