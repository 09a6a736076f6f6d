package outbox

import (
	"fmt"
	"strconv"
	"time"

	brokeroutbox "github.com/queuewatch/queuewatch/brokers/outbox"
)

// Table is one outbox table to watch. Table and CreatedAt must be plain
// identifiers and Pending one boolean expression: config validates them,
// and they are written into the query as they are.
type Table struct {
	Table     string
	CreatedAt string
	Pending   string
}

// pendingQuery is the one query per table and poll. It returns the number
// of pending rows, the oldest pending row's age in seconds (NULL when
// none), how many pending rows were created at or before the bound
// parameter (the previous poll's database time; NULL on the first poll
// counts none), and the database's time now, which the next poll binds.
// The time comes from the database so that its clock alone measures ages.
func pendingQuery(d brokeroutbox.Dialect, t Table, timeout time.Duration, mariaDB bool) string {
	c, from := t.CreatedAt, t.Table
	switch d {
	case brokeroutbox.Postgres:
		return "SELECT count(*), EXTRACT(EPOCH FROM now() - min(" + c + "))::float8, " +
			"count(*) FILTER (WHERE " + c + " <= $1::timestamptz), now() " +
			"FROM " + from + " WHERE (" + t.Pending + ")"
	case brokeroutbox.MySQL:
		sel := "SELECT COUNT(*), TIMESTAMPDIFF(MICROSECOND, MIN(" + c + "), NOW(6)) / 1000000, " +
			"COUNT(CASE WHEN " + c + " <= ? THEN 1 END), NOW(6) " +
			"FROM " + from + " WHERE (" + t.Pending + ")"
		if mariaDB {
			// MariaDB ignores MySQL's optimizer hint; SET STATEMENT
			// scopes its own limit (in seconds) to this statement.
			return "SET STATEMENT max_statement_time=" + strconv.FormatFloat(timeout.Seconds(), 'f', 3, 64) + " FOR " + sel
		}
		return "SELECT /*+ MAX_EXECUTION_TIME(" + strconv.FormatInt(timeout.Milliseconds(), 10) + ") */" + sel[len("SELECT"):]
	case brokeroutbox.SQLite:
		now := "((julianday('now') - 2440587.5) * 86400.0)"
		return "SELECT count(*), " + now + " - min(" + c + "), " +
			"count(CASE WHEN " + c + " <= ? THEN 1 END), " + now + " " +
			"FROM " + from + " WHERE (" + t.Pending + ")"
	}
	panic(fmt.Sprintf("outbox: unknown dialect %q", d))
}

// explainQuery is the pending query as EXPLAIN sees it, for check.
func explainQuery(d brokeroutbox.Dialect, t Table) string {
	switch d {
	case brokeroutbox.Postgres:
		return "EXPLAIN (FORMAT JSON) SELECT count(*), min(" + t.CreatedAt + ") FROM " + t.Table + " WHERE (" + t.Pending + ")"
	case brokeroutbox.MySQL:
		return "EXPLAIN SELECT COUNT(*), MIN(" + t.CreatedAt + ") FROM " + t.Table + " WHERE (" + t.Pending + ")"
	}
	return ""
}

// slotsQuery reads the configured replication slots: name, whether a
// client is streaming from it, how many bytes of WAL it has not confirmed
// (NULL when it has no position at all), and its type and WAL status,
// which say why. On a standby the current position is the last WAL
// received.
const slotsQuery = `SELECT slot_name, active,
  pg_wal_lsn_diff(
    CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn() ELSE pg_current_wal_lsn() END,
    coalesce(confirmed_flush_lsn, restart_lsn))::bigint,
  slot_type, wal_status
FROM pg_replication_slots WHERE slot_name = ANY($1)`
