package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/dlqreplay"
)

// queueTypeStream is the management API's type of a stream queue.
const queueTypeStream = rabbit.TypeStream

// streamJobError refuses a job on a stream DLQ, dry runs included: acking
// a stream delivery removes nothing, so the ack-after-confirm model that
// keeps jobs loss-proof has nothing to act on.
func streamJobError(ref dlqreplay.Ref) error {
	return fmt.Errorf("queue %q is a stream: a stream keeps every message, so a stream dlq can be browsed "+
		"but not replayed, moved or deleted; consume it from an offset instead: %w", ref.Name, dlqreplay.ErrInvalidRequest)
}

// streamPage reads up to limit messages of a stream from offset from
// (-1: the stream's first message). Consuming a stream removes nothing,
// so the page leaves the DLQ as it was. The page ends at limit messages
// or when none arrives for StreamIdle, which is how the stream's end shows
// over AMQP 0.9.1. A queue that is not a stream makes the consume fail
// with PRECONDITION_FAILED (see isPreconditionFailed).
func (b *Backend) streamPage(ctx context.Context, conn *amqp.Connection, ref dlqreplay.Ref, from int64, limit int) (dlqreplay.Page, error) {
	if limit <= 0 {
		limit = 50
	}
	ch, err := conn.Channel()
	if err != nil {
		return dlqreplay.Page{}, fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	// Streams refuse consumers without a prefetch.
	if err := ch.Qos(limit, 0, false); err != nil {
		return dlqreplay.Page{}, fmt.Errorf("set prefetch: %w", err)
	}
	var offset any = "first"
	if from >= 0 {
		offset = from
	}
	tag := "queuewatch-browse-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	deliveries, err := ch.ConsumeWithContext(ctx, ref.Name, tag, false, false, false, false, amqp.Table{"x-stream-offset": offset})
	if err != nil {
		if isNotFound(err) {
			return dlqreplay.Page{}, fmt.Errorf("queue %q: %w", ref.Name, dlqreplay.ErrUnknownDLQ)
		}
		return dlqreplay.Page{}, fmt.Errorf("consume stream %q: %w", ref.Name, err)
	}
	got, err := b.takeStream(ctx, deliveries, from, limit)
	if cerr := ch.Cancel(tag, false); cerr != nil && err == nil {
		err = fmt.Errorf("cancel browse consumer: %w", cerr)
	}
	if err != nil {
		return dlqreplay.Page{}, err
	}
	page := dlqreplay.Page{}
	for _, s := range got {
		m := message(&s.d, s.offset)
		if s.d.MessageId == "" {
			// The offset names a stream message for good, unlike a
			// content digest, which identical messages share.
			m.ID = "offset-" + strconv.FormatInt(s.offset, 10)
		}
		page.Messages = append(page.Messages, m)
	}
	if len(got) == limit {
		page.Next = strconv.FormatInt(got[len(got)-1].offset+1, 10)
	}
	return page, nil
}

// streamDelivery is a delivery with its stream offset.
type streamDelivery struct {
	d      amqp.Delivery
	offset int64
}

// takeStream collects up to limit deliveries at or after offset from. Each
// is acked on arrival: on a stream an ack only returns consumer credit, so
// deliveries skipped below from do not use up the prefetch.
func (b *Backend) takeStream(ctx context.Context, deliveries <-chan amqp.Delivery, from int64, limit int) ([]streamDelivery, error) {
	var got []streamDelivery
	idle := time.NewTimer(b.opts.StreamIdle)
	defer idle.Stop()
	for len(got) < limit {
		select {
		case d, ok := <-deliveries:
			if !ok {
				return nil, errors.New("browse consumer closed by the broker")
			}
			off, ok := toInt(d.Headers["x-stream-offset"])
			if !ok {
				return nil, fmt.Errorf("stream delivery %d has no x-stream-offset header", d.DeliveryTag)
			}
			if err := d.Ack(false); err != nil {
				return nil, fmt.Errorf("ack stream delivery: %w", err)
			}
			// A stream is read in chunks; a consumer starting inside one
			// may be handed the chunk's earlier messages.
			if off >= from {
				got = append(got, streamDelivery{d: d, offset: off})
			}
			idle.Reset(b.opts.StreamIdle)
		case <-idle.C:
			return got, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("browse stream: %w", ctx.Err())
		}
	}
	return got, nil
}

// isStream tells whether the DLQ is a stream. qtype is the management
// API's type ("" when unknown). Without it the queue is probed with a
// stream consume, which any other queue type refuses with
// PRECONDITION_FAILED before delivering anything. queue.declare cannot
// tell: on RabbitMQ 3.10 it reports a stream's message count only a few
// seconds after a publish, 0 before.
func (b *Backend) isStream(ctx context.Context, conn *amqp.Connection, ref dlqreplay.Ref, qtype string) (bool, error) {
	if qtype != "" {
		return qtype == queueTypeStream, nil
	}
	ch, err := conn.Channel()
	if err != nil {
		return false, fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	if err := ch.Qos(1, 0, false); err != nil {
		return false, fmt.Errorf("set prefetch: %w", err)
	}
	tag := "queuewatch-probe-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	_, err = ch.ConsumeWithContext(ctx, ref.Name, tag, false, false, false, false, amqp.Table{"x-stream-offset": "next"})
	switch {
	case err == nil:
		return true, nil
	case isPreconditionFailed(err):
		return false, nil
	case isExclusiveRefusal(err):
		// Only a job's exclusive consumer refuses us, and jobs never
		// run on streams.
		return false, nil
	}
	return false, fmt.Errorf("probe queue type of %q: %w", ref.Name, err)
}

func isPreconditionFailed(err error) bool {
	var ae *amqp.Error
	return errors.As(err, &ae) && ae.Code == amqp.PreconditionFailed
}
