package dlqreplay

import (
	"context"
	"errors"
	"fmt"
	"math"
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
// publishes: one connection per chunk whatever the rate (the rate is kept
// inside the chunk, message by message). A cancel takes effect between
// chunks, and also before the next message of a chunk waiting for the rate.
const restoreChunk = 100

// restoreTimeout bounds one chunk's publishes, besides the wait for the
// rate. A cancel never interrupts a publish in hand (the chunk's context
// is not the job's), so every published message's outcome is known, not
// guessed.
const restoreTimeout = 2 * time.Minute

// Restore runs a restore job (see StartRestore) and waits for its
// receipt. A job that failed returns its receipt and the error that
// stopped it (ErrTargetMissing when the target is gone, say).
func (s *Service) Restore(ctx context.Context, req RestoreRequest) (Receipt, error) {
	j, _, err := s.startRestore(ctx, req)
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
// cancelled before its next message. The target is not locked: it is
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
	_, started, err := s.startRestore(ctx, req)
	return started, err
}

func (s *Service) startRestore(ctx context.Context, req RestoreRequest) (*job, Job, error) {
	ref, b, err := s.backend(req.Target)
	if err != nil {
		return nil, Job{}, err
	}
	if len(req.ArchiveIDs) == 0 && req.JobID == "" {
		return nil, Job{}, fmt.Errorf("restore needs archive ids or a job id: %w", ErrInvalidRequest)
	}
	msgs, err := s.opts.Store.Archived(ctx, ArchiveQuery{IDs: req.ArchiveIDs, JobID: req.JobID, Limit: 1 << 30})
	if err != nil {
		return nil, Job{}, err
	}
	if len(msgs) == 0 {
		return nil, Job{}, fmt.Errorf("no archived messages match: %w", ErrJobNotFound)
	}
	info := Job{
		ID: newJobID(), DLQ: ref.ID(), Action: ActionRestore, Who: req.Who, State: StateRunning,
		Created: time.Now(), Target: Target{Kind: TargetNamed, Name: ref.Name},
		Selection: Selection{IDs: archiveIDs(msgs)}.Counted(),
	}
	info.Progress.ToMove = int64(len(msgs))
	info.Progress.Remaining = info.Progress.ToMove // until the first outcome recounts it
	j := newJob(info)
	release, err := s.hold(ctx, j, archiveDLQs(msgs)...)
	if err != nil {
		return nil, Job{}, err
	}
	if err := s.opts.Store.CreateJob(ctx, j.snapshot()); err != nil {
		release()
		return nil, Job{}, err
	}
	rr := &restoreRun{s: s, j: j, b: b, target: ref, msgs: msgs}
	if r := s.rate(req.Rate); r > 0 {
		rr.limiter = rate.NewLimiter(rate.Limit(r), max(1, int(r/10)))
	}
	started := j.snapshot() // as accepted: a small restore may end before this returns
	s.launch(ctx, j, release, rr.run)
	return j, started, nil
}

// restoreRun is one restore job's state.
type restoreRun struct {
	s       *Service
	j       *job
	b       Backend
	target  Ref
	msgs    []Archived
	limiter *rate.Limiter
	// prior are the archived messages (inFlightKey) an interrupted
	// restore into the same target may have published already, with that
	// job's id.
	prior map[string]string
}

// inFlightKey names an archived message in the in-flight record of a
// restore: apart from DLQ message ids, which a target's own replays
// record under the same target.
func inFlightKey(id int64) string { return "archive/" + strconv.FormatInt(id, 10) }

// run publishes the deleted messages chunk by chunk. Messages a stop
// (cancel, error) left unpublished get no outcome: the job's Remaining
// counts them, as it counts the messages a stopped replay never read.
func (r *restoreRun) run(ctx context.Context) error {
	var err error
	if r.prior, err = r.s.opts.Store.InFlight(ctx, r.target.ID(), r.j.info.ID); err != nil {
		return err
	}
	var pending []Archived
	for _, m := range r.msgs {
		if !m.Deleted {
			r.report(m, Outcome{Result: ResultSkipped, Reason: "not deleted from the DLQ by its delete job (the removal failed or was never settled), so it may still be there"})
			continue
		}
		pending = append(pending, m)
	}
	for len(pending) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(restoreChunk, len(pending))
		if err := r.chunk(ctx, pending[:n]); err != nil {
			return err
		}
		pending = pending[n:]
	}
	return nil
}

// pace is the Backend.Restore hook called before each publish: it waits
// for the rate, as the replay pipeline's Wait does before each publish,
// on the job's context, so a cancel while it waits stops the chunk before
// its next message. The chunk's own context only bounds its publishes.
func (r *restoreRun) pace(jobCtx context.Context) func(context.Context) error {
	return func(context.Context) error {
		if r.limiter == nil {
			return jobCtx.Err()
		}
		return r.limiter.Wait(jobCtx)
	}
}

// chunkTimeout bounds a chunk of n messages: restoreTimeout for its
// publishes and confirms, plus the time the rate makes it wait.
func (r *restoreRun) chunkTimeout(n int) time.Duration {
	if r.limiter == nil || r.limiter.Limit() == rate.Inf {
		return restoreTimeout
	}
	wait := float64(n) / float64(r.limiter.Limit()) * float64(time.Second)
	if wait >= float64(math.MaxInt64-restoreTimeout) {
		// A rate so small that the wait overflows a Duration: no bound
		// but the cancel.
		return math.MaxInt64
	}
	return restoreTimeout + time.Duration(wait)
}

// chunk publishes msgs in one Backend.Restore call and records each
// message's outcome as the broker answers; the messages after a failure
// fail with its reason.
func (r *restoreRun) chunk(ctx context.Context, msgs []Archived) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.chunkTimeout(len(msgs)))
	defer cancel()
	byID := make(map[int64]Archived, len(msgs))
	for _, m := range msgs {
		byID[m.ID] = m
	}
	answered := map[int64]bool{}
	var stored []int64
	// Recorded before anything is published: a crash from here until the
	// rows are marked restored leaves the next restore to flag them.
	keys := make([]string, len(msgs))
	for i, m := range msgs {
		keys[i] = inFlightKey(m.ID)
	}
	if err := r.s.opts.Store.RecordInFlight(cctx, r.j.info.ID, r.target.ID(), keys); err != nil {
		for _, m := range msgs {
			r.report(m, Outcome{Result: ResultFailed, Reason: "not published: " + err.Error()})
		}
		return err
	}
	err := r.b.Restore(cctx, r.target, msgs, RestoreHooks{
		Pace: r.pace(ctx),
		Answered: func(d Restored) {
			m, ok := byID[d.ID]
			if !ok || answered[d.ID] {
				return
			}
			answered[d.ID] = true
			// A duplicate is marked too: its dedup id is the row's own
			// restore id, so the copy the broker kept is this row's,
			// stored by an earlier attempt whose confirm never came. Left
			// unmarked, the row would be offered again and, once the
			// duplicate window passed, restored twice.
			stored = append(stored, d.ID)
			if d.Duplicate {
				r.report(m, Outcome{Result: ResultSkipped, Reason: duplicateRestore})
			} else {
				r.report(m, Outcome{Result: ResultMoved})
			}
		},
	})
	// The copies are in the target: record them even when the job was
	// just cancelled.
	merr := r.s.opts.Store.MarkRestored(context.WithoutCancel(ctx), stored, r.target.ID())
	// Cancelled while waiting for the rate: the messages after the last
	// answer were never published. Like the messages a stop left in
	// pending, they get no outcome (Remaining counts them).
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return errors.Join(err, merr)
	}
	for _, m := range msgs {
		if answered[m.ID] {
			continue
		}
		reason := "not confirmed"
		if err != nil {
			reason += ": " + err.Error()
		}
		r.report(m, Outcome{Result: ResultFailed, Reason: reason})
	}
	return errors.Join(err, merr)
}

// report records one message's outcome and counts it under the DLQ it was
// deleted from. A published copy is a possible duplicate when the target
// may hold one already: an interrupted restore had the message in flight,
// or an earlier restore stored it (a restore publishes what it is asked
// to, also again).
func (r *restoreRun) report(m Archived, o Outcome) {
	o.MessageID, o.Target = m.MessageID, r.target.Name
	if o.Result == ResultMoved {
		var note string
		if job, ok := r.prior[inFlightKey(m.ID)]; ok {
			note = "restore job " + job + " was interrupted with this message in flight: its copy may be in the target too"
		} else if !m.RestoredAt.IsZero() && m.RestoredTo == r.target.ID() {
			note = "restored into this target before, at " + m.RestoredAt.UTC().Format(time.RFC3339) + ": that copy may be there too"
		}
		if note != "" {
			o.PossibleDuplicate, o.Reason = true, note
		}
	}
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
