package dlqreplay

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/queuewatch/queuewatch/queue"
)

// Backend is one broker cluster's I/O for browsing and jobs
// (dlqreplay/rabbitmq, dlqreplay/kafka, dlqreplay/nats). The Service owns
// everything that is the same on every broker — locking within the process, the job
// pipeline (see Session), progress, rate, the audit log and metrics; a
// Backend owns only what must be true at the broker: reading without
// changing anything, exclusivity across instances, confirms, acks and
// cursor commits. Every Backend passes the conformance suite in
// dlqreplay/conformance.
type Backend interface {
	Broker() queue.Broker
	Cluster() string
	// Browse reads a page of the DLQ and leaves it exactly as it was.
	Browse(ctx context.Context, dlq Ref, opts BrowseOptions) (Page, error)
	// Open takes the broker-side lock on the DLQ (a *ConflictError when
	// another instance holds it) and snapshots its depth. Nothing has
	// moved when it returns; on error nothing is held.
	Open(ctx context.Context, job JobSpec) (Session, error)
	// Restore publishes archived messages into the queue or topic named by
	// target, in order and with confirms, calls h.Answered for each one
	// the broker answered for, as it answers, and stops at the first error,
	// which it returns. A copy carries the message's Archived.RestoreID as
	// its dedup id where the broker drops duplicates by id (JetStream's
	// Nats-Msg-Id), and is Duplicate when the broker said it stored
	// nothing new. One call keeps one connection for all of msgs; the rate
	// is the pipeline's, kept by h.Pace before each publish.
	Restore(ctx context.Context, target Ref, msgs []Archived, h RestoreHooks) error
}

// RestoreHooks are the pipeline's side of a Backend.Restore.
type RestoreHooks struct {
	// Pace is called before each publish: it waits until the job's rate
	// allows one more message, and fails when the job was cancelled
	// meanwhile. The backend then publishes nothing more and returns its
	// error.
	Pace func(context.Context) error
	// Answered reports one message the broker confirmed (stored, or
	// dropped as a Duplicate). Calls never overlap; they may come from
	// another goroutine than the Restore call's.
	Answered func(Restored)
}

// jobRun is a job's state inside the pipeline: the request, and the hooks
// through which outcomes are reported, the rate is kept and messages are
// archived.
type jobRun struct {
	ID         string
	DLQ        Ref
	Action     Action
	Selection  Selection
	Target     Target
	DryRun     bool
	MaxReplays int
	Logger     *slog.Logger
	// MayRoute is Request.MayRoute.
	MayRoute func(target string) error

	limiter *rate.Limiter
	store   Store
	j       *job
	// settleEvery is how often the pipeline settles everything due and
	// publishes the copies it queued: half the progress flush interval.
	settleEvery time.Duration
}

// Reserve takes the rate's next turn for one message; nil when the job
// has no rate. The caller waits for its Delay, or cancels it.
func (r *jobRun) Reserve() *rate.Reservation {
	if r.limiter == nil {
		return nil
	}
	return r.limiter.Reserve()
}

// RecordInFlight records in the audit store, before they are published,
// the DLQ ids of messages the job is about to copy.
func (r *jobRun) RecordInFlight(ctx context.Context, ids []string) error {
	if err := r.store.RecordInFlight(ctx, r.ID, r.DLQ.ID(), ids); err != nil {
		return fmt.Errorf("record %d messages in flight: %w", len(ids), err)
	}
	return nil
}

// Prior returns the messages of the DLQ that interrupted jobs may have
// copied already, each with the job's id.
func (r *jobRun) Prior(ctx context.Context) (map[string]string, error) {
	if r.Action == ActionDelete && !r.DryRun {
		return nil, nil // a delete leaves only the copy, if there is one
	}
	return r.store.InFlight(ctx, r.DLQ.ID(), r.ID)
}

// SetDepth records the depth snapshotted at the start: the most messages
// the job will look at.
func (r *jobRun) SetDepth(n int64) {
	r.j.mu.Lock()
	r.j.info.Progress.Depth = n
	if r.Selection.All && len(r.Selection.IDs) == 0 && r.Selection.Group == "" && len(r.Selection.Headers) == 0 &&
		r.Selection.Since.IsZero() && r.Selection.Until.IsZero() {
		r.j.info.Progress.ToMove = n
		if r.Selection.Limit > 0 {
			r.j.info.Progress.ToMove = min(n, int64(r.Selection.Limit))
		}
	}
	r.j.recount()
	r.j.mu.Unlock()
}

// Selected counts a message as selected; the pipeline calls it once per
// message that matches Selection. It returns false once Limit selected
// messages were counted.
func (r *jobRun) Selected() bool {
	r.j.mu.Lock()
	defer r.j.mu.Unlock()
	if r.Selection.Limit > 0 && r.j.selected >= r.Selection.Limit {
		return false
	}
	r.j.selected++
	if int64(r.j.selected) > r.j.info.Progress.ToMove {
		r.j.info.Progress.ToMove = int64(r.j.selected)
		r.j.recount()
	}
	return true
}

// Stopped records that the scan stopped (cancelled, failed) with unread
// messages of the snapshot left unread. Those the selection could still
// have taken count in ToMove, so a stopped job's Remaining says what it
// left, not 0: without it, a job whose selection is found while scanning
// (ids, a group, headers, a time range) would show only what it found.
func (r *jobRun) Stopped(unread int64) {
	r.j.mu.Lock()
	defer r.j.mu.Unlock()
	selected := int64(r.j.selected)
	more := unread
	if r.Selection.Limit > 0 {
		more = min(more, int64(r.Selection.Limit)-selected)
	}
	if n := int64(len(r.Selection.IDs)); n > 0 {
		more = min(more, n-selected)
	}
	if p := &r.j.info.Progress; more > 0 && selected+more > p.ToMove {
		p.ToMove = selected + more
		r.j.recount()
	}
}

// Satisfied reports that no further message can be selected (the limit is
// reached or every listed id was seen), so the scan can stop early.
func (r *jobRun) Satisfied() bool {
	r.j.mu.Lock()
	defer r.j.mu.Unlock()
	if r.Selection.Limit > 0 && r.j.selected >= r.Selection.Limit {
		return true
	}
	return len(r.Selection.IDs) > 0 && r.j.selected >= len(r.Selection.IDs)
}

// Note sets the job's note (nothing when note is empty).
func (r *jobRun) Note(note string) {
	if note == "" {
		return
	}
	r.j.mu.Lock()
	r.j.info.Note = note
	r.j.mu.Unlock()
}

// Report records one message's outcome.
func (r *jobRun) Report(o Outcome) {
	r.j.report(o, r.DryRun)
}

// Archive saves messages in the audit store and returns their archive ids
// in order; the pipeline tells the session to remove them from the DLQ
// only after it returned nil.
func (r *jobRun) Archive(ctx context.Context, msgs []*queue.Message) ([]int64, error) {
	recs := make([]Archived, len(msgs))
	for i, m := range msgs {
		recs[i] = Archived{
			JobID: r.ID, DLQ: r.DLQ.ID(), MessageID: m.ID, Properties: m.Properties,
			Headers: m.Headers, Key: m.Key, Body: m.Body,
		}
	}
	return r.store.Archive(ctx, recs)
}

// MarkDeleted records that archived messages left the DLQ, so a restore
// may publish them.
func (r *jobRun) MarkDeleted(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if err := r.store.MarkDeleted(ctx, ids); err != nil {
		return fmt.Errorf("mark %d archived messages deleted: %w", len(ids), err)
	}
	return nil
}

// Done reports which of ids (all, when ids is nil) earlier jobs already
// moved or deleted from this DLQ (Kafka records past a cursor that could
// not advance).
func (r *jobRun) Done(ctx context.Context, ids []string) (map[string]bool, error) {
	if r.store == nil {
		return map[string]bool{}, nil
	}
	return r.store.Done(ctx, r.DLQ.ID(), ids, ResultMoved, ResultDeleted)
}

// JobState is where a job is in its life.
type JobState string

// Job states, as the API shows and the Store keeps them.
const (
	StateRunning   JobState = "running"
	StateSucceeded JobState = "succeeded"
	StateFailed    JobState = "failed"
	StateCancelled JobState = "cancelled"
	// StateInterrupted: the process stopped while the job ran; the Store
	// marks such jobs when it is next opened.
	StateInterrupted JobState = "interrupted"
)

// Progress counts a job's messages. Depth is the DLQ depth snapshotted at
// the start (never more is processed); ToMove the selected messages found
// so far (known up front for "all"), and once a job stopped early, the
// unread messages its selection could still have taken too; Remaining = ToMove − Moved −
// WouldMove − Failed − Skipped. Duplicates counts outcomes marked
// PossibleDuplicate.
type Progress struct {
	Depth  int64 `json:"depth"`
	ToMove int64 `json:"to_move"`
	Moved  int64 `json:"moved"`
	// WouldMove counts what a dry run would move or delete; a dry run
	// moves nothing, so its Moved stays 0.
	WouldMove  int64 `json:"would_move"`
	Failed     int64 `json:"failed"`
	Skipped    int64 `json:"skipped"`
	Remaining  int64 `json:"remaining"`
	Duplicates int64 `json:"duplicates"`
}

// handled is every message with an outcome.
func (p Progress) handled() int64 { return p.Moved + p.WouldMove + p.Failed + p.Skipped }

// Job is a job's state as the API shows it.
type Job struct {
	ID     string `json:"id"`
	DLQ    string `json:"dlq"`
	Action Action `json:"action"`
	// Mode is ModeNative for the broker's own move; empty for a job of
	// the pipeline.
	Mode      Mode      `json:"mode,omitempty"`
	Who       string    `json:"who"`
	DryRun    bool      `json:"dry_run"`
	Selection Selection `json:"selection"`
	Target    Target    `json:"target"`
	State     JobState  `json:"state"`
	Error     string    `json:"error,omitempty"`
	// Note says what a job did not do on purpose, such as the messages a
	// dry run did not read because reading them would have changed them.
	Note     string    `json:"note,omitempty"`
	Created  time.Time `json:"created"`
	Finished time.Time `json:"finished,omitzero"`
	Progress Progress  `json:"progress"`
}

// Receipt is a job and every message's outcome.
type Receipt struct {
	Job      Job       `json:"job"`
	Outcomes []Outcome `json:"outcomes"`
}

// job is the in-memory state of a running job.
type job struct {
	mu       sync.Mutex
	info     Job
	outcomes []Outcome
	flushed  int
	selected int
	counts   func(o Outcome)
	stop     context.Context // done once the job is cancelled
	cancel   context.CancelFunc
	err      error // why the job ended, once done is closed
	done     chan struct{}
}

// newJob makes a job that can be cancelled from the start: hold lists it
// as running before the store recorded it and before launch runs it, and
// a Close or Cancel in between must find a cancel to call. launch ties
// the job's run to stop.
func newJob(info Job) *job {
	stop, cancel := context.WithCancel(context.Background())
	return &job{info: info, done: make(chan struct{}), counts: func(Outcome) {}, stop: stop, cancel: cancel}
}

func (j *job) report(o Outcome, dryRun bool) {
	j.mu.Lock()
	j.outcomes = append(j.outcomes, o)
	p := &j.info.Progress
	switch o.Result {
	case ResultMoved, ResultDeleted:
		p.Moved++
	case ResultWouldMove, ResultWouldDelete:
		p.WouldMove++
	case ResultFailed:
		p.Failed++
	case ResultSkipped:
		p.Skipped++
	}
	if o.PossibleDuplicate {
		p.Duplicates++
	}
	if n := p.handled(); n > p.ToMove {
		p.ToMove = n
	}
	j.recount()
	j.mu.Unlock()
	if !dryRun {
		j.counts(o)
	}
}

// recount derives Remaining; the caller holds mu.
func (j *job) recount() {
	p := &j.info.Progress
	p.Remaining = max(p.ToMove-p.handled(), 0)
}

func (j *job) snapshot() Job {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.info
}
