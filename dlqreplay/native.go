package dlqreplay

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Mode is how a job moves messages.
type Mode string

// Job modes.
const (
	// ModePipeline (the default, shown as no mode): queuewatch reads every
	// message and decides its fate in the pipeline (selection, poison,
	// dry run, replay stamps, audit per message).
	ModePipeline Mode = "pipeline"
	// ModeNative: the broker moves the whole DLQ back itself (SQS's message
	// move task), when the DLQ's backend is a NativeRedriver. queuewatch
	// starts, follows, cancels and audits it, but sees no message: there
	// is no selection, dry run, replay stamp, poison guard or per-message
	// receipt.
	ModeNative Mode = "native"
)

// NativeRedriver is a Backend whose broker can move every message of a
// DLQ back to a source queue itself (SQS: StartMessageMoveTask). The
// Service runs such a move as a job of mode ModeNative; shared code asks
// the backend for the capability, never its broker's name.
type NativeRedriver interface {
	// StartNative asks the broker to move every message of dlq to target:
	// TargetOriginal is the DLQ's single source (an ErrInvalidRequest when
	// it has several), TargetNamed the queue in target.Name. rate is the
	// most messages per second (0: the broker's own pace). A move the
	// broker already runs on dlq is a *ConflictError; on error nothing
	// was started.
	StartNative(ctx context.Context, dlq Ref, target Target, rate float64) (NativeTask, error)
}

// NativeRateCapper is a NativeRedriver whose broker refuses a rate above
// NativeMaxRate. A native job with no rate of its own asks for the
// configured default capped at that maximum; a rate the caller gave is
// passed on as asked (the broker refuses it).
type NativeRateCapper interface {
	NativeMaxRate() float64
}

// NativeTask is one move the broker runs.
type NativeTask interface {
	// Target names the queue the broker moves to.
	Target() string
	// Progress reads the move's state from the broker.
	Progress(ctx context.Context) (NativeProgress, error)
	// Cancel asks the broker to stop the move; Progress then reports it
	// cancelled (or ended, when it ended first).
	Cancel(ctx context.Context) error
}

// NativeProgress is a native move's state as the broker reports it.
type NativeProgress struct {
	// State is StateRunning, StateSucceeded, StateCancelled or
	// StateFailed.
	State JobState
	// Moved and ToMove are the broker's counts (approximate at SQS).
	Moved, ToMove int64
	// Reason is why the broker failed the move.
	Reason string
}

// nativeNote is the note of every native job: what it does not do.
const nativeNote = "moved by the broker's own redrive: every message, no replay stamp (x-queuewatch-replay-count/-id), no poison guard, no per-message receipt"

// Timeouts of a native job's calls to the broker.
const (
	nativeCallTimeout = 20 * time.Second
	// nativeCancelWait bounds how long a cancelled job waits for the
	// broker to report the move stopped.
	nativeCancelWait = 30 * time.Second
	// nativeMaxErrors is how many progress reads in a row may fail before
	// the job gives up following the move (which may still run).
	nativeMaxErrors = 5
)

// nativeBackend is the DLQ's backend as a NativeRedriver, or a clear
// refusal.
func nativeBackend(ref Ref, b Backend) (NativeRedriver, error) {
	nr, ok := b.(NativeRedriver)
	if !ok {
		return nil, fmt.Errorf("dlq %s: %s has no native redrive; replay through queuewatch instead (no mode): %w", ref.ID(), ref.Broker, ErrInvalidRequest)
	}
	return nr, nil
}

// CanRedriveNatively reports whether the DLQ's backend can have its
// broker move the whole DLQ itself (a job of mode ModeNative).
func (s *Service) CanRedriveNatively(dlqID string) bool {
	_, b, err := s.backend(dlqID)
	if err != nil {
		return false
	}
	_, ok := b.(NativeRedriver)
	return ok
}

// validateNative checks a request of mode native: a replay of everything,
// for real, to the original source or a named queue.
func (r *Request) validateNative() error {
	if r.Action == "" {
		r.Action = ActionReplay
	}
	if r.Action != ActionReplay {
		return fmt.Errorf("native redrive is a replay; %s goes through queuewatch (no mode): %w", r.Action, ErrInvalidRequest)
	}
	if r.DryRun {
		return fmt.Errorf("native redrive has no dry run: the broker moves without showing queuewatch the messages: %w", ErrInvalidRequest)
	}
	if sel := r.Selection; !sel.All || len(sel.IDs) > 0 || sel.Group != "" || len(sel.Headers) > 0 ||
		!sel.Since.IsZero() || !sel.Until.IsZero() || sel.Limit != 0 {
		return fmt.Errorf("native redrive moves every message: the selection must be {\"all\": true} and nothing else; replay a selection through queuewatch (no mode): %w", ErrInvalidRequest)
	}
	switch r.Target.Kind {
	case "", TargetOriginal:
		r.Target.Kind = TargetOriginal
		if r.Target.Name != "" {
			r.Target.Kind = TargetNamed
		}
	case TargetNamed:
		if r.Target.Name == "" {
			return fmt.Errorf("target kind queue needs a name: %w", ErrInvalidRequest)
		}
	default:
		return fmt.Errorf("native redrive sends to the original source or a named queue, not %q: %w", r.Target.Kind, ErrInvalidRequest)
	}
	return nil
}

// startNative starts a native job: the in-process lock, the broker's move
// (which refuses a second move on the DLQ, across instances), the audit
// record, and a follower that polls the move's progress until it ends.
// Cancel and Close cancel the broker's move.
func (s *Service) startNative(ctx context.Context, ref Ref, b Backend, req Request) (Job, error) {
	nr, err := nativeBackend(ref, b)
	if err != nil {
		return Job{}, err
	}
	if err := req.validateNative(); err != nil {
		return Job{}, err
	}
	info := Job{
		ID: newJobID(), DLQ: ref.ID(), Action: ActionReplay, Mode: ModeNative, Who: req.Who,
		Selection: req.Selection, Target: req.Target, State: StateRunning, Created: time.Now(), Note: nativeNote,
	}
	j := newJob(info)
	release, err := s.hold(ctx, j, ref.ID())
	if err != nil {
		return Job{}, err
	}
	rate := s.rate(req.Rate)
	if c, ok := nr.(NativeRateCapper); ok && req.Rate == 0 && rate > c.NativeMaxRate() {
		rate = c.NativeMaxRate()
	}
	sctx, cancel := context.WithTimeout(ctx, nativeCallTimeout)
	task, err := nr.StartNative(sctx, ref, req.Target, rate)
	cancel()
	if err != nil {
		release()
		return Job{}, fmt.Errorf("start native redrive of %s: %w", ref.ID(), err)
	}
	j.mu.Lock()
	j.info.Target.Name = task.Target() // the destination, explicit in the audit log
	j.mu.Unlock()
	if err := s.opts.Store.CreateJob(ctx, j.snapshot()); err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), nativeCallTimeout)
		defer cancel()
		if cerr := task.Cancel(cctx); cerr != nil {
			s.log.Error("native redrive not recorded and not cancelled: it runs at the broker", "dlq", ref.ID(), "err", cerr)
		}
		release()
		return Job{}, err
	}
	f := &nativeFollower{s: s, j: j, ref: ref, task: task}
	started := j.snapshot() // as accepted: SQS may finish a small move before Start returns
	s.launch(ctx, j, release, f.run)
	return started, nil
}

// nativeFollower follows one native move until it ends.
type nativeFollower struct {
	s    *Service
	j    *job
	ref  Ref
	task NativeTask
}

// run polls the move's progress until the broker reports it ended; a
// cancelled job cancels the move and waits for the broker to stop it.
func (f *nativeFollower) run(ctx context.Context) error {
	t := time.NewTicker(f.s.opts.NativePoll)
	defer t.Stop()
	failures := 0
	for {
		p, err := f.progress(ctx)
		switch {
		case err == nil:
			failures = 0
			if done, end := f.update(p); done {
				return end
			}
		case ctx.Err() == nil:
			failures++
			f.s.log.Warn("read native redrive progress", "job", f.j.info.ID, "dlq", f.ref.ID(), "err", err)
			if failures >= nativeMaxErrors {
				return fmt.Errorf("lost track of the broker's redrive, which may still run: %w", err)
			}
		}
		select {
		case <-ctx.Done():
			return f.cancel(context.WithoutCancel(ctx))
		case <-t.C:
		}
	}
}

func (f *nativeFollower) progress(ctx context.Context) (NativeProgress, error) {
	pctx, cancel := context.WithTimeout(ctx, nativeCallTimeout)
	defer cancel()
	return f.task.Progress(pctx)
}

// cancel cancels the broker's move and follows it until it stopped. A
// move that ended before the cancel took effect ends the job as it ended.
func (f *nativeFollower) cancel(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, nativeCancelWait)
	defer cancel()
	if err := f.task.Cancel(cctx); err != nil {
		return fmt.Errorf("cancel the broker's redrive (it may still run): %w", err)
	}
	for {
		p, err := f.progress(cctx)
		if err == nil {
			if done, end := f.update(p); done {
				return end
			}
		}
		select {
		case <-cctx.Done():
			return fmt.Errorf("the broker did not report its redrive stopped after the cancel: %w", cctx.Err())
		case <-time.After(f.s.opts.NativePoll):
		}
	}
}

// update records the broker's counts in the job and the replay counter
// and reports whether the move ended, and the job's end (nil: succeeded).
func (f *nativeFollower) update(p NativeProgress) (bool, error) {
	j := f.j
	j.mu.Lock()
	pr := &j.info.Progress
	delta := p.Moved - pr.Moved
	pr.Moved = max(pr.Moved, p.Moved)
	// SQS counts what is left to move only while a move runs.
	pr.ToMove = max(pr.ToMove, p.ToMove, pr.Moved)
	pr.Depth = max(pr.Depth, pr.ToMove)
	if p.State == StateSucceeded {
		pr.ToMove = pr.Moved
	}
	j.recount()
	j.mu.Unlock()
	if delta > 0 {
		f.s.add(ReplayedKey{Broker: f.ref.Broker, Cluster: f.ref.Cluster, VHost: f.ref.VHost, DLQ: f.ref.Name, Source: f.task.Target(), Result: "ok"}, delta)
	}
	switch p.State {
	case StateSucceeded:
		return true, nil
	case StateCancelled:
		return true, context.Canceled
	case StateFailed:
		reason := p.Reason
		if reason == "" {
			reason = "no reason given"
		}
		return true, errors.New("the broker's redrive failed: " + reason)
	}
	return false, nil
}
