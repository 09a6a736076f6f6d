package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrNewerSchema is returned by Open for a database that a newer
// queuewatch migrated past the versions this build knows.
var ErrNewerSchema = errors.New("written by a newer queuewatch")

// migration is one step of the schema. Its SQL runs in one transaction
// with the row that records it.
type migration struct {
	version int
	what    string
	sql     string
}

// migrations are applied in order; versions start at 1 and have no gaps.
// A released migration is never changed: add a new one at the end.
var migrations = []migration{
	{version: 1, what: "jobs, outcomes and the archive", sql: schemaV1},
	{version: 2, what: "dry-run counts and job notes", sql: `
ALTER TABLE jobs ADD COLUMN would_move INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN note TEXT NOT NULL DEFAULT '';
`},
	// Archive inserts deleted = 0 and the pipeline sets 1 once the removal
	// settled. Rows archived before this version default to 1: they stay
	// restorable, as they were, since whether their removal succeeded was
	// not recorded.
	{version: 3, what: "whether an archived message left its DLQ", sql: `
ALTER TABLE archive ADD COLUMN deleted INTEGER NOT NULL DEFAULT 1;
`},
	// A restored copy's broker dedup id (JetStream's Nats-Msg-Id) was the
	// archive row's number, which every data_dir counts from 1: a second
	// instance's restore was dropped as a duplicate of the first's. Each
	// row gets a random id instead, rows archived before this version too.
	{version: 4, what: "a random restore id per archived message", sql: `
ALTER TABLE archive ADD COLUMN restore_id TEXT NOT NULL DEFAULT '';
UPDATE archive SET restore_id = lower(hex(randomblob(16)));
`},
	// A native job (the broker's own move, dlqreplay.ModeNative) is a
	// replay of everything that queuewatch did not read: the log says so.
	// Jobs before this version ran through the pipeline ('').
	{version: 5, what: "the mode of a job (pipeline or native)", sql: `
ALTER TABLE jobs ADD COLUMN mode TEXT NOT NULL DEFAULT '';
`},
	// An offset reset is no DLQ job: one row per apply, refusals too, with
	// the plan and receipt as JSON (see resets.go).
	{version: 6, what: "offset resets", sql: `
CREATE TABLE offset_resets (
	id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, who TEXT NOT NULL,
	broker TEXT NOT NULL, cluster TEXT NOT NULL, grp TEXT NOT NULL,
	plan_id TEXT NOT NULL, result TEXT NOT NULL, entry TEXT NOT NULL);
CREATE INDEX offset_resets_group ON offset_resets(cluster, grp, id);
`},
	// Two processes sharing the store (a CLI apply beside serve, or two
	// replicas) apply resets of one group one at a time: a row per group
	// being applied, held until it expires (see resets_lease.go). Plain
	// SQL: SQLite and PostgreSQL both run it.
	{version: 7, what: "offset reset leases", sql: `
CREATE TABLE offset_reset_leases (
	cluster TEXT NOT NULL, grp TEXT NOT NULL, holder TEXT NOT NULL, expires BIGINT NOT NULL,
	PRIMARY KEY (cluster, grp));
`},
}

// schemaV1 is the schema as queuewatch created it before versions existed,
// byte for byte, so such a database is version 1 as it stands.
const schemaV1 = `
CREATE TABLE IF NOT EXISTS jobs (
	id TEXT PRIMARY KEY, dlq TEXT NOT NULL, action TEXT NOT NULL, who TEXT NOT NULL,
	dry_run INTEGER NOT NULL, selection TEXT NOT NULL, target TEXT NOT NULL,
	state TEXT NOT NULL, error TEXT NOT NULL DEFAULT '',
	created INTEGER NOT NULL, finished INTEGER NOT NULL DEFAULT 0,
	depth INTEGER NOT NULL DEFAULT 0, to_move INTEGER NOT NULL DEFAULT 0, moved INTEGER NOT NULL DEFAULT 0,
	failed INTEGER NOT NULL DEFAULT 0, skipped INTEGER NOT NULL DEFAULT 0,
	remaining INTEGER NOT NULL DEFAULT 0, duplicates INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS jobs_dlq ON jobs(dlq, created);
CREATE TABLE IF NOT EXISTS outcomes (
	job_id TEXT NOT NULL, seq INTEGER NOT NULL, dlq TEXT NOT NULL, message_id TEXT NOT NULL,
	result TEXT NOT NULL, target TEXT NOT NULL, reason TEXT NOT NULL, source TEXT NOT NULL, possible_duplicate INTEGER NOT NULL,
	PRIMARY KEY (job_id, seq));
CREATE INDEX IF NOT EXISTS outcomes_msg ON outcomes(dlq, message_id, result);
CREATE TABLE IF NOT EXISTS archive (
	id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, dlq TEXT NOT NULL,
	message_id TEXT NOT NULL, archived_at INTEGER NOT NULL, properties TEXT NOT NULL,
	headers TEXT NOT NULL, key BLOB, body BLOB NOT NULL,
	restored_at INTEGER NOT NULL DEFAULT 0, restored_to TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS archive_dlq ON archive(dlq, id);
`

// v1Tables are the tables of schema version 1; a database holding them
// without schema_migrations predates versions.
var v1Tables = []string{"jobs", "outcomes", "archive"}

const createVersions = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`

// migrate brings db to the last of ms, recording a pre-versions database
// as version 1 first. It refuses a database above the last of ms.
func migrate(ctx context.Context, db *sql.DB, ms []migration) error {
	v, err := baseline(ctx, db, ms[len(ms)-1].version)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.version > v {
			if err := apply(ctx, db, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// baseline creates schema_migrations, records a pre-versions database as
// version 1, and returns the current version.
func baseline(ctx context.Context, db *sql.DB, latest int) (int, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	if _, err := tx.ExecContext(ctx, createVersions); err != nil {
		return 0, fmt.Errorf("create schema_migrations: %w", err)
	}
	v, err := version(ctx, tx)
	if err != nil {
		return 0, err
	}
	if v == 0 {
		legacy, err := preVersions(ctx, tx)
		if err != nil {
			return 0, err
		}
		if legacy {
			if err := record(ctx, tx, 1); err != nil {
				return 0, err
			}
			v = 1
		}
	}
	if v > latest {
		return 0, fmt.Errorf("%w: schema version %d, this build knows up to %d; run that queuewatch or use another data_dir",
			ErrNewerSchema, v, latest)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("record schema version: %w", err)
	}
	return v, nil
}

// apply runs one migration and records it, unless a process that opened
// the store at the same time already did.
func apply(ctx context.Context, db *sql.DB, m migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate to version %d (%s): %w", m.version, m.what, err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	v, err := version(ctx, tx)
	if err != nil {
		return err
	}
	if v >= m.version {
		return nil // another process applied it while this one waited
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("migrate to version %d (%s): %w", m.version, m.what, err)
	}
	if err := record(ctx, tx, m.version); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate to version %d (%s): %w", m.version, m.what, err)
	}
	return nil
}

func version(ctx context.Context, tx *sql.Tx) (int, error) {
	var v sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return int(v.Int64), nil
}

func record(ctx context.Context, tx *sql.Tx, v int) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
		v, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("record schema version %d: %w", v, err)
	}
	return nil
}

// preVersions reports whether the database holds every version 1 table
// without having recorded a version. A database with only some of them
// (a crash while the first release created its schema) is left at version
// 0: migration 1 creates only what is missing.
func preVersions(ctx context.Context, tx *sql.Tx) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (?, ?, ?)`,
		v1Tables[0], v1Tables[1], v1Tables[2]).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for an unversioned schema: %w", err)
	}
	return n == len(v1Tables), nil
}
