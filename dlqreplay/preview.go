package dlqreplay

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Preview is what a job would do, found by a dry run that nothing
// records: the pipeline's outcome for every message it read.
type Preview struct {
	// Job is the request as a job with its counts; it has no ID, since no
	// job exists: the audit store never heard of it.
	Job      Job       `json:"job"`
	Outcomes []Outcome `json:"outcomes"`
	// Complete: every message of the snapshot was read; false when the
	// preview stopped at its deadline (Job.Progress.Remaining says how
	// many selected messages it did not get to).
	Complete bool `json:"complete"`
}

// Preview runs req as a dry run and answers what it would do, recording
// nothing: no job in the audit store, no audit event, no counter. It goes
// through the same pipeline as a job (selection, poison guard, earlier
// jobs, route and target check), so its figures are a dry run's; it takes
// the DLQ's lock while it reads, like one, and a DLQ held by a job is a
// *ConflictError. It is what a confirmation dialog shows before anyone
// asked for anything; a dry run someone asks for is Start with DryRun,
// which the audit log records. It stops when ctx ends, returning what it
// found so far with Complete false.
func (s *Service) Preview(ctx context.Context, req Request) (Preview, error) {
	ref, b, err := s.backend(req.DLQ)
	if err != nil {
		return Preview{}, err
	}
	if req.Mode != "" && req.Mode != ModePipeline {
		return Preview{}, fmt.Errorf("mode %q: a preview is of the pipeline's replay: %w", req.Mode, ErrInvalidRequest)
	}
	req.Mode, req.DryRun = "", true
	if err := req.validate(extraTargetKinds(b)); err != nil {
		return Preview{}, err
	}
	req.Selection = req.Selection.Counted()
	info := Job{
		ID: newPreviewID(), DLQ: ref.ID(), Action: req.Action, Who: req.Who, DryRun: true,
		Selection: req.Selection, Target: req.Target, State: StateRunning, Created: time.Now(),
	}
	j := newJob(info)
	defer j.cancel()
	release, err := s.hold(ctx, j, ref.ID())
	if err != nil {
		return Preview{}, err
	}
	defer release()
	run := &jobRun{
		ID: info.ID, DLQ: ref, Action: req.Action, Selection: req.Selection, Target: req.Target,
		DryRun: true, MaxReplays: s.opts.MaxReplays, Logger: s.log.With("preview", info.ID, "dlq", ref.ID()),
		MayRoute: req.MayRoute, store: s.opts.Store, j: j,
	}
	sess, err := b.Open(ctx, JobSpec{ID: info.ID, DLQ: ref, Action: req.Action, DryRun: true})
	if err != nil {
		return Preview{}, fmt.Errorf("preview %s of %s: %w", req.Action, ref.ID(), err)
	}
	p := &pipeline{r: run, s: sess, checks: map[string]error{}}
	if err := p.prepare(ctx); err != nil {
		_ = sess.Close(context.WithoutCancel(ctx)) // the prepare error is the one to report
		return Preview{}, fmt.Errorf("preview %s of %s: %w", req.Action, ref.ID(), err)
	}
	// A Close of the service stops the preview like a job, and a shared
	// store's lease is renewed while it reads, as a job's is.
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	context.AfterFunc(j.stop, cancel)
	beat := time.NewTicker(s.opts.FlushInterval)
	defer beat.Stop()
	go func() {
		for {
			select {
			case <-pctx.Done():
				return
			case <-beat.C:
				s.heartbeat(j, nil)
			}
		}
	}()
	err = p.execute(pctx)
	cancel()
	stopped := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
	if err != nil && !stopped {
		return Preview{}, fmt.Errorf("preview %s of %s: %w", req.Action, ref.ID(), err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	out := Preview{Job: j.info, Outcomes: append([]Outcome{}, j.outcomes...), Complete: !stopped}
	out.Job.ID, out.Job.State, out.Job.Finished = "", StateSucceeded, time.Now()
	if stopped {
		out.Job.State, out.Job.Error = StateCancelled, "stopped before reading every message: "+err.Error()
	}
	return out, nil
}

// newPreviewID names a preview while it holds its DLQ (a job that finds
// the DLQ held sees it); it is never a job's ID.
func newPreviewID() string { return "preview" + newJobID()[len("job"):] }
