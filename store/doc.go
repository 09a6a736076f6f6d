// Package store is the process's store, the audit store: the durable
// record of every DLQ job and every archived message (dlqreplay.Store), and
// beside it body reads, offset resets, plans and pauses (offsets.Store, as
// ResetStore), job and poll leases and stored snapshots, kept in an
// embedded SQLite database (modernc.org/sqlite, pure Go) in the data
// directory, or in PostgreSQL for replicas. Each consumer declares the
// small interface it needs and this package implements it, speaking the
// consumer's types; nothing outside this package sees a row.
//
// The store is written before the broker is told anything irreversible: a
// job row exists before its first message moves, per-message outcomes are
// flushed in batches while it runs, and a deleted message is archived (and
// fsynced, synchronous=FULL) before its DLQ copy is acknowledged; the DLQ
// ids of copies are recorded (table inflight) before they are published. A
// job that was still running when the process died is marked interrupted
// the next time the store is opened; its counts and outcomes are what was
// flushed, and InFlight names the messages it recorded and never settled,
// which the next job on the DLQ marks possible duplicates. A job that ends
// (succeeded, failed or cancelled) has settled every copy it sent, so its
// in-flight records are deleted with its last update.
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
// # Two engines
//
// Versions are engine-neutral: version N means the same tables and columns
// in SQLite (Open, data_dir, one process) and PostgreSQL (OpenPostgres,
// shared by replicas). There is one migration list; a step carries
// PostgreSQL's SQL (migration.pg) only where the dialects differ: BIGINT
// for the millisecond timestamps, BYTEA for BLOB, an identity column for
// AUTOINCREMENT, BOOLEAN for the flags. Queries are written once with ?
// placeholders (conn rewrites them to $n) and run on both: INSERT … ON
// CONFLICT DO UPDATE, … RETURNING, TRUE/FALSE, no engine-only functions.
// PostgreSQL migrations take pg_advisory_xact_lock instead of
// _txlock=immediate; the pre-versions check reads sqlite_master and has
// no PostgreSQL counterpart to need.
//
// # Replicas
//
// replicas.go holds what several replicas need: a heartbeat written with
// every progress flush (a job's owner is the replica that created it), a
// cancel flag the owner polls, a lease row per DLQ, and InterruptStale,
// which marks interrupted the jobs whose heartbeat is older than the lease
// TTL. A flush on a job another replica marked interrupted fails with
// dlqreplay.ErrLeaseLost, so its owner stops it.
//
// What a replica hands out for a later request lives here too, so the
// request may reach another replica: the offset-reset plans it issued
// (plans.go: apply takes only a plan_id; kept until applied, for a TTL and
// under a bound the caller gives, expired and surplus rows deleted as
// plans are kept) and the last pause or resume of each consumer
// (pauses.go: laid over a snapshot polled before it, deleted after a
// while as pauses are kept).
package store
