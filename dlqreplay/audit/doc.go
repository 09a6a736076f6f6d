// Package audit is the durable record of every DLQ job and every archived
// message: dlqreplay.Store kept in an embedded SQLite database
// (modernc.org/sqlite, pure Go) in the data directory. It speaks
// dlqreplay's types; nothing outside this package sees a row.
//
// The store is written before the broker is told anything irreversible: a
// job row exists before its first message moves, per-message outcomes are
// flushed in batches while it runs, and a deleted message is archived (and
// fsynced, synchronous=FULL) before its DLQ copy is acknowledged. A job that
// was still running when the process died is marked interrupted the next
// time the store is opened; its counts and outcomes are what was flushed.
//
// # Schema versions
//
// The schema evolves by ordered migrations (migrate.go). Open creates the
// table schema_migrations(version, applied_at) and applies every migration
// above the highest recorded version, each in its own transaction together
// with its row, so a crash leaves the database at one version or the next,
// never between. Transactions take the write lock when they begin
// (_txlock=immediate), so two processes opening one data directory apply
// each migration once. A database written before versions existed (its
// tables, no schema_migrations) is recorded as version 1, which is exactly
// that schema. A database whose version is above the highest this build
// knows was written by a newer queuewatch: Open refuses it with
// ErrNewerSchema rather than guess at columns it does not know.
//
// Migrations only add: a released migration is never edited, and a change
// is a new version at the end of the list.
//
// # A second engine
//
// Versions are engine-neutral: version N means the same tables and columns
// in every engine. A PostgreSQL store would be a second type implementing
// dlqreplay.Store with the same migration runner and its own SQL per
// version, where SQLite's dialect differs: BIGINT for the millisecond
// timestamps (INTEGER is 32-bit there), BYTEA for BLOB, an identity column
// for AUTOINCREMENT, BOOLEAN for the flags, $n placeholders for ?, and a
// pg_advisory_xact_lock instead of _txlock=immediate. The queries are
// otherwise written to run on both: INSERT … ON CONFLICT DO UPDATE, INSERT
// … RETURNING, and no SQLite-only functions. The pre-versions check reads
// sqlite_master and has no PostgreSQL counterpart to need.
package audit
