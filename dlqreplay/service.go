package dlqreplay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/queuewatch/queuewatch/queue"
)

// Options configure a Service.
type Options struct {
	// Store is the audit store (required): package store in production.
	Store Store
	// Backends serve the configured clusters, one per broker and cluster.
	Backends []Backend
	// NoReplay are the brokers that have no backend although their DLQs
	// are listed; their IDs answer ErrNoReplay rather than "no cluster".
	NoReplay []queue.Broker
	// MaxReplays is config dlq.max_replays: a message replayed this many
	// times is skipped as poison. 0 means no limit.
	MaxReplays int
	// Rate is config dlq.replay_rate, the default messages per second of a
	// job whose request gives none. 0 means unlimited.
	Rate float64
	// FlushInterval is how often a running job's counts and outcomes are
	// written to the audit store (default 500ms).
	FlushInterval time.Duration
	// NativePoll is how often a native job reads its move's progress
	// from the broker (default 2s; each read is a billed request at SQS).
	NativePoll time.Duration
	// Finished, when set, is told of every job that may have changed
	// queues (not a dry run, nor a job that moved nothing), once its end
	// is recorded, with the queues it touched: a source that reads its
	// counts rarely (SQS) reads those again at once. It runs on the job's
	// goroutine after Wait returned; Close waits for it.
	Finished func(ctx context.Context, t Touched)
	Logger   *slog.Logger
}

// Touched is what a finished job changed: the DLQ it took messages from
// and the queues or topics it sent them to, all of one broker cluster.
type Touched struct {
	Job     Job
	Broker  queue.Broker
	Cluster string
	// Names are the DLQ's name and every destination a message went to, in
	// the backend's words (Outcome.Target: a queue or topic name, or for
	// RabbitMQ "exchange/routing-key"), each once; a restore's is its
	// target. A source leaves out a name that is none of its queues.
	Names []string
}

// finishedTimeout bounds Options.Finished: a few requests to the broker.
const finishedTimeout = 30 * time.Second

// Service runs DLQ browsing and jobs over the configured backends. It is
// safe for concurrent use; one job per DLQ runs at a time.
type Service struct {
	opts     Options
	log      *slog.Logger
	backends map[string]Backend

	mu      sync.Mutex
	running map[string]*job // by DLQ ID
	jobs    map[string]*job // by job ID, running and finished since start
	wg      sync.WaitGroup

	cmu      sync.Mutex
	counters map[ReplayedKey]int64

	stopReap  chan struct{} // closed by Close: the stale-job reaper stops
	closeOnce sync.Once
}

// New builds a Service.
func New(opts Options) (*Service, error) {
	if opts.Store == nil {
		return nil, errors.New("dlqreplay: audit store is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 500 * time.Millisecond
	}
	if opts.NativePoll <= 0 {
		opts.NativePoll = 2 * time.Second
	}
	s := &Service{
		opts: opts, log: opts.Logger, backends: map[string]Backend{},
		running: map[string]*job{}, jobs: map[string]*job{}, counters: map[ReplayedKey]int64{},
		stopReap: make(chan struct{}),
	}
	for _, b := range opts.Backends {
		k := backendKey(b.Broker(), b.Cluster())
		if _, dup := s.backends[k]; dup {
			return nil, fmt.Errorf("dlqreplay: two backends for %s", k)
		}
		s.backends[k] = b
	}
	if rs, ok := opts.Store.(replicaStore); ok {
		go s.reap(rs, s.stopReap)
	}
	return s, nil
}

func backendKey(b queue.Broker, cluster string) string { return string(b) + ":" + cluster }

func (s *Service) backend(id string) (Ref, Backend, error) {
	ref, err := ParseID(id)
	if err != nil {
		return ref, nil, err
	}
	b, ok := s.backends[backendKey(ref.Broker, ref.Cluster)]
	if !ok && slices.Contains(s.opts.NoReplay, ref.Broker) {
		return ref, nil, fmt.Errorf("dlq %s: no browsing or replay for %s yet: %w", id, ref.Broker, ErrNoReplay)
	}
	if !ok {
		return ref, nil, fmt.Errorf("dlq %s: no %s cluster %q: %w", id, ref.Broker, ref.Cluster, ErrUnknownDLQ)
	}
	return ref, b, nil
}

// Browse returns a page of the DLQ with its failure groups; the DLQ is
// left as it was. A DLQ with a running job is refused with ErrJobRunning
// rather than competing with the job for its messages.
func (s *Service) Browse(ctx context.Context, dlqID string, opts BrowseOptions) (Page, error) {
	ref, b, err := s.backend(dlqID)
	if err != nil {
		return Page{}, err
	}
	if opts.Limit <= 0 {
		opts.Limit = 50
	}
	opts.Limit = min(opts.Limit, 1000)
	s.mu.Lock()
	j := s.running[ref.ID()]
	s.mu.Unlock()
	if j != nil {
		return Page{}, &ConflictError{DLQ: ref.ID(), JobID: j.info.ID}
	}
	if err := s.heldElsewhere(ctx, ref.ID()); err != nil {
		return Page{}, err
	}
	if opts.Where != "" {
		return browseWhere(ctx, ref, b, opts)
	}
	p, err := b.Browse(ctx, ref, opts)
	if err != nil {
		return Page{}, fmt.Errorf("browse %s: %w", dlqID, err)
	}
	p.Groups, p.GroupsOf = queue.GroupFailures(p.Messages), len(p.Messages)
	p.GroupsHead = opts.After == ""
	p.GroupsWhole = p.GroupsHead && p.Next == ""
	s.groupOverHead(ctx, ref, b, opts, &p)
	return p, nil
}

// browseWhere reads whole pages from opts.After and keeps the messages
// opts.Where selects, until opts.Limit are found or WhereScan were read;
// the page's Next continues after the last page read.
func browseWhere(ctx context.Context, ref Ref, b Backend, opts BrowseOptions) (Page, error) {
	sel := Selection{Where: opts.Where}
	if err := sel.Validate(); err != nil {
		return Page{}, err
	}
	out := Page{Messages: []queue.Message{}}
	after := opts.After
	for out.Scanned < WhereScan {
		p, err := b.Browse(ctx, ref, BrowseOptions{Limit: MaxBrowse, After: after})
		if err != nil {
			return Page{}, fmt.Errorf("browse %s: %w", ref.ID(), err)
		}
		out.Scanned += len(p.Messages)
		for i := range p.Messages {
			if sel.Match(&p.Messages[i]) {
				out.Messages = append(out.Messages, p.Messages[i])
			}
		}
		out.Next, out.SafeBrowsesLeft, out.CachedAt = p.Next, p.SafeBrowsesLeft, p.CachedAt
		if p.Next == "" || len(out.Messages) >= opts.Limit || len(p.Messages) == 0 {
			break
		}
		after = p.Next
	}
	out.Groups, out.GroupsOf = queue.GroupFailures(out.Messages), len(out.Messages)
	return out, nil
}

// rotatingBrowse is a Backend whose Browse sends what it read to the back
// of the DLQ (SQS orders a queue by when a message became visible again),
// so one more read from the head would move the pages a user walks
// through.
type rotatingBrowse interface {
	BrowseRotates() bool
}

// BrowseRotates reports whether a look at DLQ dlqID moves what it read
// (an SQS DLQ: each receive sends the message to the back and counts a
// receive), so only a person on its page should look.
func (s *Service) BrowseRotates(dlqID string) bool {
	_, b, err := s.backend(dlqID)
	if err != nil {
		return false
	}
	r, ok := b.(rotatingBrowse)
	return ok && r.BrowseRotates()
}

// groupOverHead replaces the page's failure groups with those of the
// DLQ's first opts.GroupOver messages, when the page is not them and one
// more read costs nothing a look must not spend. A failed read keeps the
// page's groups, which say what they are.
func (s *Service) groupOverHead(ctx context.Context, ref Ref, b Backend, opts BrowseOptions, p *Page) {
	n := min(opts.GroupOver, MaxGroupOver)
	if n <= 0 || p.GroupsWhole || (p.GroupsHead && p.GroupsOf >= n) {
		return
	}
	if r, ok := b.(rotatingBrowse); ok && r.BrowseRotates() {
		return
	}
	if p.SafeBrowsesLeft != nil || !p.CachedAt.IsZero() {
		return // a quorum queue: each look spends a limited delivery
	}
	head, err := b.Browse(ctx, ref, BrowseOptions{Limit: n})
	if err != nil {
		s.log.Warn("read the dlq's head for its failure groups", "dlq", ref.ID(), "err", err)
		return
	}
	p.Groups, p.GroupsOf = queue.GroupFailures(head.Messages), len(head.Messages)
	p.GroupsHead, p.GroupsWhole = true, head.Next == ""
}

// Request asks for a job.
type Request struct {
	DLQ       string    `json:"dlq"`
	Action    Action    `json:"action"`
	Selection Selection `json:"selection"`
	Target    Target    `json:"target"`
	DryRun    bool      `json:"dry_run"`
	// Mode is ModeNative for the broker's own move of everything (see
	// NativeRedriver); empty or ModePipeline otherwise.
	Mode Mode `json:"mode,omitempty"`
	// Rate is messages per second; 0 uses the configured default, a
	// negative rate means unlimited.
	Rate float64 `json:"rate,omitempty"`
	// Who is the operator, for the audit log.
	Who string `json:"who,omitempty"`
	// MayRoute, when set, is asked for each message's destination (a
	// Route.Target) before it is sent: a message whose destination it
	// refuses stays in the DLQ, failed with the reason. The web layer
	// holds a scoped operator to the destinations its grants cover.
	MayRoute func(target string) error `json:"-"`
}

// extraTargets is a Backend whose sessions route to target kinds beyond
// TargetOriginal and TargetNamed, which every backend routes (RabbitMQ:
// TargetOriginalExchange). Shared code asks the backend, never its
// broker's name.
type extraTargets interface {
	ExtraTargetKinds() []TargetKind
}

// extraTargetKinds are the target kinds b routes beyond the two every
// backend does.
func extraTargetKinds(b Backend) []TargetKind {
	if x, ok := b.(extraTargets); ok {
		return x.ExtraTargetKinds()
	}
	return nil
}

// validate fills in defaults and checks the request; extra are the target
// kinds the DLQ's backend routes beyond original and queue.
func (r *Request) validate(extra []TargetKind) error {
	if r.Action == "" {
		r.Action = ActionReplay
	}
	if r.Target.Kind == "" {
		r.Target.Kind = TargetOriginal
		if r.Target.Name != "" {
			r.Target.Kind = TargetNamed
		}
	}
	switch r.Action {
	case ActionReplay:
	case ActionMove:
		if r.Target.Kind != TargetNamed || r.Target.Name == "" {
			return fmt.Errorf("move needs a target queue or topic name: %w", ErrInvalidRequest)
		}
	case ActionDelete:
		r.Target = Target{}
	default:
		return fmt.Errorf("action %q: want replay, move or delete: %w", r.Action, ErrInvalidRequest)
	}
	switch r.Target.Kind {
	case TargetOriginal, TargetNamed, "":
	case TargetOriginalExchange:
		if !slices.Contains(extra, r.Target.Kind) {
			return fmt.Errorf("target kind %q: this dlq's broker has no exchanges: %w", r.Target.Kind, ErrInvalidRequest)
		}
	default:
		return fmt.Errorf("target kind %q: want original, exchange or queue: %w", r.Target.Kind, ErrInvalidRequest)
	}
	if r.Target.Kind == TargetNamed && r.Target.Name == "" {
		return fmt.Errorf("target kind queue needs a name: %w", ErrInvalidRequest)
	}
	return r.Selection.Validate()
}

// Start prepares a job (broker lock, target check, depth snapshot) and
// runs it in the background; the returned Job is running. A second job on
// the same DLQ gets a *ConflictError (errors.Is ErrJobRunning), whether the
// first runs in this process or in another instance.
func (s *Service) Start(ctx context.Context, req Request) (Job, error) {
	ref, b, err := s.backend(req.DLQ)
	if err != nil {
		return Job{}, err
	}
	switch req.Mode {
	case ModeNative:
		return s.startNative(ctx, ref, b, req)
	case "", ModePipeline:
		req.Mode = ""
	default:
		return Job{}, fmt.Errorf("mode %q: want pipeline or native: %w", req.Mode, ErrInvalidRequest)
	}
	if err := req.validate(extraTargetKinds(b)); err != nil {
		return Job{}, err
	}
	req.Selection = req.Selection.Counted()
	info := Job{
		ID: newJobID(), DLQ: ref.ID(), Action: req.Action, Who: req.Who, DryRun: req.DryRun,
		Selection: req.Selection, Target: req.Target, State: StateRunning, Created: time.Now(),
	}
	j := newJob(info)
	j.counts = func(o Outcome) { s.count(ref, o) }

	release, err := s.hold(ctx, j, ref.ID())
	if err != nil {
		return Job{}, err
	}

	run := &jobRun{
		ID: info.ID, DLQ: ref, Action: req.Action, Selection: req.Selection, Target: req.Target,
		DryRun: req.DryRun, MaxReplays: s.opts.MaxReplays, Logger: s.log.With("job", info.ID, "dlq", ref.ID()),
		MayRoute: req.MayRoute, store: s.opts.Store, j: j, settleEvery: s.opts.FlushInterval / 2,
	}
	if r := s.rate(req.Rate); r > 0 {
		run.limiter = rate.NewLimiter(rate.Limit(r), max(1, int(r/10)))
	}
	sess, err := b.Open(ctx, JobSpec{ID: info.ID, DLQ: ref, Action: req.Action, DryRun: req.DryRun})
	if err != nil {
		release()
		return Job{}, fmt.Errorf("prepare %s of %s: %w", req.Action, ref.ID(), err)
	}
	p := &pipeline{r: run, s: sess, checks: map[string]error{}}
	if err := p.prepare(ctx); err != nil {
		_ = sess.Close(context.WithoutCancel(ctx)) // the prepare error is the one to report
		release()
		return Job{}, fmt.Errorf("prepare %s of %s: %w", req.Action, ref.ID(), err)
	}
	if err := s.opts.Store.CreateJob(ctx, j.snapshot()); err != nil {
		_ = sess.Close(context.WithoutCancel(ctx)) // the store error is the one to report
		release()
		return Job{}, err
	}
	started := j.snapshot() // as accepted: a fast job may end before Start returns
	s.launch(ctx, j, release, p.execute)
	return started, nil
}

// hold takes the in-process lock of every DLQ in ids for j, then the
// shared store's leases on them (see lease), all or none: a DLQ another
// job holds is a *ConflictError naming that job. The returned func
// releases them.
func (s *Service) hold(ctx context.Context, j *job, ids ...string) (func(), error) {
	unlock, err := s.holdLocal(j, ids)
	if err != nil {
		return nil, err
	}
	unlease, err := s.lease(ctx, j.info.ID, ids)
	if err != nil {
		unlock()
		return nil, err
	}
	return func() { unlease(); unlock() }, nil
}

// holdLocal takes the in-process lock of every DLQ in ids for j.
func (s *Service) holdLocal(j *job, ids []string) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if other := s.running[id]; other != nil {
			return nil, &ConflictError{DLQ: id, JobID: other.info.ID}
		}
	}
	for _, id := range ids {
		s.running[id] = j
	}
	return func() {
		s.mu.Lock()
		for _, id := range ids {
			delete(s.running, id)
		}
		s.mu.Unlock()
	}, nil
}

// launch runs a prepared, recorded job in the background: it can be
// cancelled, its progress is flushed while it runs, and its locks are
// released when it ends.
func (s *Service) launch(ctx context.Context, j *job, release func(), run func(context.Context) error) {
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	context.AfterFunc(j.stop, cancel)
	if j.stop.Err() != nil {
		// A Close came first: AfterFunc would cancel from its own
		// goroutine, which may run after the job took its first message.
		cancel()
	}
	s.mu.Lock()
	s.jobs[j.info.ID] = j
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.finished(j) // after done: waiting for a job never waits for it
		defer close(j.done)
		defer j.cancel()
		ok := s.execute(jctx, j, run)
		release()
		if ok {
			// The audit store has it all now; keep memory bounded.
			s.mu.Lock()
			delete(s.jobs, j.info.ID)
			s.mu.Unlock()
		}
	}()
}

// finished tells Options.Finished what the ended job j touched, unless it
// changed nothing.
func (s *Service) finished(j *job) {
	if s.opts.Finished == nil {
		return
	}
	j.mu.Lock()
	info := j.info
	names := touchedNames(info, j.outcomes)
	j.mu.Unlock()
	if info.DryRun || (info.Progress.Moved == 0 && info.Mode != ModeNative) {
		return
	}
	ref, err := ParseID(info.DLQ)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), finishedTimeout)
	defer cancel()
	s.opts.Finished(ctx, Touched{Job: info, Broker: ref.Broker, Cluster: ref.Cluster, Names: names})
}

// touchedNames are the queues a job touched: its DLQ (a restore's
// target), a native move's destination and where its moved messages went,
// each once, in that order.
func touchedNames(info Job, outcomes []Outcome) []string {
	ref, _ := ParseID(info.DLQ)
	names := []string{ref.Name}
	if info.Mode == ModeNative && info.Target.Name != "" {
		names = append(names, info.Target.Name)
	}
	for _, o := range outcomes {
		if o.Result == ResultMoved && o.Target != "" && !slices.Contains(names, o.Target) {
			names = append(names, o.Target)
		}
	}
	return names
}

func (s *Service) rate(r float64) float64 {
	switch {
	case r < 0:
		return 0
	case r == 0:
		return s.opts.Rate
	}
	return r
}

// execute runs a prepared job, flushing progress to the audit store while
// it runs and the final state when it ends. It reports whether the final
// state reached the store.
func (s *Service) execute(ctx context.Context, j *job, run func(context.Context) error) bool {
	stop := make(chan struct{})
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		t := time.NewTicker(s.opts.FlushInterval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				s.heartbeat(j, s.flushErr(j))
			}
		}
	}()
	err := run(ctx)
	close(stop)
	<-flushed
	j.mu.Lock()
	j.err = err
	switch {
	case err == nil:
		j.info.State = StateSucceeded
	case errors.Is(err, context.Canceled):
		j.info.State = StateCancelled
		j.info.Error = "cancelled"
	default:
		j.info.State = StateFailed
		j.info.Error = err.Error()
	}
	j.info.Finished = time.Now()
	j.mu.Unlock()
	ok := s.flush(j)
	info := j.snapshot()
	s.log.Info("dlq job finished", "job", info.ID, "dlq", info.DLQ, "action", info.Action, "state", info.State,
		"moved", info.Progress.Moved, "would_move", info.Progress.WouldMove, "failed", info.Progress.Failed, "skipped", info.Progress.Skipped, "err", info.Error)
	return ok
}

// flush writes the job's counts and new outcomes to the audit store and
// reports whether it could.
func (s *Service) flush(j *job) bool { return s.flushErr(j) == nil }

// flushErr is flush, saying why it failed.
func (s *Service) flushErr(j *job) error {
	j.mu.Lock()
	info, first := j.info, j.flushed
	pending := append([]Outcome(nil), j.outcomes[first:]...)
	j.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.opts.Store.UpdateJob(ctx, info, first, pending); err != nil {
		s.log.Error("write job progress to the audit store", "job", info.ID, "err", err)
		return err
	}
	j.mu.Lock()
	j.flushed = first + len(pending)
	j.mu.Unlock()
	return nil
}

// Run starts a job and waits for it: the CLI's path, and the one for dry
// runs whose receipt is wanted at once.
func (s *Service) Run(ctx context.Context, req Request) (Receipt, error) {
	j, err := s.Start(ctx, req)
	if err != nil {
		return Receipt{}, err
	}
	return s.Wait(ctx, j.ID)
}

// Wait waits for a job started by this process to end and returns its
// receipt. Cancelling ctx stops the waiting, not the job.
func (s *Service) Wait(ctx context.Context, id string) (Receipt, error) {
	s.mu.Lock()
	j := s.jobs[id]
	s.mu.Unlock()
	if j == nil {
		return s.Receipt(ctx, id)
	}
	return j.wait(ctx)
}

// wait waits for j to end and returns its receipt: the finished job's own
// copy, which has the note the audit store does not keep. Cancelling ctx
// stops the waiting, not the job.
func (j *job) wait(ctx context.Context) (Receipt, error) {
	select {
	case <-j.done:
	case <-ctx.Done():
		return Receipt{}, ctx.Err()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return Receipt{Job: j.info, Outcomes: append([]Outcome{}, j.outcomes...)}, nil
}

// Job returns a job's current state, live for running jobs and from the
// audit store otherwise.
func (s *Service) Job(ctx context.Context, id string) (Job, error) {
	s.mu.Lock()
	j := s.jobs[id]
	s.mu.Unlock()
	if j != nil {
		return j.snapshot(), nil
	}
	return s.opts.Store.Job(ctx, id)
}

// Receipt returns a job and every message's outcome.
func (s *Service) Receipt(ctx context.Context, id string) (Receipt, error) {
	s.mu.Lock()
	j := s.jobs[id]
	s.mu.Unlock()
	if j != nil {
		j.mu.Lock()
		r := Receipt{Job: j.info, Outcomes: append([]Outcome(nil), j.outcomes...)}
		j.mu.Unlock()
		return r, nil
	}
	info, err := s.Job(ctx, id)
	if err != nil {
		return Receipt{}, err
	}
	return s.ReceiptOf(ctx, info)
}

// ReceiptOf returns the receipt of info, a job just read (with Job), so
// that a caller who read it to authorize the request does not read it
// again: a job running in this process answers from memory, the job and
// its outcomes as one snapshot; an ended job adds its outcomes to info.
// Only info that says running but is not running here (it ended since, or
// runs on another replica) is read again, so its state matches its
// outcomes.
func (s *Service) ReceiptOf(ctx context.Context, info Job) (Receipt, error) {
	s.mu.Lock()
	j := s.jobs[info.ID]
	s.mu.Unlock()
	if j != nil {
		j.mu.Lock()
		defer j.mu.Unlock()
		return Receipt{Job: j.info, Outcomes: append([]Outcome(nil), j.outcomes...)}, nil
	}
	if info.State == StateRunning {
		fresh, err := s.opts.Store.Job(ctx, info.ID)
		if err != nil {
			return Receipt{}, err
		}
		info = fresh
	}
	outs, err := s.opts.Store.Outcomes(ctx, info.ID)
	if err != nil {
		return Receipt{}, err
	}
	if outs == nil {
		outs = []Outcome{} // the API shows an empty list, not null
	}
	return Receipt{Job: info, Outcomes: outs}, nil
}

// Cancel stops a running job: no new message is taken, messages in flight
// are settled (confirmed copies acked, the rest left in the DLQ). A job
// another replica runs is flagged in the shared store; its owner cancels
// it at its next progress flush (FlushInterval, 500ms by default).
func (s *Service) Cancel(id string) error {
	s.mu.Lock()
	j := s.jobs[id]
	s.mu.Unlock()
	if j == nil {
		return s.cancelElsewhere(id)
	}
	j.cancel()
	return nil
}

// Jobs lists the jobs q selects, newest first, running ones with live
// progress, each selection as its Summary (Job has the ids).
func (s *Service) Jobs(ctx context.Context, q JobQuery) ([]Job, error) {
	out, err := s.opts.Store.Jobs(ctx, q)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []Job{} // the API shows an empty list, not null
	}
	for i := range out {
		s.mu.Lock()
		j := s.jobs[out[i].ID]
		s.mu.Unlock()
		if j != nil {
			out[i] = j.snapshot()
		}
		out[i].Selection = out[i].Selection.Summary()
	}
	return out, nil
}

// Close cancels running jobs and waits for them to settle.
func (s *Service) Close() {
	s.closeOnce.Do(func() { close(s.stopReap) })
	s.mu.Lock()
	for _, j := range s.running {
		j.cancel()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Archived lists the archived messages q selects, oldest first.
func (s *Service) Archived(ctx context.Context, q ArchiveQuery) ([]Archived, error) {
	return s.opts.Store.Archived(ctx, q)
}

// ReplayedKey labels queuewatch_dlq_replayed_messages_total.
type ReplayedKey struct {
	Broker  queue.Broker
	Cluster string
	VHost   string
	DLQ     string
	Source  string
	// Result is ok (moved or deleted), failed or skipped.
	Result string
}

// ReplayedCount is one counter value.
type ReplayedCount struct {
	ReplayedKey
	Value int64
}

func (s *Service) count(ref Ref, o Outcome) {
	res := "ok"
	switch o.Result {
	case ResultFailed:
		res = "failed"
	case ResultSkipped:
		res = "skipped"
	}
	s.add(ReplayedKey{Broker: ref.Broker, Cluster: ref.Cluster, VHost: ref.VHost, DLQ: ref.Name, Source: o.Source, Result: res}, 1)
}

// add adds n to one counter.
func (s *Service) add(k ReplayedKey, n int64) {
	s.cmu.Lock()
	s.counters[k] += n
	s.cmu.Unlock()
}

// Replayed returns the totals behind the counter
// queuewatch_dlq_replayed_messages_total{broker,cluster,vhost,dlq,source,result},
// sorted by labels; dry runs are not counted. The collector that exports
// it builds const metrics from this at scrape time.
func (s *Service) Replayed() []ReplayedCount {
	s.cmu.Lock()
	out := make([]ReplayedCount, 0, len(s.counters))
	for k, v := range s.counters {
		out = append(out, ReplayedCount{k, v})
	}
	s.cmu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].ReplayedKey, out[j].ReplayedKey
		return fmt.Sprint(a) < fmt.Sprint(b)
	})
	return out
}

// newJobID returns a sortable, unique job ID: time then randomness.
func newJobID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "job-" + time.Now().UTC().Format("20060102T150405.000") + "-" + hex.EncodeToString(b[:])
}
