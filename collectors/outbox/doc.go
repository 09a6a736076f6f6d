// Package outbox polls transactional-outbox tables and PostgreSQL logical
// replication slots: the producer side of lag. A stalled outbox worker
// leaves nothing lagging or dead-lettered downstream; its events are just
// late, and only the database shows it.
//
// One poll of a source costs, per table, one query that counts the pending
// rows and reads the oldest one's age:
//
//	SELECT count(*), <now> - min(created_at), count(<created_at <= previous poll's now>), <now>
//	FROM table WHERE (pending)
//
// An index that serves WHERE (pending) ORDER BY created_at keeps it cheap:
// on PostgreSQL a partial index such as
// CREATE INDEX ON outbox (created_at) WHERE sent_at IS NULL, which stays as
// small as the backlog. For the replication slots, one query on
// pg_replication_slots reads every configured slot. A slot with neither a
// confirmed flush nor a restart position (a physical slot no standby has
// used, an invalidated slot) has an unknown lag, which is not 0: it says
// why and is left out of /metrics.
//
// The publish rate comes from successive polls: rows pending at the previous
// poll (created at or before its database time) that are pending no longer
// were published, so published = previous pending − those still pending, and
// the rate divides by the time between the polls. Rows that become pending
// again, or that commit later with an older created_at, can only make the
// estimate low, and it is clamped at zero. Rows inserted and published
// between two polls are never seen pending, so the rate is a lower bound,
// low on a publisher that keeps up within a poll. Counting them would take
// a second query over all rows created since the last poll (a full index
// on created_at, and blind to publishers that delete sent rows) or a
// sequence's position (whose rollback gaps would read as publishes and
// hide a stall); neither is worth it.
//
// Safety on a production database: each table query, and the slot query,
// runs in a read-only transaction with a statement timeout (PostgreSQL SET LOCAL
// statement_timeout, MariaDB SET STATEMENT max_statement_time, MySQL
// MAX_EXECUTION_TIME), on a pool of its own of at most two connections (the
// connection, the transaction and the timeout are the access's, brokers/outbox,
// which app builds; the source only writes the queries); the pending condition was validated by config as one boolean expression and is
// parenthesized; table and column names are plain identifiers.
//
// Failure stays local: a table that cannot be read (dropped, locked past
// the timeout, no permission) is marked on that table and listed in
// Snapshot.Partial; a database that cannot be reached or refuses the login
// fails the source's poll, and other sources go on.
package outbox
