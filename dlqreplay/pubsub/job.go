package pubsub

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// ioTimeout bounds one publish or acknowledge. A cancelled job still
// finishes the message in hand, so these calls do not take the job's
// cancel.
const ioTimeout = 20 * time.Second

// settleBatch is how many handled messages a job acknowledges in one call
// (or all due, for SettleDue and SettleAll).
const settleBatch = 100

// entry is one pulled message the session holds until it is acknowledged
// or given back.
type entry struct {
	rm     *pubsubpb.ReceivedMessage
	d      *dlqreplay.Delivery
	sentTo string // the topic a copy was published to, "" when none
	acked  bool
}

// session is the Pub/Sub side of one job (a dlqreplay.Session).
type session struct {
	b     *Backend
	job   dlqreplay.JobSpec
	q     *dlq
	lease *lease

	mu   sync.Mutex
	held []*entry // pulled, in publish order once Open drained the DLQ
	lost error    // set once a renewal failed: the messages may be delivered to others

	pending []*entry // published or to remove: acknowledged by the next flush
	settled []dlqreplay.Settled
	stop    error

	done    chan struct{}
	stopped chan struct{}
}

// Open finds the DLQ, takes its lease and pulls its snapshot: every
// message it delivers now, up to Options.MaxHeld, held (its ack deadline
// extended) until the job acknowledges or gives it back.
func (b *Backend) Open(ctx context.Context, job dlqreplay.JobSpec) (dlqreplay.Session, error) {
	q, err := b.lookup(ctx, job.DLQ)
	if err != nil {
		return nil, err
	}
	l, err := b.acquire(ctx, job.DLQ, job.ID)
	if err != nil {
		return nil, err
	}
	s := &session{b: b, job: job, q: q, lease: l, done: make(chan struct{}), stopped: make(chan struct{})}
	go s.renew(min(b.opts.AckDeadline, b.opts.LeaseTTL) / 3)
	if err := s.drain(ctx); err != nil {
		_ = s.Close(ctx)
		return nil, err
	}
	return s, nil
}

// drain pulls the snapshot and orders it by publish time.
func (s *session) drain(ctx context.Context) error {
	for {
		s.mu.Lock()
		n := len(s.held)
		s.mu.Unlock()
		if n >= s.b.opts.MaxHeld {
			s.b.opts.Logger.Info("dlq holds more than a job takes: the rest is left for another job", "cluster", s.b.Cluster(),
				"dlq", s.job.DLQ.ID(), "job", s.job.ID, "held", n)
			break
		}
		ms, err := s.b.pull(ctx, s.q.sub.GetName(), s.b.opts.MaxHeld-n, s.b.opts.AckDeadline)
		s.mu.Lock()
		for _, m := range ms {
			s.held = append(s.held, &entry{rm: m})
		}
		s.mu.Unlock()
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			break
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	slices.SortStableFunc(s.held, func(a, b *entry) int { return byPublishTime(a.rm, b.rm) })
	for i, e := range s.held {
		e.d = &dlqreplay.Delivery{Message: s.b.message(s.q, e.rm, int64(i)), Handle: e}
	}
	return nil
}

// Depth is the number of messages Open pulled.
func (s *session) Depth() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.held))
}

// KeepsHandled is false: a handled message is acknowledged.
func (s *session) KeepsHandled() bool { return false }

// Scan hands over the snapshot in publish order.
func (s *session) Scan(ctx context.Context, each func(*dlqreplay.Delivery) error) error {
	s.mu.Lock()
	held := slices.Clone(s.held)
	s.mu.Unlock()
	for _, e := range held {
		if err := ctx.Err(); err != nil {
			return err
		}
		// A dry run never publishes or removes: it learns of a failed
		// renewal here.
		if err := s.lostErr(); err != nil {
			return err
		}
		if err := each(e.d); err != nil {
			return err
		}
	}
	return nil
}

// renew extends the ack deadline of the held messages and the lease
// every interval until Close. A failure marks the session lost.
func (s *session) renew(every time.Duration) {
	defer close(s.stopped)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		err := s.renewOnce(ctx)
		cancel()
		if err != nil {
			s.mu.Lock()
			if s.lost == nil {
				s.lost = err
			}
			s.mu.Unlock()
		}
	}
}

func (s *session) renewOnce(ctx context.Context) error {
	if err := s.lease.renew(ctx); err != nil {
		return fmt.Errorf("renew the lease: %w", err)
	}
	if err := s.b.modifyDeadline(ctx, s.q.sub.GetName(), s.unacked(), s.b.opts.AckDeadline); err != nil {
		return fmt.Errorf("extend the ack deadline of the held messages: %w", err)
	}
	return nil
}

// unacked are the ack ids of the held messages not acknowledged, in
// order.
func (s *session) unacked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.held {
		if !e.acked {
			out = append(out, e.rm.GetAckId())
		}
	}
	return out
}

// lostErr is why the held messages may be delivered to others, nil while
// every renewal succeeded.
func (s *session) lostErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

func handle(d *dlqreplay.Delivery) *entry { return d.Handle.(*entry) }

// fullSub is the full name of a subscription the messages name by short
// id (another project's keep their full name).
func (s *session) fullSub(id string) string {
	if strings.HasPrefix(id, "projects/") {
		return id
	}
	return s.b.subPath(id)
}

// Route sends a replay to the topic of the subscription the message died
// in, a move to the named topic.
func (s *session) Route(m *queue.Message, t dlqreplay.Target) (dlqreplay.Route, error) {
	switch t.Kind {
	case dlqreplay.TargetNamed:
		if t.Name == "" || s.b.topicPath(t.Name) == s.q.sub.GetTopic() || strings.Contains(t.Name, "/") {
			return dlqreplay.Route{}, fmt.Errorf("topic %q cannot be a move target (a topic id of project %s, not the dead-letter topic): %w",
				t.Name, s.b.opts.Project, dlqreplay.ErrInvalidRequest)
		}
		return dlqreplay.Route{Target: t.Name, Dest: s.b.topicPath(t.Name)}, nil
	case dlqreplay.TargetOriginalExchange:
		return dlqreplay.Route{}, fmt.Errorf("pub/sub has no exchanges; replay to the source subscription's topic or move to a named one: %w", dlqreplay.ErrInvalidRequest)
	}
	src := m.Death.Source()
	if src == "" {
		return dlqreplay.Route{}, fmt.Errorf("no %s attribute and %d subscriptions dead-letter here: the source is unknown; move it to a named topic", AttrSourceSubscription, len(s.q.sources))
	}
	topic, ok := s.q.sources[s.fullSub(src)]
	if !ok {
		return dlqreplay.Route{}, fmt.Errorf("subscription %s no longer dead-letters to %s (deleted, or its policy changed): its topic is unknown; move it to a named topic",
			src, s.b.shortName(s.q.sub.GetTopic()))
	}
	if topic == deletedTopic {
		return dlqreplay.Route{}, fmt.Errorf("the topic of subscription %s was deleted", src)
	}
	return dlqreplay.Route{Target: s.b.shortName(topic), Dest: topic}, nil
}

// CheckRoute reports ErrTargetMissing when the target topic does not
// exist.
func (s *session) CheckRoute(ctx context.Context, r dlqreplay.Route) error {
	return s.b.topicExists(ctx, r.Dest.(string))
}

// topicExists reports ErrTargetMissing when the topic does not exist.
func (b *Backend) topicExists(ctx context.Context, topic string) error {
	_, err := b.c.TopicAdminClient.GetTopic(ctx, &pubsubpb.GetTopicRequest{Topic: topic})
	if notFound(err) {
		return fmt.Errorf("topic %s does not exist: %w", b.shortName(topic), dlqreplay.ErrTargetMissing)
	}
	if err != nil {
		return fmt.Errorf("get topic %s: %w", b.shortName(topic), err)
	}
	return nil
}

// Keep does nothing yet: a kept message stays held until Close gives
// every kept one back in order.
func (s *session) Keep(*dlqreplay.Delivery) error { return nil }

// check refuses to go on once the job stopped or the messages may be
// delivered to others.
func (s *session) check() error {
	if s.stop != nil {
		return s.stop
	}
	return s.lostErr()
}

// copyAttributes are a message's attributes for a copy: Pub/Sub's facts
// about the death are left out (a later death sets them again), the
// replay stamps set when rp is given.
func copyAttributes(attrs map[string]string, rp *dlqreplay.Replay) (map[string]string, error) {
	out := make(map[string]string, len(attrs)+2)
	for k, v := range attrs {
		if !strings.HasPrefix(k, deadLetterAttrPrefix) {
			out[k] = v
		}
	}
	if rp != nil {
		out[queue.HeaderReplayCount] = queue.FormatReplayCount(rp.Count)
		out[queue.HeaderReplayID] = rp.ID
	}
	if len(out) > maxAttributes {
		return nil, fmt.Errorf("the copy would carry %d attributes, Pub/Sub allows %d: kept in the dlq, none dropped", len(out), maxAttributes)
	}
	return out, nil
}

// publish publishes one message in one attempt: an answer from Pub/Sub
// then means nothing was stored, while after a retry it could be the
// answer to a copy an earlier attempt stored unconfirmed.
func (b *Backend) publish(ctx context.Context, topic string, m *pubsubpb.PubsubMessage) error {
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	resp, err := b.c.TopicAdminClient.Publish(ctx, &pubsubpb.PublishRequest{Topic: topic, Messages: []*pubsubpb.PubsubMessage{m}}, gax.WithRetry(nil))
	if err != nil {
		return fmt.Errorf("publish to %s: %w", b.shortName(topic), err)
	}
	if len(resp.GetMessageIds()) != 1 {
		return fmt.Errorf("publish to %s: %d message ids for one message", b.shortName(topic), len(resp.GetMessageIds()))
	}
	return nil
}

// refused reports an answer from Pub/Sub that stored nothing (invalid,
// not found, denied, throttled). Anything else may have stored the copy:
// a cut connection, a timeout, an internal error.
func refused(err error) bool {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.NotFound, codes.PermissionDenied, codes.Unauthenticated,
		codes.ResourceExhausted, codes.FailedPrecondition, codes.OutOfRange, codes.AlreadyExists:
		return true
	}
	return false
}

// Publish publishes the copy; its DLQ original is acknowledged by a later
// flush, once Publish returned its message id.
func (s *session) Publish(ctx context.Context, d *dlqreplay.Delivery, r dlqreplay.Route, rp dlqreplay.Replay) error {
	if err := s.check(); err != nil {
		return err
	}
	e := handle(d)
	pm := e.rm.GetMessage()
	attrs, err := copyAttributes(pm.GetAttributes(), &rp)
	if err != nil {
		s.settled = append(s.settled, dlqreplay.Settled{Delivery: d, Err: err})
		return nil
	}
	cp := &pubsubpb.PubsubMessage{Data: pm.GetData(), Attributes: attrs, OrderingKey: pm.GetOrderingKey()}
	if err := s.b.publish(context.WithoutCancel(ctx), r.Dest.(string), cp); err != nil {
		s.settled = append(s.settled, dlqreplay.Settled{Delivery: d, Err: err, PossibleDuplicate: !refused(err)})
		s.stop = err
		return nil
	}
	e.sentTo = r.Target
	s.pending = append(s.pending, e)
	return nil
}

// Remove acknowledges the message (archived by a delete job) at the next
// flush.
func (s *session) Remove(_ context.Context, d *dlqreplay.Delivery) error {
	if err := s.check(); err != nil {
		return err
	}
	s.pending = append(s.pending, handle(d))
	return nil
}

// Settle acknowledges the pending messages once there are settleBatch of
// them (or all of them for SettleDue and SettleAll) and reports their
// fate.
func (s *session) Settle(ctx context.Context, mode dlqreplay.SettleMode) ([]dlqreplay.Settled, error) {
	if len(s.pending) >= settleBatch || mode != dlqreplay.SettleBatch && len(s.pending) > 0 {
		s.flush(ctx)
	}
	out := s.settled
	s.settled = nil
	return out, s.stop
}

// flush acknowledges the pending messages. An acknowledge whose answer is
// lost may have acknowledged them or not: a published copy's original is
// then a possible duplicate.
func (s *session) flush(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ioTimeout)
	defer cancel()
	for chunk := range slices.Chunk(s.pending, ackBatch) {
		ids := make([]string, len(chunk))
		for i, e := range chunk {
			ids[i] = e.rm.GetAckId()
		}
		err := s.b.c.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: s.q.sub.GetName(), AckIds: ids})
		if err != nil {
			err = fmt.Errorf("acknowledge in %s: %w", s.job.DLQ.Name, err)
			s.stop = err
		}
		s.mu.Lock()
		for _, e := range chunk {
			st := dlqreplay.Settled{Delivery: e.d}
			switch {
			case err == nil:
				e.acked = true
			case e.sentTo != "":
				st.PossibleDuplicate, st.Note = true, "copy published to "+e.sentTo+"; not acknowledged in the dlq: "+err.Error()
			default:
				st.Err = err
			}
			s.settled = append(s.settled, st)
		}
		s.mu.Unlock()
	}
	s.pending = nil
}

// Close stops renewing, gives every held message back in publish order
// and releases the lease. Close never fails the job: a message it cannot
// give back is delivered again once its ack deadline passes, and a lease
// it cannot release runs out after LeaseTTL.
func (s *session) Close(ctx context.Context) error {
	close(s.done)
	<-s.stopped
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ioTimeout)
	defer cancel()
	if err := s.b.modifyDeadline(ctx, s.q.sub.GetName(), s.unacked(), 0); err != nil {
		s.b.opts.Logger.Warn("kept messages not given back; they are back after the ack deadline",
			"cluster", s.b.Cluster(), "dlq", s.job.DLQ.ID(), "job", s.job.ID, "err", err)
	}
	if err := s.lease.release(ctx); err != nil {
		s.b.opts.Logger.Warn("lease not released; it runs out by itself", "cluster", s.b.Cluster(),
			"dlq", s.job.DLQ.ID(), "job", s.job.ID, "err", err)
	}
	return nil
}

// Restore publishes archived messages to the topic target.Name, with
// their attributes and ordering key. Pub/Sub drops no duplicates: a
// restore run twice publishes twice.
func (b *Backend) Restore(ctx context.Context, target dlqreplay.Ref, msgs []dlqreplay.Archived, h dlqreplay.RestoreHooks) error {
	topic := b.topicPath(target.Name)
	if err := b.topicExists(ctx, topic); err != nil {
		return err
	}
	for _, a := range msgs {
		attrs := map[string]string{}
		for _, hd := range a.Headers {
			attrs[hd.Key] = string(hd.Value)
		}
		attrs, err := copyAttributes(attrs, nil)
		if err != nil {
			return fmt.Errorf("restore message %s: %w", a.MessageID, err)
		}
		if err := h.Pace(ctx); err != nil {
			return err
		}
		m := &pubsubpb.PubsubMessage{Data: a.Body, Attributes: attrs, OrderingKey: a.Properties["ordering_key"]}
		if err := b.publish(ctx, topic, m); err != nil {
			return fmt.Errorf("restore message %s: %w", a.MessageID, err)
		}
		h.Answered(dlqreplay.Restored{ID: a.ID})
	}
	return nil
}
