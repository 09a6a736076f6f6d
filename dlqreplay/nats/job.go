package nats

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// ioTimeout bounds one publish or delete. A cancelled job still finishes
// the message in hand, so these calls do not take the job's cancel.
const ioTimeout = 10 * time.Second

// session is the NATS side of one job (a dlqreplay.Session).
type session struct {
	b      *Backend
	job    dlqreplay.JobSpec
	c      *conn
	filter string
	first  uint64 // where the scan starts
	last   uint64 // the dead-letter stream's last sequence at Open
	depth  int64
	lease  *lease

	settled []dlqreplay.Settled
	stop    error // the job stops: the connection or the target failed
}

// Open connects, takes the DLQ's lease (unless a dry run) and snapshots
// the DLQ: its copies up to the dead-letter stream's last sequence now.
func (b *Backend) Open(ctx context.Context, job dlqreplay.JobSpec) (dlqreplay.Session, error) {
	c, err := b.connect(ctx, "dlq replay")
	if err != nil {
		return nil, err
	}
	filter, err := b.subject(ctx, c, job.DLQ)
	if err != nil {
		c.nc.Close()
		return nil, err
	}
	s := &session{b: b, job: job, c: c, filter: filter}
	info, err := c.dl.Info(ctx, jetstream.WithSubjectFilter(s.filter))
	if err != nil {
		c.nc.Close()
		return nil, fmt.Errorf("dead letters %s: %w", s.filter, err)
	}
	for _, n := range info.State.Subjects {
		s.depth += int64(n)
	}
	s.first, s.last = max(info.State.FirstSeq, 1), info.State.LastSeq
	if !job.DryRun {
		if s.lease, err = b.acquire(ctx, c.js, job); err != nil {
			c.nc.Close()
			return nil, err
		}
	}
	return s, nil
}

// Depth is the DLQ's copies at Open.
func (s *session) Depth() int64 { return s.depth }

// KeepsHandled is false: a handled copy is deleted.
func (s *session) KeepsHandled() bool { return false }

// Scan reads the copies in sequence order up to the snapshot.
func (s *session) Scan(ctx context.Context, each func(*dlqreplay.Delivery) error) error {
	for seq := s.first; seq <= s.last; {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, err := s.c.next(ctx, s.filter, seq)
		if err != nil {
			return err
		}
		if raw == nil || raw.Sequence > s.last {
			return nil
		}
		dead := brokernats.DecodeDeadLetter(raw)
		if err := each(&dlqreplay.Delivery{Message: dead.Message, Handle: &copyRef{dead: dead, raw: raw}}); err != nil {
			return err
		}
		seq = raw.Sequence + 1
	}
	return nil
}

// copyRef is a delivery's handle: the captured copy.
type copyRef struct {
	dead brokernats.DeadLetter
	raw  *jetstream.RawStreamMsg
}

func handle(d *dlqreplay.Delivery) *copyRef { return d.Handle.(*copyRef) }

// Route sends a replay to the subject the message was published to, a
// move to the named subject. A copy captured without its payload goes
// nowhere.
func (s *session) Route(m *queue.Message, t dlqreplay.Target) (dlqreplay.Route, error) {
	switch t.Kind {
	case dlqreplay.TargetNamed:
		return s.b.namedRoute(t.Name)
	case dlqreplay.TargetOriginalExchange:
		return dlqreplay.Route{}, fmt.Errorf("nats has no exchanges; replay to the original subject or a named one: %w", dlqreplay.ErrInvalidRequest)
	}
	if v, _ := m.Header(brokernats.HeaderPayloadLost); string(v) == "true" {
		return dlqreplay.Route{}, errors.New("payload lost: the original was gone before it could be captured, there is nothing to replay")
	}
	subject := m.Death.OriginalTopic
	if subject == "" {
		return dlqreplay.Route{}, fmt.Errorf("no %s header: the original subject is unknown", brokernats.HeaderSubject)
	}
	return route(subject)
}

// CheckRoute reports ErrTargetMissing when no stream stores the subject.
func (s *session) CheckRoute(ctx context.Context, r dlqreplay.Route) error {
	return checkSubject(ctx, s.c.js, r.Target)
}

// Keep does nothing: a copy stays where it is until deleted.
func (s *session) Keep(*dlqreplay.Delivery) error { return nil }

// replayMsg is the copy to publish: the original's headers and body, the
// replay count bumped, the replay id set, and a Nats-Msg-Id that is the
// same for every attempt at this replay.
func replayMsg(ref *copyRef, subject string, rp dlqreplay.Replay) *nats.Msg {
	m := nats.NewMsg(subject)
	for k, vs := range ref.raw.Header {
		// Nats-* on a copy are the capture's publish directives, and
		// Qw-Dead-* (the original's Nats-Msg-Id too) its bookkeeping of
		// this death: a copy that dies again gets its own.
		if brokernats.IsCaptureHeader(k) || strings.HasPrefix(k, "Nats-") ||
			k == queue.HeaderReplayCount || k == queue.HeaderReplayID {
			continue
		}
		m.Header[k] = vs
	}
	m.Header.Set(queue.HeaderReplayCount, queue.FormatReplayCount(rp.Count))
	m.Header.Set(queue.HeaderReplayID, rp.ID)
	m.Header.Set(jetstream.MsgIDHeader, brokernats.ReplayMsgID(ref.dead.Stream, ref.dead.StreamSeq, rp.Count, ref.raw.Sequence))
	m.Data = ref.raw.Data
	return m
}

// Publish publishes the copy, waits for the target stream's ack and then
// deletes the captured copy. Its outcome is reported by the next Settle.
func (s *session) Publish(ctx context.Context, d *dlqreplay.Delivery, r dlqreplay.Route, rp dlqreplay.Replay) error {
	if err := s.held(); err != nil {
		return err
	}
	ref := handle(d)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ioTimeout)
	defer cancel()
	ack, err := s.c.js.PublishMsg(ctx, replayMsg(ref, r.Dest.(string), rp))
	if err != nil {
		// A refusal stored nothing; anything else (a timeout, a lost
		// connection) may have stored the copy without its ack.
		uncertain := !refused(err)
		err = fmt.Errorf("publish to %s: %w", r.Target, err)
		s.settled = append(s.settled, dlqreplay.Settled{Delivery: d, Err: err, PossibleDuplicate: uncertain})
		s.stop = err
		return nil
	}
	st := dlqreplay.Settled{Delivery: d}
	if ack.Duplicate {
		st.Note = "the target stream had this copy already (an earlier attempt stored it) and dropped the second"
	}
	if err := s.remove(ctx, ref); err != nil {
		// The copy is in the target, the original still in the DLQ.
		st.PossibleDuplicate, st.Note = true, "copy stored in "+r.Target+"; "+err.Error()
		s.stop = err
	}
	s.settled = append(s.settled, st)
	return nil
}

// refused reports a definitive answer: JetStream refused the publish (an
// API error: stream full, sealed, wrong last sequence), or no stream
// answered at all.
func refused(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// remove deletes the captured copy; one already gone is removed.
func (s *session) remove(ctx context.Context, ref *copyRef) error {
	err := s.c.dl.DeleteMsg(ctx, ref.raw.Sequence)
	if err == nil || errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	var api *jetstream.APIError
	if errors.As(err, &api) && api.ErrorCode == jetstream.JSErrCodeMessageNotFound {
		return nil
	}
	return fmt.Errorf("delete dead-letter copy #%d: %w", ref.raw.Sequence, err)
}

// Remove deletes the captured copy (archived by a delete job).
func (s *session) Remove(ctx context.Context, d *dlqreplay.Delivery) error {
	if err := s.held(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ioTimeout)
	defer cancel()
	st := dlqreplay.Settled{Delivery: d}
	if err := s.remove(ctx, handle(d)); err != nil {
		st.Err, s.stop = err, err
	}
	s.settled = append(s.settled, st)
	return nil
}

// held refuses to go on once the job stopped or its lease may be lost.
func (s *session) held() error {
	if s.stop != nil {
		return s.stop
	}
	if s.lease != nil {
		return s.lease.err()
	}
	return nil
}

// Settle reports what Publish and Remove did; every call is final when it
// returns, so the mode changes nothing.
func (s *session) Settle(context.Context, dlqreplay.SettleMode) ([]dlqreplay.Settled, error) {
	out := s.settled
	s.settled = nil
	return out, s.stop
}

// Close releases the lease and the connection. It never fails the job: a
// lease it cannot release is logged and expires by itself.
func (s *session) Close(ctx context.Context) error {
	defer s.c.nc.Close()
	if s.lease == nil {
		return nil
	}
	if s.c.nc.IsClosed() {
		// Nothing can be released over a dead connection; the lease runs
		// out with the bucket's TTL.
		s.lease.abandon()
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	if err := s.lease.release(ctx); err != nil {
		// The job's work is done and its outcome stands: a lease that
		// cannot be deleted only keeps the DLQ locked until the bucket's
		// TTL runs out.
		s.b.opts.Logger.Warn("dlq lease not released; it expires with the bucket's TTL",
			"cluster", s.b.opts.Cluster.Name(), "dlq", s.job.DLQ.ID(), "job", s.job.ID, "err", err)
	}
	return nil
}
