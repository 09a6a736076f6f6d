package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// session is the RabbitMQ side of one job (a dlqreplay.Session).
type session struct {
	b          *Backend
	job        dlqreplay.JobSpec
	conn       *amqp.Connection
	pubConn    *amqp.Connection
	cons       *amqp.Channel
	deliveries <-chan amqp.Delivery
	tag        string
	depth      int
	readable   int    // how many of the depth the scan reads
	unread     string // why a dry run reads fewer than the depth
	consuming  bool
	prefetch   int
	limit      int64
	qtype      string // management API queue type, "" when unknown
	pub        *publisher

	read     []seenMsg                      // every delivery scanned, as delivered (for the guard)
	held     []amqp.Delivery                // deliveries to give back, in order
	acked    map[uint64]bool                // held deliveries acked after all (saved at the delivery limit)
	heldAny  bool                           // once true, acks must name single tags
	flight   map[string]*dlqreplay.Delivery // published, awaiting confirm, by replay id
	done     []*dlqreplay.Delivery          // confirmed or archived, awaiting ack
	unproven []*dlqreplay.Delivery          // acked, not yet proven processed
	settled  []dlqreplay.Settled            // outcomes for the next Settle
	proved   time.Time
}

// dest is a route's destination: an exchange ("" for the default), a
// routing key and extra routing keys (CC).
type dest struct {
	exchange, key string
	cc            []any
}

func amqpDelivery(d *dlqreplay.Delivery) *amqp.Delivery { return d.Handle.(*amqp.Delivery) }

// Open opens the job's connection, snapshots the DLQ depth and takes the
// exclusive consumer that locks the DLQ.
func (b *Backend) Open(ctx context.Context, job dlqreplay.JobSpec) (dlqreplay.Session, error) {
	qi := b.guardInfo(ctx, job.DLQ)
	if qi.Type == queueTypeStream {
		return nil, streamJobError(job.DLQ)
	}
	conn, err := b.dial(job.DLQ.VHost)
	if err != nil {
		return nil, err
	}
	e := &session{
		b: b, job: job, conn: conn, limit: qi.DeliveryLimit, qtype: qi.Type,
		acked: map[uint64]bool{}, flight: map[string]*dlqreplay.Delivery{}, tag: jobTagPrefix + job.ID,
	}
	if err := e.open(ctx); err != nil {
		_ = e.closeConns() // the open error is the one worth reporting
		return nil, err
	}
	return e, nil
}

func (e *session) open(ctx context.Context) error {
	ch, err := e.conn.Channel()
	if err != nil {
		return fmt.Errorf("open consumer channel: %w", err)
	}
	e.cons = ch
	q, err := ch.QueueDeclarePassive(e.job.DLQ.Name, false, false, false, false, nil)
	if err != nil {
		if isNotFound(err) {
			return fmt.Errorf("queue %q: %w", e.job.DLQ.Name, dlqreplay.ErrUnknownDLQ)
		}
		return fmt.Errorf("inspect queue %q: %w", e.job.DLQ.Name, err)
	}
	e.depth = q.Messages
	stream, err := e.b.isStream(ctx, e.conn, e.job.DLQ, e.qtype)
	if err != nil {
		return err
	}
	if stream {
		return streamJobError(e.job.DLQ)
	}
	e.readable = e.depth
	// Held messages count against the prefetch and RabbitMQ 3.10 does not
	// apply a raised prefetch to a running consumer, so the window covers
	// the snapshot (up to MaxHeld) from the start.
	e.prefetch = min(e.depth, e.b.opts.MaxHeld) + e.b.opts.Prefetch
	if e.job.DryRun && e.limit > 0 {
		// A dry run never spends a delivery that could cost a message: it
		// reads only the messages known to have one to spare, and the
		// prefetch keeps the broker from sending it any more.
		e.readable = e.b.dryRunReadable(e.job.DLQ, e.depth, e.limit)
		e.prefetch = e.readable
		if e.readable < e.depth {
			e.unread = fmt.Sprintf("dry run read %d of the %d messages: on quorum queue %q every read spends one of a message's %d deliveries, "+
				"and the other %d may be too close to that limit (this process has not seen them, or saw them near it); "+
				"their outcomes are unknown, and nothing in the queue was changed",
				e.readable, e.depth, e.job.DLQ.Name, e.limit, e.depth-e.readable)
		}
		if e.readable == 0 {
			return nil
		}
	}
	if err := ch.Qos(e.prefetch, 0, false); err != nil {
		return fmt.Errorf("set prefetch: %w", err)
	}
	e.deliveries, err = ch.ConsumeWithContext(context.WithoutCancel(ctx), e.job.DLQ.Name, e.tag, false, true, false, false, nil)
	if err != nil {
		if isExclusiveRefusal(err) {
			return &dlqreplay.ConflictError{DLQ: e.job.DLQ.ID(), JobID: e.b.holder(ctx, e.job.DLQ)}
		}
		return fmt.Errorf("consume %q: %w", e.job.DLQ.Name, err)
	}
	e.consuming = true
	if e.job.Publishes() {
		// Copies go out on a connection of their own: behind thousands of
		// publishes in one TCP stream, each prove round trip waited
		// seconds in all.
		if e.pubConn, err = e.b.dial(e.job.DLQ.VHost); err != nil {
			return err
		}
		if e.pub, err = newPublisher(e.pubConn, e.b.opts.ConfirmWindow, e.b.opts.ConfirmTimeout); err != nil {
			return err
		}
	}
	return nil
}

// Depth is the DLQ depth when the job took the queue.
func (e *session) Depth() int64 { return int64(e.depth) }

// KeepsHandled is false: an acked message is gone from the queue.
func (e *session) KeepsHandled() bool { return false }

// CheckRoute makes sure the route's exchange (or, for the default
// exchange, its queue) exists.
func (e *session) CheckRoute(_ context.Context, r dlqreplay.Route) error {
	d := r.Dest.(dest)
	if d.exchange != "" {
		return checkExchange(e.conn, d.exchange)
	}
	return checkQueue(e.conn, d.key)
}

// Unread says why a dry run left messages unread ("" when it read them
// all); the pipeline puts it in the job's note.
func (e *session) Unread() string { return e.unread }

// Close gives back every kept message in one nack, tells the
// delivery-limit guard what the job read and gave back, and closes the
// job's connections.
func (e *session) Close(ctx context.Context) error {
	err := e.finish(ctx)
	if cerr := e.closeConns(); err == nil {
		err = cerr
	}
	return err
}

// closeConns closes the publishing connection, if any, and the consumer's,
// which gives back anything still unacknowledged.
func (e *session) closeConns() error {
	if e.pubConn != nil {
		e.pubConn.Close()
	}
	if e.conn.IsClosed() {
		return nil
	}
	return e.conn.Close()
}

// Scan reads at most the snapshotted depth and hands each delivery to
// the pipeline.
func (e *session) Scan(ctx context.Context, each func(*dlqreplay.Delivery) error) error {
	closed := e.conn.NotifyClose(make(chan *amqp.Error, 1))
	stall := time.NewTimer(time.Hour)
	defer stall.Stop()
	for n := 0; n < e.readable; n++ {
		stall.Reset(10 * time.Second)
		var d amqp.Delivery
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-closed:
			return fmt.Errorf("connection lost: %w", amqpErr(err))
		case <-stall.C:
			// Fewer messages than the snapshot: they expired, or the
			// queue was purged.
			return fmt.Errorf("no delivery for 10s after %d of %d messages", n, e.depth)
		case dd, ok := <-e.deliveries:
			if !ok {
				return fmt.Errorf("consumer closed by the broker: %w", e.closeReason())
			}
			d = dd
		}
		e.saw(&d)
		if err := each(&dlqreplay.Delivery{Message: message(&d, int64(n)), Handle: &d}); err != nil {
			return err
		}
	}
	return nil
}

func (e *session) closeReason() error {
	if e.conn.IsClosed() {
		return errors.New("connection closed")
	}
	return errors.New("channel closed")
}

func amqpErr(err *amqp.Error) error {
	if err == nil {
		return errors.New("closed")
	}
	return err
}

// Route is where a message goes: a named queue through the default
// exchange; the queue it died in (x-death, or Spring's
// x-first-death-queue), through the default exchange so no other queue
// gets a copy; or the exchange and routing keys it was first published
// with.
func (e *session) Route(m *queue.Message, t dlqreplay.Target) (dlqreplay.Route, error) {
	d, err := route(m, t)
	if err != nil {
		return dlqreplay.Route{}, err
	}
	return dlqreplay.Route{Target: d.exchange + "/" + d.key, Dest: d}, nil
}

func route(m *queue.Message, t dlqreplay.Target) (dest, error) {
	switch t.Kind {
	case dlqreplay.TargetNamed:
		return dest{key: t.Name}, nil
	case dlqreplay.TargetOriginalExchange:
		if ds := m.Death.Deaths; len(ds) > 0 && len(ds[0].RoutingKeys) > 0 {
			var cc []any
			for _, k := range ds[0].RoutingKeys[1:] {
				cc = append(cc, k)
			}
			return dest{exchange: ds[0].Exchange, key: ds[0].RoutingKeys[0], cc: cc}, nil
		}
		if m.Death.OriginalExchange != "" || m.Death.OriginalRoutingKey != "" {
			return dest{exchange: m.Death.OriginalExchange, key: m.Death.OriginalRoutingKey}, nil
		}
		return dest{}, errors.New("no original exchange and routing key in x-death or x-original-*")
	}
	if q := m.Death.Source(); q != "" {
		return dest{key: q}, nil
	}
	return dest{}, errors.New("no original queue in x-death or x-first-death-queue")
}

// Keep holds the delivery unacknowledged; Close gives it back in place.
func (e *session) Keep(d *dlqreplay.Delivery) error {
	e.hold(amqpDelivery(d))
	if len(e.held) >= e.b.opts.MaxHeld {
		return errHeldFull
	}
	return nil
}

func (e *session) hold(d *amqp.Delivery) {
	e.held = append(e.held, *d)
	e.heldAny = true
}

// errHeldFull stops a scan whose unselected messages fill the prefetch
// window: the broker would deliver nothing more.
var errHeldFull = errors.New("too many unselected messages held (max_held); the rest of the queue was not scanned")

// Publish sends the copy, mandatory, on the confirm-mode channel.
func (e *session) Publish(ctx context.Context, d *dlqreplay.Delivery, r dlqreplay.Route, rp dlqreplay.Replay) error {
	to := r.Dest.(dest)
	replayID := rp.ID
	pub := copyOf(amqpDelivery(d), rp, e.b.user)
	if len(to.cc) > 0 {
		pub.Headers["CC"] = to.cc
	}
	if err := e.pub.publish(ctx, to.exchange, to.key, replayID, pub); err != nil {
		return err
	}
	e.flight[replayID] = d
	return nil
}

// Remove queues the ack of an archived message.
func (e *session) Remove(_ context.Context, d *dlqreplay.Delivery) error {
	e.done = append(e.done, d)
	return nil
}

// Settle acks the DLQ copies of confirmed publishes and removed messages
// and reports them once the acks are proven. Short of SettleAll it
// settles only what the broker already confirmed, and waits only when the
// confirm window is full, so publishing never pauses for confirms that are
// on their way: SettleBatch in batches of 100, SettleDue all of it, and
// proves the acks at once, so that a slow job's progress moves and a crash
// finds few copies confirmed but not acked.
func (e *session) Settle(_ context.Context, mode dlqreplay.SettleMode) ([]dlqreplay.Settled, error) {
	var err error
	switch {
	case e.pub == nil:
		if mode != dlqreplay.SettleBatch || len(e.done) >= e.b.opts.ConfirmWindow {
			err = e.ack()
		}
	case mode == dlqreplay.SettleAll:
		err = e.settleSome(len(e.pub.inflight))
	case e.pub.full():
		err = e.settleSome(max(e.pub.ready(), e.b.opts.ConfirmWindow/4))
	case mode == dlqreplay.SettleDue:
		err = e.settleSome(e.pub.ready())
	default:
		if n := e.pub.ready(); n >= 100 {
			err = e.settleSome(n)
		}
	}
	if mode != dlqreplay.SettleBatch {
		if perr := e.prove(nil); err == nil {
			err = perr
		}
	}
	out := e.settled
	e.settled = nil
	return out, err
}

// settleSome settles the n oldest publishes in flight: the failed ones
// are held, the confirmed ones acked.
func (e *session) settleSome(n int) error {
	var fatal error
	for _, s := range e.pub.settleOldest(n) {
		d := e.flight[s.key]
		delete(e.flight, s.key)
		if s.err == nil {
			e.done = append(e.done, d)
			continue
		}
		e.settled = append(e.settled, dlqreplay.Settled{Delivery: d, Err: s.err, PossibleDuplicate: s.uncertain})
		e.hold(amqpDelivery(d))
		if s.uncertain && fatal == nil {
			fatal = fmt.Errorf("publish message %s: %w", d.Message.ID, s.err)
		}
	}
	if err := e.ack(); err != nil {
		return err
	}
	return fatal
}

// ack acknowledges confirmed (or archived) messages. They are reported
// once a synchronous round trip on the same channel proves the broker
// processed the acks (prove); that costs a queue round trip, so it is done
// every proveEvery messages and at the end.
func (e *session) ack() error {
	if len(e.done) == 0 {
		return nil
	}
	batch := e.done
	e.done = nil
	var err error
	if !e.heldAny {
		err = e.cons.Ack(amqpDelivery(batch[len(batch)-1]).DeliveryTag, true)
	} else {
		for _, d := range batch {
			if err = e.cons.Ack(amqpDelivery(d).DeliveryTag, false); err != nil {
				break
			}
		}
	}
	e.unproven = append(e.unproven, batch...)
	if err != nil {
		// The ack error is the one to return; prove only reports.
		_ = e.prove(err)
		return fmt.Errorf("ack dlq messages: %w", err)
	}
	if len(e.unproven) >= proveEvery || time.Since(e.proved) >= proveInterval {
		return e.prove(nil)
	}
	return nil
}

// Acks are proven every proveEvery messages or proveInterval, whichever
// comes first, so progress stays current.
const (
	proveEvery    = 5000
	proveInterval = 200 * time.Millisecond
)

// prove settles acked messages after a round trip on the consumer
// channel; if it fails (or ackErr is set), their DLQ acks may be lost and
// they are reported as possible duplicates.
//
// The round trip is a basic.qos with the prefetch already in force, which
// the channel answers itself. Once it has, the channel has passed the acks
// before it on to the queue, and the queue takes them before it could learn
// of the channel closing, so none can be redelivered. A passive
// queue.declare would prove the same but waits behind the queue's backlog:
// over 100 ms per round trip during a 100,000-message replay.
func (e *session) prove(ackErr error) error {
	if len(e.unproven) == 0 {
		return nil
	}
	err := ackErr
	if err == nil {
		err = e.cons.Qos(e.prefetch, 0, false)
	}
	e.proved = time.Now()
	for _, d := range e.unproven {
		st := dlqreplay.Settled{Delivery: d}
		if err != nil {
			st.PossibleDuplicate = true
			st.Note = "copy confirmed; the DLQ ack may not have reached the broker"
			if e.job.Action == dlqreplay.ActionDelete {
				st.Note = "archived; the DLQ ack may not have reached the broker"
			}
		}
		e.settled = append(e.settled, st)
	}
	e.unproven = nil
	if err != nil {
		return fmt.Errorf("confirm dlq acks: %w", err)
	}
	return nil
}

// finish cancels the consumer and gives back every held message (and any
// delivered past the snapshot) in one nack(multiple, requeue).
func (e *session) finish(ctx context.Context) error {
	if !e.consuming || e.cons.IsClosed() {
		// A closed channel gave back everything unacked on its own.
		e.rememberHeld(e.depth)
		return nil
	}
	if err := e.cons.Cancel(e.tag, false); err != nil {
		return fmt.Errorf("cancel consumer: %w", err)
	}
	for d := range e.deliveries {
		e.saw(&d)
		e.held = append(e.held, d)
	}
	if len(e.held) == 0 {
		e.rememberHeld(e.depthNow(ctx))
		return nil
	}
	if e.limit > 0 {
		if err := e.b.spareLimit(ctx, e.conn, e.job.DLQ, e.limit, e.held, e.acked); err != nil {
			return err
		}
	}
	// Tag 0 with multiple returns every outstanding delivery, in order.
	if err := e.cons.Nack(0, true, true); err != nil {
		return fmt.Errorf("return unselected messages: %w", err)
	}
	e.rememberHeld(e.depthNow(ctx))
	return nil
}

// depthNow is the DLQ's depth after the give back, once the broker counts
// what was given back (only read for the guard, on a quorum queue with a
// delivery limit).
func (e *session) depthNow(ctx context.Context) int {
	if e.limit <= 0 {
		return 0
	}
	return returnedDepth(ctx, e.cons, e.job.DLQ.Name, len(e.held)-len(e.acked))
}

// saw notes a delivery for the delivery-limit guard, which only a quorum
// queue with a limit needs.
func (e *session) saw(d *amqp.Delivery) {
	if e.limit > 0 {
		e.read = append(e.read, asSeen(d, false))
	}
}

// rememberHeld tells a quorum queue's delivery-limit guard what the job
// read: the messages it gave back are at the head of the queue with one
// delivery more, those it removed are gone.
func (e *session) rememberHeld(depth int) {
	if e.limit <= 0 || len(e.read) == 0 && depth != 0 {
		return
	}
	var kept []seenMsg
	for i := range e.held {
		if !e.acked[e.held[i].DeliveryTag] {
			kept = append(kept, asSeen(&e.held[i], true))
		}
	}
	// A quorum queue may not count returned messages yet right after the
	// nack, but they are there.
	e.b.remember(e.job.DLQ, e.read, kept, max(depth, len(kept)))
}
