package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/queuewatch/queuewatch/queue"
)

// DefaultStatementTimeout bounds each query when Options leave it zero.
const DefaultStatementTimeout = 5 * time.Second

// timeoutGrace is how long after the server's statement timeout the
// client gives up on its own.
const timeoutGrace = time.Second

// maxConns is the size of a source's own pool: one query runs at a time,
// and a second connection lets check's EXPLAIN or a slow close overlap.
const maxConns = 2

// Options configure a Source.
type Options struct {
	// Name is the source's configured name (the source label).
	Name    string
	Dialect Dialect
	// DSN is the driver's connection string (pgx for PostgreSQL,
	// go-sql-driver for MySQL and MariaDB). Ignored when DB is set.
	DSN string
	// DB, when set, is used instead of opening DSN; the source does not
	// close it. The demo passes its embedded SQLite database this way.
	DB     *sql.DB
	Tables []Table
	// Slots are PostgreSQL logical replication slot names.
	Slots []string
	// StatementTimeout bounds each query (DefaultStatementTimeout when 0).
	StatementTimeout time.Duration
	Logger           *slog.Logger
}

// Source polls one outbox database.
type Source struct {
	name    string
	dialect Dialect
	db      *sql.DB
	ownDB   bool
	tables  []Table
	slots   []string
	timeout time.Duration
	log     *slog.Logger

	mu      sync.Mutex
	mariaDB *bool // learned on the first successful MySQL poll
	prev    map[string]tableState
}

// tableState is what the publish rate needs from the previous poll.
type tableState struct {
	pending int64
	dbNow   any // the database's time at that poll, bound as the next cutoff
	at      time.Time
}

// New opens the source's connection pool. No connection is made until the
// first poll, so an unreachable database fails polls, not startup.
func New(opts Options) (*Source, error) {
	s := &Source{
		name: opts.Name, dialect: opts.Dialect, db: opts.DB, tables: opts.Tables, slots: opts.Slots,
		timeout: opts.StatementTimeout, log: opts.Logger, prev: map[string]tableState{},
	}
	if s.timeout <= 0 {
		s.timeout = DefaultStatementTimeout
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if len(s.slots) > 0 && s.dialect != Postgres {
		return nil, fmt.Errorf("outbox %s: replication slots need PostgreSQL", s.name)
	}
	if s.db == nil {
		db, err := open(opts.Dialect, opts.DSN)
		if err != nil {
			return nil, fmt.Errorf("outbox %s: %w", s.name, err)
		}
		s.db, s.ownDB = db, true
	}
	s.db.SetMaxOpenConns(maxConns)
	s.db.SetMaxIdleConns(maxConns)
	s.db.SetConnMaxIdleTime(5 * time.Minute)
	return s, nil
}

// open builds a pool for dsn, naming queuewatch to the server and, on
// PostgreSQL, making every transaction read-only by default as a second
// guard behind the read-only transactions the queries run in.
func open(d Dialect, dsn string) (*sql.DB, error) {
	switch d {
	case Postgres:
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("parse postgres dsn: %w", err)
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
			return nil, fmt.Errorf("parse mysql dsn: %w", err)
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
	return nil, fmt.Errorf("dialect %q needs an open *sql.DB", d)
}

// Broker is queue.Outbox.
func (s *Source) Broker() queue.Broker { return queue.Outbox }

// Cluster is the source's configured name.
func (s *Source) Cluster() string { return s.name }

// Close closes the pool the source opened.
func (s *Source) Close() {
	if !s.ownDB {
		return
	}
	if err := s.db.Close(); err != nil {
		s.log.Warn("close outbox connections", "err", err)
	}
}

// Poll reads every table and slot once. It fails as a whole only when the
// database cannot be reached; a table or slot that cannot be read carries
// its error.
func (s *Source) Poll(ctx context.Context) (*queue.Snapshot, error) {
	start := time.Now()
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	snap := &queue.Snapshot{Broker: queue.Outbox, Cluster: s.name, Time: start}
	for _, t := range s.tables {
		ot := s.pollTable(ctx, t)
		if ot.Err != "" {
			snap.Partial = append(snap.Partial, "table "+t.Table+": "+ot.Err)
		}
		snap.OutboxTables = append(snap.OutboxTables, ot)
	}
	if len(s.slots) > 0 {
		snap.Slots = s.pollSlots(ctx)
		for _, sl := range snap.Slots {
			if sl.Err != "" {
				snap.Partial = append(snap.Partial, "slot "+sl.Slot+": "+sl.Err)
			}
		}
	}
	snap.Duration = time.Since(start)
	return snap, nil
}

// connect checks that the database answers and learns, on MySQL, whether it
// is MariaDB (whose statement timeout is set differently). It is bounded by
// the poll's deadline, not the statement timeout: logging in to a remote
// server (TCP, TLS, SCRAM) may well take longer than a query should.
func (s *Source) connect(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("connect to %s: %w", s.name, err)
	}
	if s.dialect != MySQL {
		return nil
	}
	s.mu.Lock()
	known := s.mariaDB != nil
	s.mu.Unlock()
	if known {
		return nil
	}
	isMaria, err := s.probeMariaDB(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.mariaDB = &isMaria
	s.mu.Unlock()
	return nil
}

// probeMariaDB tells MariaDB from MySQL by the statement-timeout variable
// each has, rather than by VERSION(), which a proxy may answer with its own
// string: a guess wrong here would run the query with a timeout the server
// ignores. A server with neither variable is refused: without a timeout a
// slow query would keep running on it after queuewatch gave up.
func (s *Source) probeMariaDB(ctx context.Context) (bool, error) {
	var v sql.NullString
	err := s.db.QueryRowContext(ctx, "SELECT @@max_statement_time").Scan(&v)
	if err == nil {
		return true, nil
	}
	if !unknownVariable(err) {
		return false, fmt.Errorf("probe statement timeout of %s: %w", s.name, err)
	}
	if err := s.db.QueryRowContext(ctx, "SELECT @@max_execution_time").Scan(&v); err != nil {
		return false, fmt.Errorf("%s has neither max_statement_time (MariaDB) nor max_execution_time (MySQL 5.7.8+), so its queries cannot be bounded: %w", s.name, err)
	}
	return false, nil
}

// unknownVariable reports MySQL's ER_UNKNOWN_SYSTEM_VARIABLE.
func unknownVariable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1193
}

func (s *Source) isMariaDB() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mariaDB != nil && *s.mariaDB
}

// pollTable reads one table and derives its publish rate from the previous
// poll of it.
func (s *Source) pollTable(ctx context.Context, t Table) queue.OutboxTable {
	ot := queue.OutboxTable{Source: s.name, Table: t.Table}
	s.mu.Lock()
	prev, hasPrev := s.prev[t.Table]
	s.mu.Unlock()
	now := time.Now()
	r, err := s.readTable(ctx, t, prev.dbNow)
	if err != nil {
		s.mu.Lock()
		delete(s.prev, t.Table) // the next rate needs two good polls in a row
		s.mu.Unlock()
		ot.Err = err.Error()
		return ot
	}
	ot.Pending = r.pending
	if r.oldest.Valid {
		ot.OldestPendingAge = time.Duration(max(r.oldest.Float64, 0) * float64(time.Second))
	}
	if hasPrev {
		if dt := now.Sub(prev.at).Seconds(); dt > 0 {
			published := max(prev.pending-r.stillPending, 0)
			ot.PublishRate, ot.HasPublishRate = float64(published)/dt, true
		}
	}
	s.mu.Lock()
	s.prev[t.Table] = tableState{pending: r.pending, dbNow: r.dbNow, at: now}
	s.mu.Unlock()
	return ot
}

type tableRead struct {
	pending, stillPending int64
	oldest                sql.NullFloat64
	dbNow                 any
}

// ErrStatementTimeout marks a table query the database cancelled because
// it ran past the statement timeout.
var ErrStatementTimeout = errors.New("statement timeout")

// readTable runs the pending query in a read-only transaction bounded by
// the statement timeout.
func (s *Source) readTable(ctx context.Context, t Table, cutoff any) (tableRead, error) {
	var r tableRead
	err := s.readOnly(ctx, func(ctx context.Context, tx *sql.Tx) error {
		q := s.dialect.pendingQuery(t, s.timeout, s.isMariaDB())
		return tx.QueryRowContext(ctx, q, cutoff).Scan(&r.pending, &r.oldest, &r.stillPending, &r.dbNow)
	})
	if err != nil {
		return r, fmt.Errorf("count pending rows: %w", err)
	}
	return r, nil
}

// readOnly runs read in a read-only transaction bounded by the statement
// timeout, and marks a query the server cancelled for running past it
// with ErrStatementTimeout.
func (s *Source) readOnly(ctx context.Context, read func(context.Context, *sql.Tx) error) error {
	// The context deadline is a backstop a little after the server's own
	// timeout, which is the one that frees the server's resources.
	ctx, cancel := context.WithTimeout(ctx, s.timeout+timeoutGrace)
	defer cancel()
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: s.dialect != SQLite})
	if err != nil {
		return fmt.Errorf("begin read-only transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep, and a failed rollback closes the connection
	if s.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", max(s.timeout.Milliseconds(), 1))); err != nil {
			return fmt.Errorf("set statement timeout: %w", err)
		}
	}
	if err := read(ctx, tx); err != nil {
		if isTimeout(err) {
			return fmt.Errorf("%w after %s: %w", ErrStatementTimeout, s.timeout, err)
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

// pollSlots reads every configured replication slot in one query, in a
// read-only transaction bounded by the statement timeout like the tables'.
func (s *Source) pollSlots(ctx context.Context) []queue.ReplicationSlot {
	out := make([]queue.ReplicationSlot, len(s.slots))
	for i, name := range s.slots {
		out[i] = queue.ReplicationSlot{Source: s.name, Slot: name}
	}
	var found map[string]queue.ReplicationSlot
	err := s.readOnly(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		found, err = readSlots(ctx, tx, s.slots)
		return err
	})
	for i := range out {
		sl, ok := found[out[i].Slot]
		switch {
		case err != nil:
			out[i].Err = fmt.Sprintf("read pg_replication_slots: %v", err)
		case !ok:
			out[i].Err = "no replication slot named " + out[i].Slot
		default:
			out[i].Active, out[i].LagBytes, out[i].LagUnknown = sl.Active, sl.LagBytes, sl.LagUnknown
		}
	}
	return out
}

// readSlots runs slotsQuery for names, keyed by slot name.
func readSlots(ctx context.Context, tx *sql.Tx, names []string) (map[string]queue.ReplicationSlot, error) {
	rows, err := tx.QueryContext(ctx, slotsQuery, names)
	if err != nil {
		return nil, err
	}
	defer rows.Close() //nolint:errcheck // rows.Err reports a failed read; Close only returns the connection
	found := map[string]queue.ReplicationSlot{}
	for rows.Next() {
		var sl queue.ReplicationSlot
		var lag sql.NullInt64
		var slotType, walStatus sql.NullString
		if err := rows.Scan(&sl.Slot, &sl.Active, &lag, &slotType, &walStatus); err != nil {
			return nil, err
		}
		if lag.Valid {
			sl.LagBytes = max(lag.Int64, 0)
		} else {
			sl.LagUnknown = lagUnknownReason(slotType.String, walStatus.String)
		}
		found[sl.Slot] = sl
	}
	return found, rows.Err()
}

// lagUnknownReason says why a slot has neither a confirmed flush nor a
// restart position, from its pg_replication_slots slot_type and
// wal_status.
func lagUnknownReason(slotType, walStatus string) string {
	switch {
	case walStatus == "lost":
		return "the slot was invalidated (wal_status lost): the WAL it needed is gone"
	case slotType == "physical":
		return "physical slot that reserves no WAL yet: no standby has streamed from it"
	}
	return "the slot has neither a confirmed flush nor a restart position"
}
