package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// rawDB opens the store's file directly, as a second process would.
func rawDB(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// applied returns schema_migrations as version → applied_at.
func applied(t *testing.T, db *sql.DB) map[int]int64 {
	t.Helper()
	rows, err := db.Query(`SELECT version, applied_at FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	out := map[int]int64{}
	for rows.Next() {
		var v int
		var at int64
		if err := rows.Scan(&v, &at); err != nil {
			t.Fatal(err)
		}
		out[v] = at
	}
	return out
}

// schemaSQL returns the CREATE statement of every table and index.
func schemaSQL(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string]string{}
	for rows.Next() {
		var name, stmt string
		if err := rows.Scan(&name, &stmt); err != nil {
			t.Fatal(err)
		}
		out[name] = stmt
	}
	return out
}

func mustOpen(t *testing.T, dir string, ms []migration) *Store {
	t.Helper()
	s, err := open(context.Background(), dir, ms)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOpenUpgradesPreVersionsStore opens a store written before schema
// versions existed (testdata/v0.sql: that release's schema and rows its
// code wrote) and reads every job, outcome and archived message back.
func TestOpenUpgradesPreVersionsStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dump, err := os.ReadFile("testdata/v0.sql")
	if err != nil {
		t.Fatal(err)
	}
	old := rawDB(t, dir)
	if _, err := old.Exec(string(dump)); err != nil {
		t.Fatal(err)
	}
	before := schemaSQL(t, old)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	// Recorded as version 1 as it stood, then upgraded by the later
	// migrations (which add columns to the jobs and archive tables, and
	// the offset_resets table of version 6, the reset leases of version 7
	// the replica tables of version 8, the poll leases of version 9,
	// the body reads of version 10, the issued plans of version 11,
	// the consumer pauses of version 12, the messages in flight of
	// version 14, the status onsets of version 15 and the saved filters
	// of version 16).
	if v := applied(t, s.db.db); len(v) != len(migrations) || v[1] == 0 {
		t.Fatalf("schema_migrations = %v, want versions 1..%d", v, len(migrations))
	}
	after := schemaSQL(t, s.db.db)
	for _, added := range []string{"schema_migrations", "offset_resets", "offset_resets_group", "offset_reset_leases", "dlq_leases", "dlq_leases_job", "poll_leases", "body_reads", "body_reads_dlq", "offset_plans", "offset_plans_created", "consumer_pauses", "inflight", "inflight_dlq", "status_onsets", "saved_filters"} {
		if after[added] == "" {
			t.Errorf("no %s after the upgrade", added)
		}
		delete(after, added)
	}
	if len(after) != len(before) {
		t.Fatalf("schema objects after = %v, before = %v", after, before)
	}
	if !strings.Contains(after["jobs"], "would_move") || !strings.Contains(after["jobs"], "note") {
		t.Fatalf("jobs after the upgrade = %s", after["jobs"])
	}
	if !strings.Contains(after["archive"], "deleted INTEGER NOT NULL DEFAULT 1") {
		t.Fatalf("archive after the upgrade = %s", after["archive"])
	}
	for name, stmt := range before {
		if name == "jobs" || name == "archive" {
			continue
		}
		if after[name] != stmt {
			t.Errorf("%s changed:\n%s\nwas\n%s", name, after[name], stmt)
		}
	}

	if !slices.Equal(s.Interrupted, []string{"job-run"}) {
		t.Fatalf("interrupted = %v", s.Interrupted)
	}
	run, err := s.Job(ctx, "job-run")
	wantProgress := dlqreplay.Progress{Depth: 20, ToMove: 10, Moved: 2, Failed: 1, Remaining: 7, Duplicates: 1}
	if err != nil || run.State != dlqreplay.StateInterrupted || run.Action != dlqreplay.ActionReplay || run.Who != "ann" ||
		run.DLQ != "rabbitmq:main:/:orders.dlq" || !run.Selection.All || run.Selection.Limit != 10 ||
		run.Target.Kind != dlqreplay.TargetOriginal || run.Progress != wantProgress || !run.Created.Equal(time.UnixMilli(1764000000000)) {
		t.Fatalf("job-run = %+v, %v", run, err)
	}
	del, err := s.Job(ctx, "job-del")
	if err != nil || del.State != dlqreplay.StateSucceeded || del.Action != dlqreplay.ActionDelete ||
		!slices.Equal(del.Selection.IDs, []string{"m1"}) || !del.Finished.Equal(time.UnixMilli(1764000120000)) {
		t.Fatalf("job-del = %+v, %v", del, err)
	}
	jobs, err := s.Jobs(ctx, dlqreplay.JobQuery{Limit: 10})
	if err != nil || len(jobs) != 2 || jobs[0].ID != "job-del" {
		t.Fatalf("jobs = %+v, %v", jobs, err)
	}

	outs, err := s.Outcomes(ctx, "job-run")
	wantOuts := []dlqreplay.Outcome{
		{MessageID: "a", Result: dlqreplay.ResultMoved, Target: "/orders", Source: "orders", PossibleDuplicate: true},
		{MessageID: "b", Result: dlqreplay.ResultMoved, Target: "/orders", Source: "orders"},
		{MessageID: "c", Result: dlqreplay.ResultFailed, Reason: "not confirmed", Source: "orders"},
	}
	if err != nil || !slices.Equal(outs, wantOuts) {
		t.Fatalf("outcomes = %+v, %v", outs, err)
	}
	done, err := s.Done(ctx, "kafka:prod::orders.DLT", nil, dlqreplay.ResultMoved, dlqreplay.ResultDeleted)
	if err != nil || len(done) != 1 || !done["m1"] {
		t.Fatalf("done = %v, %v", done, err)
	}

	arch, err := s.Archived(ctx, dlqreplay.ArchiveQuery{DLQ: "kafka:prod::orders.DLT"})
	if err != nil || len(arch) != 1 {
		t.Fatalf("archived = %+v, %v", arch, err)
	}
	a := arch[0]
	wantHeaders := []queue.Header{{Key: "k\xff", Value: []byte{0xff, 0x00, 0xfe}, Kind: "bytes"}, {Key: "retries", Value: []byte("3")}}
	if a.ID != 1 || a.JobID != "job-del" || a.MessageID != "m1" || string(a.Key) != "k1" ||
		!bytes.Equal(a.Body, []byte{0xff, 0x00, 0xfe}) || a.Properties["offset"] != "41" ||
		a.RestoredTo != "kafka:prod::orders" || a.RestoredAt.IsZero() || a.ArchivedAt.IsZero() || !a.Deleted ||
		len(a.Headers) != 2 || a.Headers[0].Key != wantHeaders[0].Key || !bytes.Equal(a.Headers[0].Value, wantHeaders[0].Value) ||
		a.Headers[0].Kind != "bytes" || a.Headers[1].Key != "retries" || string(a.Headers[1].Value) != "3" || a.Headers[1].Kind != "" {
		t.Fatalf("archived = %+v", a)
	}
	// The archive keeps numbering after the old rows; a new row is not
	// deleted until marked, while the old row, archived before removals
	// were recorded, stays restorable as it was.
	ids, err := s.Archive(ctx, []dlqreplay.Archived{{JobID: "job-del", DLQ: a.DLQ, MessageID: "m2"}})
	if err != nil || !slices.Equal(ids, []int64{2}) {
		t.Fatalf("archive after upgrade = %v, %v", ids, err)
	}
	arch, err = s.Archived(ctx, dlqreplay.ArchiveQuery{DLQ: a.DLQ})
	if err != nil || len(arch) != 2 || !arch[0].Deleted || arch[1].Deleted {
		t.Fatalf("archived after a new archive = %+v, %v", arch, err)
	}
	// The old row got a random restore id from migration 4, the new one
	// from Archive; neither is the row's number, which every store reuses.
	if r0, r1 := arch[0].RestoreID, arch[1].RestoreID; len(r0) != 32 || len(r1) != 32 || r0 == r1 {
		t.Fatalf("restore ids %q and %q, want two distinct random ids", r0, r1)
	}
	if err := s.MarkDeleted(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if arch, err = s.Archived(ctx, dlqreplay.ArchiveQuery{IDs: ids}); err != nil || len(arch) != 1 || !arch[0].Deleted {
		t.Fatalf("archived after MarkDeleted = %+v, %v", arch, err)
	}
}

func TestOpenFreshStoreAppliesEveryMigration(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir, migrations)
	defer func() { _ = s.Close() }()
	v := applied(t, s.db.db)
	if len(v) != len(migrations) {
		t.Fatalf("schema_migrations = %v, want %d versions", v, len(migrations))
	}
	for _, m := range migrations {
		if v[m.version] == 0 {
			t.Errorf("version %d (%s) not recorded", m.version, m.what)
		}
	}
	objs := schemaSQL(t, s.db.db)
	for _, name := range []string{"jobs", "outcomes", "archive", "jobs_dlq", "outcomes_msg", "archive_dlq"} {
		if objs[name] == "" {
			t.Errorf("%s missing", name)
		}
	}
}

// probe is a migration that fails if it runs twice (no IF NOT EXISTS) and
// leaves a row that counts its runs.
var probe = migration{version: 2, what: "probe", sql: `CREATE TABLE probe (n INTEGER NOT NULL); INSERT INTO probe VALUES (1);`}

func TestOpenAppliesNewMigrationsOnceInOrder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := mustOpen(t, dir, migrations)
	j := dlqreplay.Job{ID: "j", DLQ: "kafka:c::t.DLT", Action: dlqreplay.ActionReplay, State: dlqreplay.StateSucceeded, Created: time.Now()}
	if err := s.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	v1 := applied(t, s.db.db)
	_ = s.Close()

	next := probe
	next.version = len(migrations) + 1
	ms := append(slices.Clone(migrations), next)
	for range 3 {
		s := mustOpen(t, dir, ms)
		v := applied(t, s.db.db)
		var runs int
		if err := s.db.db.QueryRow(`SELECT COUNT(*) FROM probe`).Scan(&runs); err != nil {
			t.Fatal(err)
		}
		if runs != 1 || len(v) != next.version || v[1] != v1[1] || v[next.version] == 0 {
			t.Fatalf("probe ran %d times; schema_migrations = %v (version 1 was %v)", runs, v, v1)
		}
		if got, err := s.Job(ctx, "j"); err != nil || got.State != dlqreplay.StateSucceeded {
			t.Fatalf("job after migration = %+v, %v", got, err)
		}
		_ = s.Close()
	}
}

func TestOpenRollsBackAFailedMigration(t *testing.T) {
	dir := t.TempDir()
	bad := migration{version: 2, what: "half", sql: `CREATE TABLE half (n INTEGER); INSERT INTO nosuch VALUES (1);`}
	if _, err := open(context.Background(), dir, []migration{migrations[0], bad}); err == nil {
		t.Fatal("a failing migration opened")
	}
	db := rawDB(t, dir)
	if v := applied(t, db); len(v) != 1 || v[1] == 0 {
		t.Fatalf("schema_migrations = %v, want version 1 only", v)
	}
	if _, ok := schemaSQL(t, db)["half"]; ok {
		t.Fatal("the failed migration's table was kept")
	}
}

func TestOpenRefusesNewerStore(t *testing.T) {
	dir := t.TempDir()
	newer := probe
	newer.version = len(migrations) + 1
	s := mustOpen(t, dir, append(slices.Clone(migrations), newer))
	_ = s.Close()
	_, err := Open(context.Background(), dir)
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open of a version %d store = %v, want ErrNewerSchema", newer.version, err)
	}
	t.Log(err)
	if v := applied(t, rawDB(t, dir)); len(v) != newer.version {
		t.Fatalf("schema_migrations after refusal = %v", v)
	}
}

// TestOpenCompletesAPartialPreVersionsStore: a crash while the first
// release created its tables left some of them; migration 1 adds the rest.
func TestOpenCompletesAPartialPreVersionsStore(t *testing.T) {
	dir := t.TempDir()
	db := rawDB(t, dir)
	if _, err := db.Exec(`CREATE TABLE jobs (
	id TEXT PRIMARY KEY, dlq TEXT NOT NULL, action TEXT NOT NULL, who TEXT NOT NULL,
	dry_run INTEGER NOT NULL, selection TEXT NOT NULL, target TEXT NOT NULL,
	state TEXT NOT NULL, error TEXT NOT NULL DEFAULT '',
	created INTEGER NOT NULL, finished INTEGER NOT NULL DEFAULT 0,
	depth INTEGER NOT NULL DEFAULT 0, to_move INTEGER NOT NULL DEFAULT 0, moved INTEGER NOT NULL DEFAULT 0,
	failed INTEGER NOT NULL DEFAULT 0, skipped INTEGER NOT NULL DEFAULT 0,
	remaining INTEGER NOT NULL DEFAULT 0, duplicates INTEGER NOT NULL DEFAULT 0)`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	s := mustOpen(t, dir, migrations)
	defer func() { _ = s.Close() }()
	if _, ok := schemaSQL(t, s.db.db)["archive"]; !ok {
		t.Fatal("archive table missing")
	}
	if v := applied(t, s.db.db); len(v) != len(migrations) {
		t.Fatalf("schema_migrations = %v", v)
	}
}

func TestMigrationsAreNumberedInOrder(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 || m.sql == "" || m.what == "" {
			t.Errorf("migration %d = version %d %q: want version %d with SQL and a description", i, m.version, m.what, i+1)
		}
	}
}

// TestOpenDoesNotRerunVersion1OnPreVersionsStore: a store from before
// versions is recorded as version 1, not migrated to it; here migration 1
// is SQL that fails, so running it would fail the Open.
func TestOpenDoesNotRerunVersion1OnPreVersionsStore(t *testing.T) {
	dir := t.TempDir()
	db := rawDB(t, dir)
	if _, err := db.Exec(schemaV1); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	poisoned := []migration{{version: 1, what: "must not run", sql: `INSERT INTO nosuch VALUES (1)`}}
	s := mustOpen(t, dir, poisoned)
	defer func() { _ = s.Close() }()
	if v := applied(t, s.db.db); len(v) != 1 || v[1] == 0 {
		t.Fatalf("schema_migrations = %v", v)
	}
	if _, err := open(context.Background(), t.TempDir(), poisoned); err == nil {
		t.Fatal("a fresh store did not run migration 1")
	}
}

// TestConcurrentOpensMigrateOnce: processes starting on one data
// directory at the same time apply each migration once, and none fails.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	dir := t.TempDir()
	ms := []migration{migrations[0], probe}
	errs := make(chan error, 4)
	for range cap(errs) {
		go func() {
			s, err := open(context.Background(), dir, ms)
			if err == nil {
				err = s.Close()
			}
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	db := rawDB(t, dir)
	var runs int
	if err := db.QueryRow(`SELECT COUNT(*) FROM probe`).Scan(&runs); err != nil || runs != 1 {
		t.Fatalf("probe ran %d times, %v", runs, err)
	}
}

// TestApplySkipsAMigrationAnotherProcessApplied: two processes both read
// version 1, then both try to apply version 2; the second finds it done.
func TestApplySkipsAMigrationAnotherProcessApplied(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	_ = mustOpen(t, dir, migrations[:1]).Close()
	var dbs [2]*sql.DB
	for i := range dbs {
		db, err := openDB(filepath.Join(dir, FileName))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = db.Close() }()
		if v, err := baseline(ctx, conn{db: db}, probe.version); err != nil || v != 1 {
			t.Fatalf("baseline = %d, %v", v, err)
		}
		dbs[i] = db
	}
	for _, db := range dbs {
		if err := apply(ctx, conn{db: db}, probe); err != nil {
			t.Fatal(err)
		}
	}
	var runs int
	if err := dbs[0].QueryRow(`SELECT COUNT(*) FROM probe`).Scan(&runs); err != nil || runs != 1 {
		t.Fatalf("probe ran %d times, %v", runs, err)
	}
}
