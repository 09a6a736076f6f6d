package dlqreplay

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// JobSpec is what a Backend needs to open a job's session.
type JobSpec struct {
	ID     string
	DLQ    Ref
	Action Action
	// DryRun: the session will only be scanned, never asked to publish or
	// remove, so it may skip opening a publisher.
	DryRun bool
}

// Publishes reports whether the job will publish copies.
func (s JobSpec) Publishes() bool { return !s.DryRun && s.Action != ActionDelete }

// Session is the broker side of one job: its I/O and nothing else. The
// pipeline (this package) decides, for every message, what happens to it —
// selection, poison check, dry run, target check, rate, publish, settle,
// audit — and tells the session; a session never decides an outcome.
//
// A session holds the DLQ exclusively from Open until Close (across
// instances: a second Open answers a *ConflictError), reads at most the
// depth it snapshotted at Open, and removes a message from the DLQ only
// when told to: after its copy was confirmed (Publish, then Settle), or
// after it was archived (Remove).
type Session interface {
	// Depth is the number of messages in the DLQ at Open: the most the
	// scan will read.
	Depth() int64
	// KeepsHandled tells a DLQ that is a log (Kafka): handled messages
	// stay readable until a cursor passes them, so a message an earlier
	// job already moved or deleted may be read again and must be removed
	// without a second copy.
	KeepsHandled() bool
	// Scan calls each for the snapshot's messages in DLQ order and stops
	// at the first error each returns, which Scan returns (wrapped or not).
	Scan(ctx context.Context, each func(*Delivery) error) error
	// Route says where a message goes for a replay or move to t:
	// TargetOriginal and TargetOriginalExchange are read from the
	// message's dead-letter facts. An error means this message cannot go
	// anywhere (its headers name no origin). m is nil when t is
	// TargetNamed and the pipeline checks the target before the scan.
	Route(m *queue.Message, t Target) (Route, error)
	// CheckRoute reports whether the route's target exists
	// (ErrTargetMissing when it does not).
	CheckRoute(ctx context.Context, r Route) error
	// Keep leaves the message in the DLQ, in its place. An error stops the
	// scan (for example: too many messages held).
	Keep(d *Delivery) error
	// Publish sends a copy of the message to r, carrying the replay
	// headers: queue.HeaderReplayCount set to rp.Count (encoded with
	// queue.FormatReplayCount) and queue.HeaderReplayID to rp.ID, in place
	// of the message's own. It may return before the broker confirmed; the
	// outcome comes from Settle.
	Publish(ctx context.Context, d *Delivery, r Route, rp Replay) error
	// Remove removes the message from the DLQ without a copy: it has been
	// archived (delete), or an earlier job already sent it (KeepsHandled).
	// Like Publish, it is final only once Settle reports it.
	Remove(ctx context.Context, d *Delivery) error
	// Settle reports the published and removed messages whose fate is now
	// known: the copy confirmed and the DLQ copy removed, or not. mode
	// says how much it settles (see SettleMode). A non-nil error stops the
	// job after the returned outcomes are recorded.
	Settle(ctx context.Context, mode SettleMode) ([]Settled, error)
	// Close gives back every kept message (in order) and releases the
	// DLQ. It is called once, after the last Settle.
	Close(ctx context.Context) error
}

// SettleMode says how much a Session's Settle settles.
type SettleMode int

// Settle modes.
const (
	// SettleBatch settles what the session's batching wants settled now
	// (a full batch, a full confirm window), of what the broker already
	// confirmed; the pipeline asks after every message.
	SettleBatch SettleMode = iota
	// SettleDue settles everything the broker already confirmed, whatever
	// the batching: the pipeline asks at least twice per progress flush
	// (Options.FlushInterval), also while the rate keeps it waiting, so
	// the progress is never more than that behind the broker and what a
	// crash can leave in two places is bounded by time, not only by the
	// batch size.
	SettleDue
	// SettleAll waits for every message in flight (the job's end).
	SettleAll
)

// unreader is a Session that may leave messages unread in a dry run
// because reading them would change them (on a RabbitMQ quorum queue a
// read spends one of a message's limited deliveries). Unread says which
// and why, "" when it read them all. A dry run changes nothing, ever, so
// such messages get no outcome and the job a note instead.
type unreader interface {
	Unread() string
}

// Replay is what the pipeline gives a published copy to carry.
type Replay struct {
	// ID is unique per published copy: "<job id>.<n>".
	ID string
	// Count is the message's replay count plus one (the pipeline computes
	// it once from queue.Message.ReplayCount, for every broker).
	Count int64
}

// Delivery is one message read by a session's Scan.
type Delivery struct {
	Message queue.Message
	// Handle is the session's own reference to the message (a delivery
	// tag, a record).
	Handle any

	out       Outcome // the outcome the pipeline will report once it settles
	archiveID int64   // a delete's archive row, 0 for other messages
}

// Route is where a copy goes.
type Route struct {
	// Target is the destination as receipts show it: "exchange/routing-key"
	// for RabbitMQ ("/queue" for the default exchange), the topic for Kafka.
	Target string
	// Dest is the session's own form of the destination.
	Dest any
}

// Settled is the fate of one published or removed message.
type Settled struct {
	Delivery *Delivery
	// Err: the message stays in the DLQ (nacked, returned, not confirmed,
	// transaction aborted) and is reported as failed.
	Err error
	// PossibleDuplicate: a fault left the outcome uncertain; the copy may
	// be in the target while the original is still in the DLQ.
	PossibleDuplicate bool
	// Note explains a possible duplicate of a message that did move.
	Note string
}

// errSatisfied ends a scan early once nothing more can be selected.
var errSatisfied = errors.New("selection satisfied")

// archiveBatch is how many deletes are archived in one audit-store write.
const archiveBatch = 500

// sendBatch is how many copies are recorded in flight in one audit-store
// write before they are published (see flushSends).
const sendBatch = 500

// send is a selected message waiting to be recorded in flight, then
// published to route.
type send struct {
	d     *Delivery
	route Route
}

// pipeline runs one job over a session.
type pipeline struct {
	r      *jobRun
	s      Session
	done   map[string]bool  // messages earlier jobs sent (KeepsHandled)
	checks map[string]error // target checks, by Route.Target
	seq    int
	read   int64 // messages the scan read
	// deletes are selected messages waiting to be archived (in one batch)
	// before the session is told to remove them.
	deletes []*Delivery
	// sends are selected messages waiting to be recorded in flight (in one
	// batch) before they are published; sendsAt is when the first came.
	sends   []send
	sendsAt time.Time
	// settledAt is when the session last settled everything due.
	settledAt time.Time
	// prior are the messages of this DLQ that an interrupted job may have
	// copied already (DLQ message id → that job's id): whatever this job
	// does with them, but delete them, they may be in two places.
	prior map[string]string
}

// execute runs the job to its end and closes the session. It returns the
// job's error: nil when every selected message was handled.
func (p *pipeline) execute(ctx context.Context) error {
	err := p.scan(ctx)
	if errors.Is(err, errSatisfied) {
		err = nil
	} else if err != nil {
		p.r.Stopped(p.s.Depth() - p.read)
		// Nothing more is published once the job stopped (a failed
		// commit, a cancel): the copies still queued stay in the DLQ
		// without an outcome, like the messages the scan never read.
		for _, sd := range p.sends {
			err = errors.Join(err, p.s.Keep(sd.d))
		}
		p.sends = nil
	}
	if u, ok := p.s.(unreader); ok && p.r.DryRun {
		p.r.Note(u.Unread())
	}
	// Whatever stopped the scan, what is in flight is settled: a
	// confirmed copy's original is removed, the rest stays in the DLQ.
	settleCtx := context.WithoutCancel(ctx)
	if derr := p.flushDeletes(settleCtx); err == nil {
		err = derr
	}
	if serr := p.flushSends(settleCtx); err == nil {
		err = serr
	}
	if serr := p.settle(settleCtx, SettleAll); err == nil {
		err = serr
	}
	if cerr := p.s.Close(settleCtx); err == nil {
		err = cerr
	}
	return err
}

func (p *pipeline) scan(ctx context.Context) error {
	p.settledAt = time.Now()
	var err error
	if p.prior, err = p.r.Prior(ctx); err != nil {
		return err
	}
	if p.s.KeepsHandled() {
		var err error
		if p.done, err = p.r.Done(ctx, nil); err != nil {
			return err
		}
	}
	return p.s.Scan(ctx, func(d *Delivery) error {
		p.read++
		if err := p.handle(ctx, d); err != nil {
			return err
		}
		if p.r.Satisfied() {
			return errSatisfied
		}
		return nil
	})
}

// handle decides one message's fate: the pipeline's steps in order.
func (p *pipeline) handle(ctx context.Context, d *Delivery) error {
	r, m := p.r, &d.Message
	if !r.Selection.Match(m) || !r.Selected() {
		return p.keep(ctx, d)
	}
	d.out = Outcome{MessageID: m.ID, Source: m.Death.Source()}
	if limit := r.MaxReplays; limit > 0 && m.ReplayCount() >= int64(limit) {
		return p.report(ctx, d, ResultSkipped, PoisonReason+fmt.Sprintf("replayed %d times (max_replays %d)", m.ReplayCount(), limit))
	}
	if p.done[m.ID] {
		// Removed through the session like any other, so a log's
		// cursor never passes a message still in flight before it.
		d.out.Result, d.out.Reason = ResultSkipped, "already sent by an earlier job"
		return p.remove(ctx, d)
	}
	if r.Action == ActionDelete {
		if r.DryRun {
			return p.report(ctx, d, ResultWouldDelete, "")
		}
		d.out.Result = ResultDeleted
		p.deletes = append(p.deletes, d)
		if len(p.deletes) >= archiveBatch {
			return p.flushDeletes(ctx)
		}
		return nil
	}
	route, err := p.s.Route(m, r.Target)
	if err != nil {
		return p.report(ctx, d, ResultFailed, err.Error())
	}
	d.out.Target = route.Target
	if r.MayRoute != nil {
		if err := r.MayRoute(route.Target); err != nil {
			// Not this operator's destination (its headers may name any
			// queue): it stays in the DLQ, and the rest goes on.
			return p.report(ctx, d, ResultFailed, err.Error())
		}
	}
	if err := p.check(ctx, route); err != nil {
		// This message's target is gone (its source queue or topic was
		// deleted, say): it stays in the DLQ and the job goes on, so the
		// rest of the selection moves and a dry run shows the whole plan.
		return p.report(ctx, d, ResultFailed, err.Error())
	}
	if r.DryRun {
		return p.report(ctx, d, ResultWouldMove, "")
	}
	if err := p.wait(ctx); err != nil {
		// Cancelled before its turn: kept without an outcome, like the
		// messages the scan never read (the job's Remaining counts it).
		return errors.Join(err, p.keep(ctx, d))
	}
	d.out.Result = ResultMoved
	p.sends = append(p.sends, send{d: d, route: route})
	if len(p.sends) == 1 {
		p.sendsAt = time.Now()
	}
	if len(p.sends) >= sendBatch || time.Since(p.sendsAt) >= r.settleEvery {
		return p.flushSends(ctx)
	}
	return p.settle(ctx, p.mode())
}

// wait waits for the rate's next turn. Meanwhile it does what falls due:
// the queued copies are recorded and published, and what the broker
// confirmed is settled, so a slow rate holds neither up.
func (p *pipeline) wait(ctx context.Context) error {
	res := p.r.Reserve()
	if res == nil {
		return ctx.Err()
	}
	turn := time.Now().Add(res.Delay())
	for {
		left := time.Until(turn)
		if left <= 0 {
			return nil
		}
		if len(p.sends) > 0 && time.Since(p.sendsAt)+left >= p.r.settleEvery {
			if err := p.flushSends(ctx); err != nil {
				res.Cancel()
				return err
			}
		} else if p.mode() == SettleDue {
			if err := p.settle(ctx, SettleDue); err != nil {
				res.Cancel()
				return err
			}
		}
		step := min(time.Until(turn), time.Until(p.settledAt.Add(p.r.settleEvery)))
		t := time.NewTimer(max(step, time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			res.Cancel()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// mode is SettleDue once settleEvery passed since everything due was
// last settled, SettleBatch before.
func (p *pipeline) mode() SettleMode {
	if time.Since(p.settledAt) >= p.r.settleEvery {
		return SettleDue
	}
	return SettleBatch
}

// flushSends records the queued copies in flight, in one audit-store
// write, and only then publishes them. A crash from then on until they
// settle leaves their originals in the DLQ, some perhaps with a copy in
// the target: the record is how the next job on the DLQ knows to mark
// them possible duplicates (see Store.InFlight). They were taken before
// any cancel, so they are published whatever ctx says. A failed record
// leaves them all in the DLQ, failed; a failed publish fails its message
// and gives the rest back without an outcome, as the scan stops.
func (p *pipeline) flushSends(ctx context.Context) error {
	if len(p.sends) == 0 {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	batch := p.sends
	p.sends = nil
	ids := make([]string, len(batch))
	ds := make([]*Delivery, len(batch))
	for i, sd := range batch {
		ids[i], ds[i] = sd.d.Message.ID, sd.d
	}
	if err := p.r.RecordInFlight(ctx, ids); err != nil {
		return errors.Join(err, p.fail("not sent: "+err.Error(), ds...))
	}
	for i, sd := range batch {
		p.seq++
		rp := Replay{ID: p.r.ID + "." + strconv.Itoa(p.seq), Count: sd.d.Message.ReplayCount() + 1}
		if err := p.s.Publish(ctx, sd.d, sd.route, rp); err != nil {
			err = errors.Join(err, p.fail(err.Error(), sd.d))
			for _, d := range ds[i+1:] {
				err = errors.Join(err, p.s.Keep(d))
			}
			return err
		}
	}
	return p.settle(ctx, p.mode())
}

// report records an outcome decided before anything was sent and leaves
// the message in the DLQ.
func (p *pipeline) report(ctx context.Context, d *Delivery, res Result, reason string) error {
	d.out.Result, d.out.Reason = res, reason
	p.record(d, d.out)
	return p.keep(ctx, d)
}

// record reports a message's outcome, marked a possible duplicate when an
// interrupted job may have copied the message already: that copy may be
// in the target whatever this job does with the original, unless it
// deletes it.
func (p *pipeline) record(d *Delivery, o Outcome) {
	if job, ok := p.prior[d.Message.ID]; ok && o.Result != ResultDeleted && o.Result != ResultWouldDelete {
		o.PossibleDuplicate = true
		note := "job " + job + " was interrupted with this message in flight: its copy may be in the target too"
		if o.Reason == "" {
			o.Reason = note
		} else {
			o.Reason += "; " + note
		}
	}
	p.r.Report(o)
}

// keep leaves a message in the DLQ; deletes selected before it are
// handed to the session first, so a log's cursor sees them in order. It
// is kept even when they fail: the session gives back only what it was
// told to keep.
func (p *pipeline) keep(ctx context.Context, d *Delivery) error {
	return errors.Join(p.flushDeletes(ctx), p.flushSends(ctx), p.s.Keep(d))
}

// remove removes a message an earlier job already sent; one that cannot
// be removed is still in the DLQ, so it fails and is kept.
func (p *pipeline) remove(ctx context.Context, d *Delivery) error {
	err := errors.Join(p.flushDeletes(ctx), p.flushSends(ctx))
	if err == nil {
		err = p.s.Remove(ctx, d)
	}
	if err != nil {
		return errors.Join(err, p.fail(d.out.Reason+"; not removed: "+err.Error(), d))
	}
	return p.settle(ctx, p.mode())
}

// fail reports messages that stay in the DLQ as failed and keeps them, in
// order.
func (p *pipeline) fail(reason string, ds ...*Delivery) error {
	var err error
	for _, d := range ds {
		d.out.Result, d.out.Reason = ResultFailed, reason
		p.record(d, d.out)
		err = errors.Join(err, p.s.Keep(d))
	}
	return err
}

// check runs the target check once per target and job.
func (p *pipeline) check(ctx context.Context, route Route) error {
	if err, ok := p.checks[route.Target]; ok {
		return err
	}
	err := p.s.CheckRoute(ctx, route)
	p.checks[route.Target] = err
	return err
}

// flushDeletes archives the pending deletes in one write and only then
// tells the session to remove them. An archive failure leaves them all in
// the DLQ; a remove failure leaves that message and the rest of the batch
// there, reported failed and kept, while the ones removed before it settle
// as deleted. The archive rows of the kept messages stay, unmarked: a row
// is marked deleted only once the session settled its removal (see
// settle), and a restore publishes marked rows only, so it never copies a
// message that is still in the DLQ. Marking after the fact rather than
// dropping the rows of kept messages also covers a crash between the
// archive and the removal, which leaves rows no code gets to drop.
func (p *pipeline) flushDeletes(ctx context.Context) error {
	if len(p.deletes) == 0 {
		return nil
	}
	batch := p.deletes
	p.deletes = nil
	msgs := make([]*queue.Message, len(batch))
	for i, d := range batch {
		msgs[i] = &d.Message
	}
	ids, err := p.r.Archive(ctx, msgs)
	if err != nil {
		return errors.Join(err, p.fail("archive: "+err.Error(), batch...))
	}
	for i, d := range batch {
		d.archiveID = ids[i]
	}
	for i, d := range batch {
		if err := p.s.Remove(ctx, d); err != nil {
			return errors.Join(err, p.fail("archived, not removed: "+err.Error(), batch[i:]...))
		}
	}
	return p.settle(ctx, p.mode())
}

// settle records what the session settled, and marks the archive rows of
// the deletes it settled as deleted. A failure to mark stops the job:
// those messages are gone from the DLQ, but a restore will skip them until
// their rows say so.
func (p *pipeline) settle(ctx context.Context, mode SettleMode) error {
	if mode != SettleBatch {
		p.settledAt = time.Now()
	}
	done, err := p.s.Settle(ctx, mode)
	var deleted []int64
	for _, st := range done {
		if st.Err == nil && st.Delivery.archiveID != 0 {
			deleted = append(deleted, st.Delivery.archiveID)
		}
		o := st.Delivery.out
		switch {
		case st.Err != nil:
			o.Result, o.Reason = ResultFailed, st.Err.Error()
		case st.Note != "":
			o.Reason = st.Note
		}
		o.PossibleDuplicate = st.PossibleDuplicate
		p.record(st.Delivery, o)
	}
	// The removals happened: record them even when the job was just
	// cancelled.
	return errors.Join(err, p.r.MarkDeleted(context.WithoutCancel(ctx), deleted))
}

// prepare checks a named target before anything moves and records the
// snapshotted depth.
func (p *pipeline) prepare(ctx context.Context) error {
	if p.r.Action != ActionDelete && p.r.Target.Kind == TargetNamed {
		route, err := p.s.Route(nil, p.r.Target)
		if err != nil {
			return err
		}
		if err := p.check(ctx, route); err != nil {
			return err
		}
	}
	p.r.SetDepth(p.s.Depth())
	return nil
}
