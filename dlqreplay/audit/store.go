// Package audit is the durable record of every DLQ job and every archived
// message, kept in an embedded SQLite database (modernc.org/sqlite, pure Go)
// in the data directory.
//
// The store is written before the broker is told anything irreversible: a
// job row exists before its first message moves, per-message outcomes are
// flushed in batches while it runs, and a deleted message is archived (and
// fsynced, synchronous=FULL) before its DLQ copy is acknowledged. A job that
// was still running when the process died is marked interrupted the next
// time the store is opened; its counts and outcomes are what was flushed.
package audit

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// FileName is the database file's name inside the data directory.
const FileName = "queuewatch-audit.db"

// ErrNotFound is returned when a job or archived message does not exist.
var ErrNotFound = errors.New("not found")

// Job states stored in the audit log.
const (
	StateRunning     = "running"
	StateSucceeded   = "succeeded"
	StateFailed      = "failed"
	StateCancelled   = "cancelled"
	StateInterrupted = "interrupted"
)

// Job is one job's row: who ran what against which DLQ and how it went.
// Selection and Target are the caller's JSON.
type Job struct {
	ID        string
	DLQ       string
	Action    string
	Who       string
	DryRun    bool
	Selection json.RawMessage
	Target    json.RawMessage
	State     string
	Error     string
	Created   time.Time
	Finished  time.Time
	Depth     int64
	ToMove    int64
	Moved     int64
	Failed    int64
	Skipped   int64
	Remaining int64
	// Duplicates counts messages that may now exist both in the DLQ and
	// in the target (the DLQ ack's fate is unknown after a fault).
	Duplicates int64
}

// Outcome is what happened to one message in a job.
type Outcome struct {
	MessageID string
	Result    string
	Target    string
	Reason    string
	Source    string
	// PossibleDuplicate is set when the copy reached the target but the
	// original may still be in the DLQ.
	PossibleDuplicate bool
}

// Archived is a message saved before it was deleted from a DLQ.
type Archived struct {
	ID         int64
	JobID      string
	DLQ        string
	MessageID  string
	ArchivedAt time.Time
	Properties map[string]string
	Headers    []Header
	Key        []byte
	Body       []byte
	RestoredAt time.Time
	RestoredTo string
}

// Header is an archived header; values are raw bytes (base64 in JSON), so
// binary and invalid UTF-8 survive the round trip.
type Header struct {
	Key   []byte `json:"k"`
	Value []byte `json:"v"`
	Kind  string `json:"t,omitempty"`
}

// Store is the audit database. It is safe for concurrent use.
type Store struct {
	db *sql.DB
	// Interrupted lists the jobs found running when the store was opened.
	Interrupted []string
}

const schema = `
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

// Open opens (creating if needed) the store in dir and marks jobs left
// running by a previous process as interrupted.
func Open(ctx context.Context, dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, FileName)
	// synchronous(FULL): an archive must be on disk before the DLQ ack.
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open audit store %s: %w", path, err)
	}
	// One connection serialises writers; SQLite allows only one anyway.
	db.SetMaxOpenConns(1)
	s := &Store{db: db}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("create audit schema in %s: %w", path, err)
	}
	if err := s.markInterrupted(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) markInterrupted(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM jobs WHERE state = ?`, StateRunning)
	if err != nil {
		return fmt.Errorf("find interrupted jobs: %w", err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			_ = rows.Close()
			return fmt.Errorf("find interrupted jobs: %w", err)
		}
		s.Interrupted = append(s.Interrupted, id)
	}
	_ = rows.Close()
	_, err = s.db.ExecContext(ctx, `UPDATE jobs SET state = ?, finished = ?,
		error = CASE WHEN error = '' THEN 'queuewatch stopped while the job ran' ELSE error END
		WHERE state = ?`, StateInterrupted, time.Now().UnixMilli(), StateRunning)
	if err != nil {
		return fmt.Errorf("mark interrupted jobs: %w", err)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// CreateJob records a job before it starts.
func (s *Store) CreateJob(ctx context.Context, j Job) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO jobs (id, dlq, action, who, dry_run, selection, target, state, created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.ID, j.DLQ, j.Action, j.Who, j.DryRun, rawOr(j.Selection), rawOr(j.Target), j.State, j.Created.UnixMilli())
	if err != nil {
		return fmt.Errorf("record job %s: %w", j.ID, err)
	}
	return nil
}

func rawOr(b json.RawMessage) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}

// UpdateJob stores a job's counts, state and error, and appends outcomes
// numbered from firstSeq, in one transaction.
func (s *Store) UpdateJob(ctx context.Context, j Job, firstSeq int, outcomes []Outcome) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("update job %s: %w", j.ID, err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	var finished int64
	if !j.Finished.IsZero() {
		finished = j.Finished.UnixMilli()
	}
	if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = ?, error = ?, finished = ?, depth = ?, to_move = ?, moved = ?,
		failed = ?, skipped = ?, remaining = ?, duplicates = ? WHERE id = ?`,
		j.State, j.Error, finished, j.Depth, j.ToMove, j.Moved, j.Failed, j.Skipped, j.Remaining, j.Duplicates, j.ID); err != nil {
		return fmt.Errorf("update job %s: %w", j.ID, err)
	}
	if len(outcomes) > 0 {
		st, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO outcomes
			(job_id, seq, dlq, message_id, result, target, reason, source, possible_duplicate) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return fmt.Errorf("record outcomes of %s: %w", j.ID, err)
		}
		defer func() { _ = st.Close() }()
		for i, o := range outcomes {
			if _, err := st.ExecContext(ctx, j.ID, firstSeq+i, j.DLQ, o.MessageID, o.Result, o.Target, o.Reason, o.Source, o.PossibleDuplicate); err != nil {
				return fmt.Errorf("record outcomes of %s: %w", j.ID, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("update job %s: %w", j.ID, err)
	}
	return nil
}

const jobCols = `id, dlq, action, who, dry_run, selection, target, state, error, created, finished,
	depth, to_move, moved, failed, skipped, remaining, duplicates`

func scanJob(sc interface{ Scan(...any) error }) (Job, error) {
	var j Job
	var sel, tgt string
	var created, finished int64
	err := sc.Scan(&j.ID, &j.DLQ, &j.Action, &j.Who, &j.DryRun, &sel, &tgt, &j.State, &j.Error, &created, &finished,
		&j.Depth, &j.ToMove, &j.Moved, &j.Failed, &j.Skipped, &j.Remaining, &j.Duplicates)
	if err != nil {
		return j, err
	}
	j.Selection, j.Target = json.RawMessage(sel), json.RawMessage(tgt)
	j.Created = time.UnixMilli(created)
	if finished > 0 {
		j.Finished = time.UnixMilli(finished)
	}
	return j, nil
}

// Job returns one job; ErrNotFound when there is none.
func (s *Store) Job(ctx context.Context, id string) (Job, error) {
	j, err := scanJob(s.db.QueryRowContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return j, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return j, fmt.Errorf("read job %s: %w", id, err)
	}
	return j, nil
}

// Jobs lists the newest jobs first; dlq filters by DLQ ID when not empty.
func (s *Store) Jobs(ctx context.Context, dlq string, limit int) ([]Job, error) {
	if limit <= 0 {
		limit = 100
	}
	q := `SELECT ` + jobCols + ` FROM jobs`
	args := []any{}
	if dlq != "" {
		q += ` WHERE dlq = ?`
		args = append(args, dlq)
	}
	q += ` ORDER BY created DESC, id DESC LIMIT ?`
	rows, err := s.db.QueryContext(ctx, q, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// Outcomes returns a job's per-message outcomes in processing order.
func (s *Store) Outcomes(ctx context.Context, jobID string) ([]Outcome, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT message_id, result, target, reason, source, possible_duplicate
		FROM outcomes WHERE job_id = ? ORDER BY seq`, jobID)
	if err != nil {
		return nil, fmt.Errorf("read outcomes of %s: %w", jobID, err)
	}
	defer func() { _ = rows.Close() }()
	var out []Outcome
	for rows.Next() {
		var o Outcome
		if err := rows.Scan(&o.MessageID, &o.Result, &o.Target, &o.Reason, &o.Source, &o.PossibleDuplicate); err != nil {
			return nil, fmt.Errorf("read outcomes of %s: %w", jobID, err)
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// Done reports which of ids (all when ids is nil) already left dlq in an
// earlier job with one of the given results. Kafka uses it to skip records
// that a partial replay sent but could not move the cursor past.
func (s *Store) Done(ctx context.Context, dlq string, ids []string, results ...string) (map[string]bool, error) {
	out := map[string]bool{}
	if ids == nil {
		args := []any{dlq}
		for _, r := range results {
			args = append(args, r)
		}
		rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT message_id FROM outcomes WHERE dlq = ? AND result IN (?`+
			strings.Repeat(",?", len(results)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("look up replayed messages: %w", err)
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return nil, fmt.Errorf("look up replayed messages: %w", err)
			}
			out[id] = true
		}
		return out, rows.Err()
	}
	for len(ids) > 0 {
		n := min(len(ids), 400)
		batch := ids[:n]
		ids = ids[n:]
		args := []any{dlq}
		for _, id := range batch {
			args = append(args, id)
		}
		for _, r := range results {
			args = append(args, r)
		}
		q := `SELECT DISTINCT message_id FROM outcomes WHERE dlq = ? AND message_id IN (?` +
			strings.Repeat(",?", len(batch)-1) + `) AND result IN (?` + strings.Repeat(",?", len(results)-1) + `)`
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("look up replayed messages: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				_ = rows.Close()
				return nil, fmt.Errorf("look up replayed messages: %w", err)
			}
			out[id] = true
		}
		_ = rows.Close()
	}
	return out, nil
}

// Archive saves messages before they are deleted, in one transaction, and
// returns their archive ids.
func (s *Store) Archive(ctx context.Context, msgs []Archived) ([]int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("archive messages: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	st, err := tx.PrepareContext(ctx, `INSERT INTO archive (job_id, dlq, message_id, archived_at, properties, headers, key, body)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return nil, fmt.Errorf("archive messages: %w", err)
	}
	defer func() { _ = st.Close() }()
	ids := make([]int64, 0, len(msgs))
	for _, m := range msgs {
		props, _ := json.Marshal(m.Properties)
		hdrs, _ := json.Marshal(m.Headers)
		body := m.Body
		if body == nil {
			body = []byte{}
		}
		res, err := st.ExecContext(ctx, m.JobID, m.DLQ, m.MessageID, time.Now().UnixMilli(), string(props), string(hdrs), m.Key, body)
		if err != nil {
			return nil, fmt.Errorf("archive message %s: %w", m.MessageID, err)
		}
		id, _ := res.LastInsertId()
		ids = append(ids, id)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("archive messages: %w", err)
	}
	return ids, nil
}

// ArchiveQuery selects archived messages: by ids, else by DLQ and/or job.
type ArchiveQuery struct {
	IDs   []int64
	DLQ   string
	JobID string
	Limit int
}

// Archived returns archived messages, oldest first.
func (s *Store) Archived(ctx context.Context, q ArchiveQuery) ([]Archived, error) {
	where, args := []string{"1=1"}, []any{}
	if len(q.IDs) > 0 {
		where = append(where, "id IN (?"+strings.Repeat(",?", len(q.IDs)-1)+")")
		for _, id := range q.IDs {
			args = append(args, id)
		}
	}
	if q.DLQ != "" {
		where, args = append(where, "dlq = ?"), append(args, q.DLQ)
	}
	if q.JobID != "" {
		where, args = append(where, "job_id = ?"), append(args, q.JobID)
	}
	if q.Limit <= 0 {
		q.Limit = 1000
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, job_id, dlq, message_id, archived_at, properties, headers, key, body,
		restored_at, restored_to FROM archive WHERE `+strings.Join(where, " AND ")+` ORDER BY id LIMIT ?`, append(args, q.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("read archive: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []Archived
	for rows.Next() {
		var a Archived
		var at, restored int64
		var props, hdrs string
		if err := rows.Scan(&a.ID, &a.JobID, &a.DLQ, &a.MessageID, &at, &props, &hdrs, &a.Key, &a.Body, &restored, &a.RestoredTo); err != nil {
			return nil, fmt.Errorf("read archive: %w", err)
		}
		a.ArchivedAt = time.UnixMilli(at)
		if restored > 0 {
			a.RestoredAt = time.UnixMilli(restored)
		}
		if err := json.Unmarshal([]byte(props), &a.Properties); err != nil {
			return nil, fmt.Errorf("read archived message %d: %w", a.ID, err)
		}
		if err := json.Unmarshal([]byte(hdrs), &a.Headers); err != nil {
			return nil, fmt.Errorf("read archived message %d: %w", a.ID, err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// MarkRestored records that archived messages were published to target.
func (s *Store) MarkRestored(ctx context.Context, ids []int64, target string) error {
	if len(ids) == 0 {
		return nil
	}
	args := []any{time.Now().UnixMilli(), target}
	for _, id := range ids {
		args = append(args, id)
	}
	_, err := s.db.ExecContext(ctx, `UPDATE archive SET restored_at = ?, restored_to = ? WHERE id IN (?`+
		strings.Repeat(",?", len(ids)-1)+`)`, args...)
	if err != nil {
		return fmt.Errorf("mark restored: %w", err)
	}
	return nil
}
