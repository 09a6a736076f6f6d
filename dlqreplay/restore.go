package dlqreplay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"golang.org/x/time/rate"
)

// RestoreRequest publishes archived messages again.
type RestoreRequest struct {
	// ArchiveIDs selects archived messages; JobID selects everything a
	// delete job archived. One of them is required.
	ArchiveIDs []int64 `json:"archive_ids,omitempty"`
	JobID      string  `json:"job_id,omitempty"`
	// Target is the DLQ-style ID of the queue or topic to publish into,
	// "rabbitmq:cluster:vhost:queue" or "kafka:cluster::topic".
	Target string `json:"target"`
	// Rate is messages per second, as for Request.Rate: 0 uses the
	// configured default, a negative rate means unlimited.
	Rate float64 `json:"rate,omitempty"`
	Who  string  `json:"who,omitempty"`
}

// restoreChunk is the most archived messages one Backend.Restore call
// publishes: one connection and one round of confirms per chunk, and a
// cancel takes effect between chunks.
const restoreChunk = 100

// restoreTimeout bounds one chunk's publishes. A cancelled restore still
// finishes the chunk in hand, so its outcomes are known, not guessed.
const restoreTimeout = 2 * time.Minute

// Restore runs a restore job (see StartRestore) and waits for its
// receipt. A job that failed returns its receipt and the error that
// stopped it (ErrTargetMissing when the target is gone, say).
func (s *Service) Restore(ctx context.Context, req RestoreRequest) (Receipt, error) {
	j, err := s.startRestore(ctx, req)
	if err != nil {
		return Receipt{}, err
	}
	r, err := j.wait(ctx)
	if err != nil {
		return Receipt{}, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil && !errors.Is(j.err, context.Canceled) {
		return r, j.err
	}
	return r, nil
}

// StartRestore publishes archived messages into any queue or topic as a
// job, like a replay: it holds the lock of every DLQ the messages were
// deleted from (so a restore and a replay, move or delete of the same DLQ
// never run at once in this process — the restore undoes that DLQ's
// delete), keeps the rate, checks the target with the same rule as a move
// to it (in Backend.Restore), counts its outcomes in
// queuewatch_dlq_replayed_messages_total under those DLQs, records every
// message's outcome in the audit log, shows its progress and can be
// cancelled between chunks of messages. The target is not locked: it is
// any queue or topic, often the one a consumer is reading.
//
// Messages are restored in archive order; each is marked restored once
// the broker confirmed a new copy. A copy the broker dropped as a
// duplicate (an earlier restore of the same row stored it) is skipped,
// not moved — this job stored nothing — and its row is marked restored
// too: the duplicate proves the target holds the row's copy. An archived message whose delete never removed it from the
// DLQ (the row is not Deleted: the removal failed, or a crash left it
// unsettled) is skipped, not published: it may still be in the DLQ, and a
// copy would be a duplicate.
func (s *Service) StartRestore(ctx context.Context, req RestoreRequest) (Job, error) {
	j, err := s.startRestore(ctx, req)
	if err != nil {
		return Job{}, err
	}
	return j.snapshot(), nil
}

func (s *Service) startRestore(ctx context.Context, req RestoreRequest) (*job, error) {
	ref, b, err := s.backend(req.Target)
	if err != nil {
		return nil, err
	}
	if len(req.ArchiveIDs) == 0 && req.JobID == "" {
		return nil, fmt.Errorf("restore needs archive ids or a job id: %w", ErrInvalidRequest)
	}
	msgs, err := s.opts.Store.Archived(ctx, ArchiveQuery{IDs: req.ArchiveIDs, JobID: req.JobID, Limit: 1 << 30})
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("no archived messages match: %w", ErrJobNotFound)
	}
	info := Job{
		ID: newJobID(), DLQ: ref.ID(), Action: ActionRestore, Who: req.Who, State: StateRunning,
		Created: time.Now(), Target: Target{Kind: TargetNamed, Name: ref.Name},
		Selection: Selection{IDs: archiveIDs(msgs)},
	}
	info.Progress.ToMove = int64(len(msgs))
	j := newJob(info)
	release, err := s.hold(j, archiveDLQs(msgs)...)
	if err != nil {
		return nil, err
	}
	if err := s.opts.Store.CreateJob(ctx, j.snapshot()); err != nil {
		release()
		return nil, err
	}
	rr := &restoreRun{s: s, j: j, b: b, target: ref, msgs: msgs}
	if r := s.rate(req.Rate); r > 0 {
		rr.limiter = rate.NewLimiter(rate.Limit(r), max(1, int(r/10)))
	}
	s.launch(ctx, j, release, rr.run)
	return j, nil
}

// restoreRun is one restore job's state.
type restoreRun struct {
	s       *Service
	j       *job
	b       Backend
	target  Ref
	msgs    []Archived
	limiter *rate.Limiter
}

// run publishes the deleted messages chunk by chunk. Messages a stop
// (cancel, error) left unpublished get no outcome: the job's Remaining
// counts them, as it counts the messages a stopped replay never read.
func (r *restoreRun) run(ctx context.Context) error {
	var pending []Archived
	for _, m := range r.msgs {
		if !m.Deleted {
			r.report(m, Outcome{Result: ResultSkipped, Reason: "not deleted from the DLQ by its delete job (the removal failed or was never settled), so it may still be there"})
			continue
		}
		pending = append(pending, m)
	}
	size := restoreChunk
	if r.limiter != nil {
		size = min(size, r.limiter.Burst())
	}
	for len(pending) > 0 {
		n := min(size, len(pending))
		if err := r.wait(ctx, n); err != nil {
			return err
		}
		if err := r.chunk(ctx, pending[:n]); err != nil {
			return err
		}
		pending = pending[n:]
	}
	return nil
}

func (r *restoreRun) wait(ctx context.Context, n int) error {
	if r.limiter == nil {
		return ctx.Err()
	}
	return r.limiter.WaitN(ctx, n)
}

// chunk publishes msgs in one Backend.Restore call and records each
// message's outcome; the messages after a failure fail with its reason.
func (r *restoreRun) chunk(ctx context.Context, msgs []Archived) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	done, err := r.b.Restore(cctx, r.target, msgs)
	answered := map[int64]Restored{}
	var stored []int64
	for _, d := range done {
		answered[d.ID] = d
		// A duplicate is marked too: its dedup id is the row's own restore
		// id, so the copy the broker kept is this row's, stored by an
		// earlier attempt whose confirm never came. Left unmarked, the row
		// would be offered again and, once the duplicate window passed,
		// restored twice.
		stored = append(stored, d.ID)
	}
	// The copies are in the target: record them even when the job was
	// just cancelled.
	merr := r.s.opts.Store.MarkRestored(context.WithoutCancel(ctx), stored, r.target.ID())
	for _, m := range msgs {
		d, ok := answered[m.ID]
		switch {
		case !ok:
			reason := "not confirmed"
			if err != nil {
				reason += ": " + err.Error()
			}
			r.report(m, Outcome{Result: ResultFailed, Reason: reason})
		case d.Duplicate:
			r.report(m, Outcome{Result: ResultSkipped, Reason: duplicateRestore})
		default:
			r.report(m, Outcome{Result: ResultMoved})
		}
	}
	return errors.Join(err, merr)
}

// report records one message's outcome and counts it under the DLQ it was
// deleted from.
func (r *restoreRun) report(m Archived, o Outcome) {
	o.MessageID, o.Target = m.MessageID, r.target.Name
	r.j.report(o, false)
	if ref, err := ParseID(m.DLQ); err == nil {
		r.s.count(ref, o)
	}
}

// duplicateRestore is the reason of a restore the broker dropped as a
// duplicate: "moved" means the target stored a new copy, and it did not.
const duplicateRestore = "the target already holds this archived message's restored copy (an earlier restore stored it with the same restore id) and stored no new one; the message is marked restored"

func archiveIDs(recs []Archived) []string {
	out := make([]string, len(recs))
	for i, a := range recs {
		out[i] = strconv.FormatInt(a.ID, 10)
	}
	return out
}

// archiveDLQs are the DLQs recs were deleted from, sorted, each once.
func archiveDLQs(recs []Archived) []string {
	var out []string
	for _, a := range recs {
		out = append(out, a.DLQ)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
