package store

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"modernc.org/sqlite" // also registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// FileName is the database file's name inside the data directory.
const FileName = "queuewatch-audit.db"

// Store is the audit database. It is safe for concurrent use.
type Store struct {
	db conn
	// Interrupted lists the jobs found running when the store was opened:
	// on SQLite every running job (the store is this process's alone), on
	// PostgreSQL those whose owner stopped heartbeating (see replicas.go).
	Interrupted []string

	replica  string
	leaseTTL time.Duration
}

var _ dlqreplay.Store = (*Store)(nil)

// Open opens (creating if needed) the store in dir, brings its schema to
// the current version and marks jobs left running by a previous process
// as interrupted. A store written by a newer queuewatch is refused with
// ErrNewerSchema.
func Open(ctx context.Context, dir string) (*Store, error) {
	return open(ctx, dir, migrations)
}

func open(ctx context.Context, dir string, ms []migration) (*Store, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, FileName)
	db, err := openDB(path)
	if err != nil {
		return nil, err
	}
	if err := connect(ctx, db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open audit store %s: %w", path, err)
	}
	s := &Store{db: conn{db: db}, replica: newReplicaID(), leaseTTL: DefaultLeaseTTL}
	if err := migrate(ctx, s.db, ms); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("schema of %s: %w", path, err)
	}
	if err := s.markInterrupted(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

func openDB(path string) (*sql.DB, error) {
	// synchronous(FULL): an archive must be on disk before the DLQ ack.
	// _txlock=immediate: every transaction here writes, so it takes the
	// write lock up front and waits (busy_timeout) instead of failing
	// when another process wrote since it began reading.
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open audit store %s: %w", path, err)
	}
	// One connection serialises writers; SQLite allows only one anyway.
	db.SetMaxOpenConns(1)
	return db, nil
}

// connect makes the first connection. Its journal_mode(WAL) pragma can
// answer SQLITE_BUSY at once, without waiting busy_timeout, while another
// process switches a new database to WAL; that is retried for as long as
// busy_timeout would have waited.
func connect(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := db.PingContext(ctx)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (s *Store) markInterrupted(ctx context.Context) error {
	if s.db.pg {
		// Other replicas' jobs run on: only a job whose owner stopped
		// heartbeating was interrupted.
		ids, err := s.InterruptStale(ctx)
		s.Interrupted = ids
		return err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM jobs WHERE state = ?`, string(dlqreplay.StateRunning))
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
		WHERE state = ?`, string(dlqreplay.StateInterrupted), time.Now().UnixMilli(), string(dlqreplay.StateRunning))
	if err != nil {
		return fmt.Errorf("mark interrupted jobs: %w", err)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.db.Close() }

// CreateJob records a job before it starts. Selection and Target are
// kept as their JSON, the selection's ids in a column of their own.
func (s *Store) CreateJob(ctx context.Context, j dlqreplay.Job) error {
	sel, ids, tgt, err := jobJSON(j)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO jobs (id, dlq, action, mode, who, dry_run, selection, selection_ids, target, state, created, owner, heartbeat)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.ID, j.DLQ, string(j.Action), string(j.Mode), j.Who, j.DryRun, sel, ids, tgt, string(j.State), j.Created.UnixMilli(),
		s.replica, time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("record job %s: %w", j.ID, err)
	}
	return nil
}

func jobJSON(j dlqreplay.Job) (sel, ids, tgt string, err error) {
	s, err := json.Marshal(j.Selection.Summary())
	if err != nil {
		return "", "", "", fmt.Errorf("record job %s selection: %w", j.ID, err)
	}
	if len(j.Selection.IDs) > 0 {
		b, err := json.Marshal(j.Selection.IDs)
		if err != nil {
			return "", "", "", fmt.Errorf("record job %s selection: %w", j.ID, err)
		}
		ids = string(b)
	}
	t, err := json.Marshal(j.Target)
	if err != nil {
		return "", "", "", fmt.Errorf("record job %s target: %w", j.ID, err)
	}
	return string(s), ids, string(t), nil
}

// UpdateJob stores a job's counts, state and error, and appends outcomes
// numbered from firstSeq, in one transaction.
func (s *Store) UpdateJob(ctx context.Context, j dlqreplay.Job, firstSeq int, outcomes []dlqreplay.Outcome) error {
	tx, err := s.db.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("update job %s: %w", j.ID, err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	var finished int64
	if !j.Finished.IsZero() {
		finished = j.Finished.UnixMilli()
	}
	p := j.Progress
	// A job another replica marked interrupted stays so: its owner lost
	// its lease, and the job must stop rather than write over the verdict.
	res, err := tx.ExecContext(ctx, `UPDATE jobs SET state = ?, error = ?, note = ?, finished = ?, depth = ?, to_move = ?,
		moved = ?, would_move = ?, failed = ?, skipped = ?, remaining = ?, duplicates = ?, heartbeat = ?
		WHERE id = ? AND state <> ?`,
		string(j.State), j.Error, j.Note, finished, p.Depth, p.ToMove, p.Moved, p.WouldMove, p.Failed, p.Skipped,
		p.Remaining, p.Duplicates, time.Now().UnixMilli(), j.ID, string(dlqreplay.StateInterrupted))
	if err != nil {
		return fmt.Errorf("update job %s: %w", j.ID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("update job %s: %w", j.ID, dlqreplay.ErrLeaseLost)
	}
	if settled(j.State) {
		// InFlight reads only interrupted and running jobs' records: a job
		// that ended any other way settled what it sent, and its records,
		// one per copy, would only grow the table.
		if _, err := tx.ExecContext(ctx, `DELETE FROM inflight WHERE job_id = ?`, j.ID); err != nil {
			return fmt.Errorf("update job %s: %w", j.ID, err)
		}
	}
	if len(outcomes) > 0 {
		st, err := tx.PrepareContext(ctx, `INSERT INTO outcomes
			(job_id, seq, dlq, message_id, result, target, reason, source, possible_duplicate) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (job_id, seq) DO UPDATE SET dlq = excluded.dlq, message_id = excluded.message_id,
			result = excluded.result, target = excluded.target, reason = excluded.reason, source = excluded.source,
			possible_duplicate = excluded.possible_duplicate`)
		if err != nil {
			return fmt.Errorf("record outcomes of %s: %w", j.ID, err)
		}
		defer func() { _ = st.Close() }()
		for i, o := range outcomes {
			if _, err := st.ExecContext(ctx, j.ID, firstSeq+i, j.DLQ, o.MessageID, string(o.Result), o.Target, o.Reason,
				o.Source, o.PossibleDuplicate); err != nil {
				return fmt.Errorf("record outcomes of %s: %w", j.ID, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("update job %s: %w", j.ID, err)
	}
	return nil
}

// settled reports whether a job in state has ended with every copy it
// sent settled: anything but running, or interrupted by a stop.
func settled(state dlqreplay.JobState) bool {
	return state == dlqreplay.StateSucceeded || state == dlqreplay.StateFailed || state == dlqreplay.StateCancelled
}

const jobCols = `id, dlq, action, who, dry_run, selection, target, state, error, note, created, finished,
	depth, to_move, moved, would_move, failed, skipped, remaining, duplicates, mode`

// scanJob reads a row of jobCols, then of more.
func scanJob(sc interface{ Scan(...any) error }, more ...any) (dlqreplay.Job, error) {
	var j dlqreplay.Job
	var action, state, sel, tgt, mode string
	var created, finished int64
	p := &j.Progress
	err := sc.Scan(append([]any{
		&j.ID, &j.DLQ, &action, &j.Who, &j.DryRun, &sel, &tgt, &state, &j.Error, &j.Note, &created, &finished,
		&p.Depth, &p.ToMove, &p.Moved, &p.WouldMove, &p.Failed, &p.Skipped, &p.Remaining, &p.Duplicates, &mode,
	}, more...)...)
	if err != nil {
		return j, err
	}
	j.Action, j.State, j.Mode = dlqreplay.Action(action), dlqreplay.JobState(state), dlqreplay.Mode(mode)
	if err := json.Unmarshal([]byte(sel), &j.Selection); err != nil {
		return j, fmt.Errorf("job %s selection: %w", j.ID, err)
	}
	if err := json.Unmarshal([]byte(tgt), &j.Target); err != nil {
		return j, fmt.Errorf("job %s target: %w", j.ID, err)
	}
	j.Created = time.UnixMilli(created)
	if finished > 0 {
		j.Finished = time.UnixMilli(finished)
	}
	return j, nil
}

// Job returns one job with its selection's ids; the error wraps
// dlqreplay.ErrJobNotFound when there is none.
func (s *Store) Job(ctx context.Context, id string) (dlqreplay.Job, error) {
	var ids string
	j, err := scanJob(s.db.QueryRowContext(ctx, `SELECT `+jobCols+`, selection_ids FROM jobs WHERE id = ?`, id), &ids)
	if errors.Is(err, sql.ErrNoRows) {
		return j, fmt.Errorf("job %s: %w", id, dlqreplay.ErrJobNotFound)
	}
	if err != nil {
		return j, fmt.Errorf("read job %s: %w", id, err)
	}
	if ids != "" {
		if err := json.Unmarshal([]byte(ids), &j.Selection.IDs); err != nil {
			return j, fmt.Errorf("job %s selection: %w", id, err)
		}
	}
	return j, nil
}

// Jobs lists the jobs jq selects, newest first.
func (s *Store) Jobs(ctx context.Context, jq dlqreplay.JobQuery) ([]dlqreplay.Job, error) {
	limit := jq.Limit
	if limit <= 0 {
		limit = 100
	}
	where, args, none, err := s.dlqWhere(ctx, "jobs", jq.DLQ, jq.Visible)
	if err != nil || none {
		return nil, err
	}
	q := `SELECT ` + jobCols + ` FROM jobs WHERE ` + strings.Join(where, " AND ") + ` ORDER BY created DESC, id DESC LIMIT ?`
	rows, err := s.db.QueryContext(ctx, q, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []dlqreplay.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		j.Selection = j.Selection.Summary() // a row from before selection_ids holds its ids inline
		out = append(out, j)
	}
	return out, rows.Err()
}

// Outcomes returns a job's per-message outcomes in processing order.
func (s *Store) Outcomes(ctx context.Context, jobID string) ([]dlqreplay.Outcome, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT message_id, result, target, reason, source, possible_duplicate
		FROM outcomes WHERE job_id = ? ORDER BY seq`, jobID)
	if err != nil {
		return nil, fmt.Errorf("read outcomes of %s: %w", jobID, err)
	}
	defer func() { _ = rows.Close() }()
	var out []dlqreplay.Outcome
	for rows.Next() {
		var o dlqreplay.Outcome
		var result string
		if err := rows.Scan(&o.MessageID, &result, &o.Target, &o.Reason, &o.Source, &o.PossibleDuplicate); err != nil {
			return nil, fmt.Errorf("read outcomes of %s: %w", jobID, err)
		}
		o.Result = dlqreplay.Result(result)
		out = append(out, o)
	}
	return out, rows.Err()
}

// Done reports which of ids (all when ids is nil) already left dlq in an
// earlier job with one of the given results. Kafka uses it to skip records
// that a partial replay sent but could not move the cursor past.
func (s *Store) Done(ctx context.Context, dlq string, ids []string, results ...dlqreplay.Result) (map[string]bool, error) {
	out := map[string]bool{}
	if len(results) == 0 {
		return out, nil
	}
	resultArgs := make([]any, len(results))
	for i, r := range results {
		resultArgs[i] = string(r)
	}
	inResults := `result IN (?` + strings.Repeat(",?", len(results)-1) + `)`
	if ids == nil {
		err := s.collectIDs(ctx, out, `SELECT DISTINCT message_id FROM outcomes WHERE dlq = ? AND `+inResults,
			append([]any{dlq}, resultArgs...))
		return out, err
	}
	for len(ids) > 0 {
		n := min(len(ids), 400)
		batch := ids[:n]
		ids = ids[n:]
		args := []any{dlq}
		for _, id := range batch {
			args = append(args, id)
		}
		q := `SELECT DISTINCT message_id FROM outcomes WHERE dlq = ? AND message_id IN (?` +
			strings.Repeat(",?", len(batch)-1) + `) AND ` + inResults
		if err := s.collectIDs(ctx, out, q, append(args, resultArgs...)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// collectIDs adds the message IDs q selects to out.
func (s *Store) collectIDs(ctx context.Context, out map[string]bool, q string, args []any) error {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("look up replayed messages: %w", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("look up replayed messages: %w", err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("look up replayed messages: %w", err)
	}
	return nil
}

// storedHeader is a header as the archive keeps it in JSON: key and value
// as raw bytes (base64), so binary and invalid UTF-8 survive the round
// trip. The short names are the on-disk format; they never change.
type storedHeader struct {
	Key   []byte `json:"k"`
	Value []byte `json:"v"`
	Kind  string `json:"t,omitempty"`
}

func headersJSON(hs []queue.Header) (string, error) {
	out := make([]storedHeader, len(hs))
	for i, h := range hs {
		out[i] = storedHeader{Key: []byte(h.Key), Value: h.Value, Kind: h.Kind}
	}
	b, err := json.Marshal(out)
	return string(b), err
}

func parseHeaders(s string) ([]queue.Header, error) {
	var stored []storedHeader
	if err := json.Unmarshal([]byte(s), &stored); err != nil {
		return nil, err
	}
	var out []queue.Header
	for _, h := range stored {
		out = append(out, queue.Header{Key: string(h.Key), Value: h.Value, Kind: h.Kind})
	}
	return out, nil
}

// Archive saves messages before they are deleted, in one transaction, and
// returns their archive ids. ArchivedAt is the time of the call.
func (s *Store) Archive(ctx context.Context, msgs []dlqreplay.Archived) ([]int64, error) {
	tx, err := s.db.BeginTx(ctx)
	if err != nil {
		return nil, fmt.Errorf("archive messages: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	st, err := tx.PrepareContext(ctx, `INSERT INTO archive (job_id, dlq, message_id, archived_at, properties, headers, key, body, deleted, restore_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, FALSE, ?) RETURNING id`)
	if err != nil {
		return nil, fmt.Errorf("archive messages: %w", err)
	}
	defer func() { _ = st.Close() }()
	ids := make([]int64, 0, len(msgs))
	now := time.Now().UnixMilli()
	for _, m := range msgs {
		props, err := json.Marshal(m.Properties)
		if err != nil {
			return nil, fmt.Errorf("archive message %s properties: %w", m.MessageID, err)
		}
		hdrs, err := headersJSON(m.Headers)
		if err != nil {
			return nil, fmt.Errorf("archive message %s headers: %w", m.MessageID, err)
		}
		body := m.Body
		if body == nil {
			body = []byte{}
		}
		var id int64
		if err := st.QueryRowContext(ctx, m.JobID, m.DLQ, m.MessageID, now, string(props), hdrs, m.Key, body, newRestoreID()).Scan(&id); err != nil {
			return nil, fmt.Errorf("archive message %s: %w", m.MessageID, err)
		}
		ids = append(ids, id)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("archive messages: %w", err)
	}
	return ids, nil
}

// newRestoreID is an archived message's random restore id: 128 bits, so
// no two rows share one, whichever instance or data_dir archived them.
func newRestoreID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// idBatch is how many ids one IN (…) list binds: SQLite allows 32766
// bound variables, and a restore may name any number of archive ids.
const idBatch = 500

// batches splits ids into idBatch-sized lists (one empty list for none).
func batches(ids []int64) [][]any {
	out := [][]any{{}}
	for i, id := range ids {
		if i > 0 && i%idBatch == 0 {
			out = append(out, []any{})
		}
		out[len(out)-1] = append(out[len(out)-1], id)
	}
	return out
}

// dlqWhere is the condition of a list of table by its dlq column: that one
// DLQ when dlq is set, and the DLQs visible accepts when it is set; none
// when visible accepts no DLQ of the table, so the list is empty.
func (s *Store) dlqWhere(ctx context.Context, table, dlq string, visible func(string) bool) (where []string, args []any, none bool, err error) {
	where, args = []string{"1=1"}, []any{}
	if dlq != "" {
		where, args = append(where, "dlq = ?"), append(args, dlq)
	}
	if visible != nil {
		dlqs, err := s.visibleDLQs(ctx, table, visible)
		if err != nil || len(dlqs) == 0 {
			return nil, nil, true, err
		}
		where, args = append(where, "dlq IN "+inList(len(dlqs))), append(args, dlqs...)
	}
	return where, args, false, nil
}

// visibleDLQs are the DLQ IDs in table's dlq column that visible accepts.
// Scopes are patterns the database cannot run, and a store holds jobs of
// some thousand DLQs at most: reading the distinct IDs (from the dlq
// index) lets the list query filter before its LIMIT.
func (s *Store) visibleDLQs(ctx context.Context, table string, visible func(string) bool) ([]any, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT dlq FROM `+table)
	if err != nil {
		return nil, fmt.Errorf("list the DLQs of %s: %w", table, err)
	}
	defer func() { _ = rows.Close() }()
	var out []any
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list the DLQs of %s: %w", table, err)
		}
		if visible(id) {
			out = append(out, id)
		}
	}
	return out, rows.Err()
}

func inList(n int) string { return "(?" + strings.Repeat(",?", n-1) + ")" }

// Archived returns archived messages, oldest first. Many IDs are read in
// batches and merged.
func (s *Store) Archived(ctx context.Context, q dlqreplay.ArchiveQuery) ([]dlqreplay.Archived, error) {
	if q.Limit <= 0 {
		q.Limit = 1000
	}
	var out []dlqreplay.Archived
	for _, batch := range batches(q.IDs) {
		got, err := s.archived(ctx, q, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	if len(q.IDs) > idBatch {
		slices.SortFunc(out, func(a, b dlqreplay.Archived) int { return cmp.Compare(a.ID, b.ID) })
		out = slices.CompactFunc(out, func(a, b dlqreplay.Archived) bool { return a.ID == b.ID })
		out = out[:min(len(out), q.Limit)]
	}
	return out, nil
}

// archived runs one query of Archived with ids (none: any id).
func (s *Store) archived(ctx context.Context, q dlqreplay.ArchiveQuery, ids []any) ([]dlqreplay.Archived, error) {
	where, args := []string{"1=1"}, []any{}
	if len(ids) > 0 {
		where, args = append(where, "id IN "+inList(len(ids))), append(args, ids...)
	}
	dlqs, dlqArgs, none, err := s.dlqWhere(ctx, "archive", q.DLQ, q.Visible)
	if err != nil || none {
		return nil, err
	}
	where, args = append(where, dlqs...), append(args, dlqArgs...)
	if q.JobID != "" {
		where, args = append(where, "job_id = ?"), append(args, q.JobID)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, job_id, dlq, message_id, archived_at, properties, headers, key, body,
		restored_at, restored_to, deleted, restore_id FROM archive WHERE `+strings.Join(where, " AND ")+` ORDER BY id LIMIT ?`, append(args, q.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("read archive: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []dlqreplay.Archived
	for rows.Next() {
		a, err := scanArchived(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func scanArchived(rows *sql.Rows) (dlqreplay.Archived, error) {
	var a dlqreplay.Archived
	var at, restored int64
	var props, hdrs string
	if err := rows.Scan(&a.ID, &a.JobID, &a.DLQ, &a.MessageID, &at, &props, &hdrs, &a.Key, &a.Body, &restored, &a.RestoredTo, &a.Deleted, &a.RestoreID); err != nil {
		return a, fmt.Errorf("read archive: %w", err)
	}
	a.ArchivedAt = time.UnixMilli(at)
	if restored > 0 {
		a.RestoredAt = time.UnixMilli(restored)
	}
	if err := json.Unmarshal([]byte(props), &a.Properties); err != nil {
		return a, fmt.Errorf("read archived message %d properties: %w", a.ID, err)
	}
	var err error
	if a.Headers, err = parseHeaders(hdrs); err != nil {
		return a, fmt.Errorf("read archived message %d headers: %w", a.ID, err)
	}
	return a, nil
}

// MarkDeleted records that archived messages were removed from their DLQ.
func (s *Store) MarkDeleted(ctx context.Context, ids []int64) error {
	if err := s.updateIDs(ctx, `UPDATE archive SET deleted = TRUE`, nil, ids); err != nil {
		return fmt.Errorf("mark deleted: %w", err)
	}
	return nil
}

// MarkRestored records that archived messages were published to target.
func (s *Store) MarkRestored(ctx context.Context, ids []int64, target string) error {
	if err := s.updateIDs(ctx, `UPDATE archive SET restored_at = ?, restored_to = ?`, []any{time.Now().UnixMilli(), target}, ids); err != nil {
		return fmt.Errorf("mark restored: %w", err)
	}
	return nil
}

// updateIDs runs update (with args) on the archive rows ids, in batches
// within one transaction.
func (s *Store) updateIDs(ctx context.Context, update string, args []any, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	for _, batch := range batches(ids) {
		if _, err := tx.ExecContext(ctx, update+` WHERE id IN `+inList(len(batch)), append(slices.Clone(args), batch...)...); err != nil {
			return err
		}
	}
	return tx.Commit()
}
