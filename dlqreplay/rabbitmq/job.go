package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// execution is one prepared RabbitMQ job.
type execution struct {
	b          *Backend
	run        *dlqreplay.Run
	conn       *amqp.Connection
	pubConn    *amqp.Connection
	cons       *amqp.Channel
	deliveries <-chan amqp.Delivery
	tag        string
	depth      int
	prefetch   int
	limit      int64
	qtype      string // management API queue type, "" when unknown
	pub        *publisher
	targets    map[string]error // checked targets: "q:name" or "x:name"

	held     []amqp.Delivery // deliveries to give back, in order
	acked    map[uint64]bool // held deliveries acked after all (saved at the delivery limit)
	heldAny  bool            // once true, acks must name single tags
	flight   map[string]*moving
	done     []*moving // confirmed or archived, awaiting ack
	unproven []*moving // acked, not yet proven processed
	proved   time.Time
	seq      int
}

// moving is a selected message between publish (or archive) and ack.
type moving struct {
	d      amqp.Delivery
	id     string
	target string
	source string
	result dlqreplay.Result
}

// Prepare opens the job's connection, checks a named target, snapshots the
// DLQ depth and takes the exclusive consumer that locks the DLQ.
func (b *Backend) Prepare(ctx context.Context, run *dlqreplay.Run) (dlqreplay.Execution, error) {
	qi, err := b.info(ctx, run.DLQ.VHost, run.DLQ.Name)
	if err != nil {
		b.opts.Logger.Warn("read queue info, delivery-limit guard off", "queue", run.DLQ.Name, "err", err)
	}
	if qi.Type == queueTypeStream {
		return nil, streamJobError(run.DLQ)
	}
	conn, err := b.dial(run.DLQ.VHost)
	if err != nil {
		return nil, err
	}
	e := &execution{b: b, run: run, conn: conn, limit: qi.DeliveryLimit, qtype: qi.Type, targets: map[string]error{},
		acked: map[uint64]bool{}, flight: map[string]*moving{}, tag: jobTagPrefix + run.ID}
	if err := e.prepare(ctx); err != nil {
		_ = e.closeConns() // the prepare error is the one worth reporting
		return nil, err
	}
	return e, nil
}

func (e *execution) prepare(ctx context.Context) error {
	if e.run.Action != dlqreplay.ActionDelete && e.run.Target.Kind == dlqreplay.TargetNamed {
		if err := e.checkTarget("", e.run.Target.Name); err != nil {
			return err
		}
	}
	ch, err := e.conn.Channel()
	if err != nil {
		return fmt.Errorf("open consumer channel: %w", err)
	}
	e.cons = ch
	q, err := ch.QueueDeclarePassive(e.run.DLQ.Name, false, false, false, false, nil)
	if err != nil {
		if isNotFound(err) {
			return fmt.Errorf("queue %q: %w", e.run.DLQ.Name, dlqreplay.ErrUnknownDLQ)
		}
		return fmt.Errorf("inspect queue %q: %w", e.run.DLQ.Name, err)
	}
	e.depth = q.Messages
	stream, err := e.b.isStream(ctx, e.conn, e.run.DLQ, e.qtype)
	if err != nil {
		return err
	}
	if stream {
		return streamJobError(e.run.DLQ)
	}
	// Held messages count against the prefetch and RabbitMQ 3.10 does not
	// apply a raised prefetch to a running consumer, so the window covers
	// the snapshot (up to MaxHeld) from the start.
	e.prefetch = min(e.depth, e.b.opts.MaxHeld) + e.b.opts.Prefetch
	if err := ch.Qos(e.prefetch, 0, false); err != nil {
		return fmt.Errorf("set prefetch: %w", err)
	}
	e.deliveries, err = ch.ConsumeWithContext(context.WithoutCancel(ctx), e.run.DLQ.Name, e.tag, false, true, false, false, nil)
	if err != nil {
		if isExclusiveRefusal(err) {
			return &dlqreplay.ConflictError{DLQ: e.run.DLQ.ID(), JobID: e.b.holder(ctx, e.run.DLQ)}
		}
		return fmt.Errorf("consume %q: %w", e.run.DLQ.Name, err)
	}
	if !e.run.DryRun && e.run.Action != dlqreplay.ActionDelete {
		// Copies go out on a connection of their own: behind thousands of
		// publishes in one TCP stream, each prove round trip waited
		// seconds in all.
		if e.pubConn, err = e.b.dial(e.run.DLQ.VHost); err != nil {
			return err
		}
		if e.pub, err = newPublisher(e.pubConn, e.b.opts.ConfirmWindow, e.b.opts.ConfirmTimeout); err != nil {
			return err
		}
	}
	e.run.SetDepth(int64(e.depth))
	return nil
}

// checkTarget makes sure an exchange (or, with exchange "", a queue)
// exists, once per job.
func (e *execution) checkTarget(exchange, q string) error {
	key := "q:" + q
	if exchange != "" {
		key = "x:" + exchange
	}
	if err, ok := e.targets[key]; ok {
		return err
	}
	var err error
	if exchange != "" {
		err = checkExchange(e.conn, exchange)
	} else {
		err = checkQueue(e.conn, q)
	}
	e.targets[key] = err
	return err
}

// Execute scans at most the snapshotted depth, moving selected messages.
func (e *execution) Execute(ctx context.Context) error {
	err := e.scan(ctx)
	if serr := e.settle(); err == nil {
		err = serr
	}
	if perr := e.prove(nil); err == nil {
		err = perr
	}
	if ferr := e.finish(ctx); err == nil {
		err = ferr
	}
	return err
}

// Close clears a browse refusal (the job changed the queue) and closes the
// job's connections.
func (e *execution) Close() error {
	e.b.mu.Lock()
	delete(e.b.refused, e.run.DLQ.ID())
	e.b.mu.Unlock()
	return e.closeConns()
}

// closeConns closes the publishing connection, if any, and the consumer's,
// which gives back anything still unacknowledged.
func (e *execution) closeConns() error {
	if e.pubConn != nil {
		e.pubConn.Close()
	}
	if e.conn.IsClosed() {
		return nil
	}
	return e.conn.Close()
}

func (e *execution) scan(ctx context.Context) error {
	closed := e.conn.NotifyClose(make(chan *amqp.Error, 1))
	stall := time.NewTimer(time.Hour)
	defer stall.Stop()
	for n := 0; n < e.depth; n++ {
		if e.run.Satisfied() {
			return nil
		}
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
		if err := e.handle(ctx, &d, int64(n)); err != nil {
			return err
		}
		if len(e.held) >= e.b.opts.MaxHeld {
			return errHeldFull
		}
	}
	return nil
}

func (e *execution) closeReason() error {
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

// handle decides one delivery's fate.
func (e *execution) handle(ctx context.Context, d *amqp.Delivery, pos int64) error {
	m := message(d, pos)
	if !e.run.Selection.Match(&m) || !e.run.Selected() {
		e.hold(d)
		return nil
	}
	out := dlqreplay.Outcome{MessageID: m.ID, Source: m.Death.Source()}
	if max := e.run.MaxReplays; max > 0 && replayCount(d) >= int64(max) {
		out.Result, out.Reason = dlqreplay.ResultSkipped, fmt.Sprintf("poison: replayed %d times (max_replays %d)", replayCount(d), max)
		e.run.Report(out)
		e.hold(d)
		return nil
	}
	if e.run.Action == dlqreplay.ActionDelete {
		return e.delete(ctx, d, &m, out)
	}
	exchange, key, cc, err := e.target(&m)
	if err == nil {
		err = e.checkTarget(exchange, key)
	}
	out.Target = exchange + "/" + key
	if err != nil {
		out.Result, out.Reason = dlqreplay.ResultFailed, err.Error()
		e.run.Report(out)
		e.hold(d)
		if errors.Is(err, dlqreplay.ErrTargetMissing) {
			return err
		}
		return nil
	}
	if e.run.DryRun {
		out.Result = dlqreplay.ResultWouldMove
		e.run.Report(out)
		e.hold(d)
		return nil
	}
	if err := e.run.Wait(ctx); err != nil {
		e.hold(d)
		return err
	}
	e.seq++
	rid := e.run.ID + "." + strconv.Itoa(e.seq)
	pub := copyOf(d, rid, e.b.user)
	if len(cc) > 0 {
		pub.Headers["CC"] = cc
	}
	if err := e.pub.publish(ctx, exchange, key, rid, pub); err != nil {
		out.Result, out.Reason = dlqreplay.ResultFailed, err.Error()
		e.run.Report(out)
		e.hold(d)
		return err
	}
	e.flight[rid] = &moving{d: *d, id: m.ID, target: out.Target, source: out.Source, result: dlqreplay.ResultMoved}
	// Settle what the broker already confirmed, in batches, and wait only
	// when the window is full, so publishing never pauses for confirms
	// that are on their way.
	switch n := e.pub.ready(); {
	case e.pub.full():
		return e.settleSome(max(n, e.b.opts.ConfirmWindow/4))
	case n >= 100:
		return e.settleSome(n)
	}
	return nil
}

// target is where a message goes: exchange, routing key and extra routing
// keys (CC).
func (e *execution) target(m *queue.Message) (string, string, []any, error) {
	switch e.run.Target.Kind {
	case dlqreplay.TargetNamed:
		return "", e.run.Target.Name, nil, nil
	case dlqreplay.TargetOriginalExchange:
		if ds := m.Death.Deaths; len(ds) > 0 && len(ds[0].RoutingKeys) > 0 {
			var cc []any
			for _, k := range ds[0].RoutingKeys[1:] {
				cc = append(cc, k)
			}
			return ds[0].Exchange, ds[0].RoutingKeys[0], cc, nil
		}
		if m.Death.OriginalExchange != "" || m.Death.OriginalRoutingKey != "" {
			return m.Death.OriginalExchange, m.Death.OriginalRoutingKey, nil, nil
		}
		return "", "", nil, errors.New("no original exchange and routing key in x-death or x-original-*")
	}
	if q := m.Death.Source(); q != "" {
		return "", q, nil, nil
	}
	return "", "", nil, errors.New("no original queue in x-death or x-first-death-queue")
}

// delete archives a message and queues its ack; archives are written in
// batches, each before its messages are acked.
func (e *execution) delete(ctx context.Context, d *amqp.Delivery, m *queue.Message, out dlqreplay.Outcome) error {
	if e.run.DryRun {
		out.Result = dlqreplay.ResultWouldDelete
		e.run.Report(out)
		e.hold(d)
		return nil
	}
	mv := &moving{d: *d, id: m.ID, source: out.Source, result: dlqreplay.ResultDeleted}
	if err := e.run.Archive(ctx, []*queue.Message{m}); err != nil {
		out.Result, out.Reason = dlqreplay.ResultFailed, "archive: "+err.Error()
		e.run.Report(out)
		e.hold(d)
		return err
	}
	e.done = append(e.done, mv)
	if len(e.done) >= e.b.opts.ConfirmWindow {
		return e.ack()
	}
	return nil
}

func (e *execution) hold(d *amqp.Delivery) {
	e.held = append(e.held, *d)
	e.heldAny = true
}

// errHeldFull stops a scan whose unselected messages fill the prefetch
// window: the broker would deliver nothing more.
var errHeldFull = errors.New("too many unselected messages held (max_held); the rest of the queue was not scanned")

// settle waits for every publish in flight, holds the failed ones and acks
// the confirmed ones.
func (e *execution) settle() error {
	if e.pub == nil {
		return e.ack()
	}
	return e.settleSome(len(e.pub.inflight))
}

// settleSome settles the n oldest publishes in flight.
func (e *execution) settleSome(n int) error {
	var fatal error
	for _, s := range e.pub.settleOldest(n) {
		mv := e.flight[s.key]
		delete(e.flight, s.key)
		if s.err == nil {
			e.done = append(e.done, mv)
			continue
		}
		e.run.Report(dlqreplay.Outcome{MessageID: mv.id, Result: dlqreplay.ResultFailed, Target: mv.target,
			Source: mv.source, Reason: s.err.Error(), PossibleDuplicate: s.uncertain})
		e.hold(&mv.d)
		if s.uncertain && fatal == nil {
			fatal = fmt.Errorf("publish to %s: %w", mv.target, s.err)
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
func (e *execution) ack() error {
	if len(e.done) == 0 {
		return nil
	}
	batch := e.done
	e.done = nil
	var err error
	if !e.heldAny {
		err = e.cons.Ack(batch[len(batch)-1].d.DeliveryTag, true)
	} else {
		for _, mv := range batch {
			if err = e.cons.Ack(mv.d.DeliveryTag, false); err != nil {
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

// prove reports acked messages as moved after a round trip on the consumer
// channel; if it fails (or ackErr is set), their DLQ acks may be lost and
// they are reported as possible duplicates.
//
// The round trip is a basic.qos with the prefetch already in force, which
// the channel answers itself. Once it has, the channel has passed the acks
// before it on to the queue, and the queue takes them before it could learn
// of the channel closing, so none can be redelivered. A passive
// queue.declare would prove the same but waits behind the queue's backlog:
// over 100 ms per round trip during a 100,000-message replay.
func (e *execution) prove(ackErr error) error {
	if len(e.unproven) == 0 {
		return nil
	}
	err := ackErr
	if err == nil {
		err = e.cons.Qos(e.prefetch, 0, false)
	}
	e.proved = time.Now()
	for _, mv := range e.unproven {
		o := dlqreplay.Outcome{MessageID: mv.id, Result: mv.result, Target: mv.target, Source: mv.source}
		if err != nil {
			o.PossibleDuplicate = true
			o.Reason = "copy confirmed; the DLQ ack may not have reached the broker"
			if mv.result == dlqreplay.ResultDeleted {
				o.Reason = "archived; the DLQ ack may not have reached the broker"
			}
		}
		e.run.Report(o)
	}
	e.unproven = nil
	if err != nil {
		return fmt.Errorf("confirm dlq acks: %w", err)
	}
	return nil
}

// finish cancels the consumer and gives back every held message (and any
// delivered past the snapshot) in one nack(multiple, requeue).
func (e *execution) finish(ctx context.Context) error {
	if e.cons.IsClosed() {
		return nil
	}
	if err := e.cons.Cancel(e.tag, false); err != nil {
		return fmt.Errorf("cancel consumer: %w", err)
	}
	for d := range e.deliveries {
		e.held = append(e.held, d)
	}
	if len(e.held) == 0 {
		return nil
	}
	if e.limit > 0 {
		if _, err := e.b.spareLimit(ctx, e.conn, e.run.DLQ, e.limit, e.held, e.acked); err != nil {
			return err
		}
	}
	// Tag 0 with multiple returns every outstanding delivery, in order.
	if err := e.cons.Nack(0, true, true); err != nil {
		return fmt.Errorf("return unselected messages: %w", err)
	}
	return nil
}
