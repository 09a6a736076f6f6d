package rabbitmq

import (
	"context"
	"fmt"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/dlqreplay"
)

// browser reads one page of a DLQ and returns everything it read.
type browser struct {
	b     *Backend
	ref   dlqreplay.Ref
	conn  *amqp.Connection
	limit int64  // quorum delivery-limit, 0 when none or unknown
	qtype string // management API queue type, "" when unknown
}

// page reads limit messages from position after (-1: the head). A queue
// of unknown type (no management API) is probed first and, when it is a
// stream, read by offset.
func (br *browser) page(ctx context.Context, after, limit int) (dlqreplay.Page, error) {
	ch, err := br.conn.Channel()
	if err != nil {
		return dlqreplay.Page{}, fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(br.ref.Name, false, false, false, false, nil)
	if err != nil {
		if isNotFound(err) {
			return dlqreplay.Page{}, fmt.Errorf("queue %q: %w", br.ref.Name, dlqreplay.ErrUnknownDLQ)
		}
		return dlqreplay.Page{}, fmt.Errorf("inspect queue %q: %w", br.ref.Name, err)
	}
	stream, err := br.b.isStream(ctx, br.conn, br.ref, br.qtype)
	if err != nil {
		return dlqreplay.Page{}, err
	}
	if stream {
		return br.b.streamPage(ctx, br.conn, br.ref, int64(after), limit)
	}
	skip := max(after, 0)
	if skip+limit > 10_000 {
		return dlqreplay.Page{}, fmt.Errorf("browsing past position 10000 is not supported: %w", dlqreplay.ErrInvalidRequest)
	}
	want := min(q.Messages, skip+limit)
	if want == 0 {
		return dlqreplay.Page{}, nil
	}
	if err := ch.Qos(want, 0, false); err != nil {
		return dlqreplay.Page{}, fmt.Errorf("set prefetch: %w", err)
	}
	tag := "queuewatch-browse-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	deliveries, err := ch.ConsumeWithContext(ctx, br.ref.Name, tag, false, false, false, false, nil)
	if err != nil {
		if isExclusiveRefusal(err) {
			return dlqreplay.Page{}, &dlqreplay.ConflictError{DLQ: br.ref.ID(), JobID: br.b.holder(ctx, br.ref)}
		}
		return dlqreplay.Page{}, fmt.Errorf("consume %q: %w", br.ref.Name, err)
	}
	var got []amqp.Delivery
	timeout := time.NewTimer(5 * time.Second)
	defer timeout.Stop()
read:
	for len(got) < want {
		select {
		case d, ok := <-deliveries:
			if !ok {
				break read
			}
			got = append(got, d)
		case <-timeout.C:
			// Another consumer took some messages; show what we have.
			break read
		case <-ctx.Done():
			break read
		}
	}
	if err := ch.Cancel(tag, false); err != nil {
		return dlqreplay.Page{}, fmt.Errorf("cancel browse consumer: %w", err)
	}
	for d := range deliveries {
		got = append(got, d)
	}
	if skip == 0 && len(got) > 0 { // the collector dates the DLQ's oldest message by it
		br.b.opts.Cluster.SawHead(br.ref.VHost, br.ref.Name, q.Messages, &got[0])
	}
	refusal, err := br.giveBack(ctx, ch, got)
	if err != nil {
		return dlqreplay.Page{}, err
	}
	if refusal != "" {
		return dlqreplay.Page{}, fmt.Errorf("%w: %s", dlqreplay.ErrDeliveryLimit, refusal)
	}
	page := dlqreplay.Page{}
	for i := skip; i < min(len(got), skip+limit); i++ {
		page.Messages = append(page.Messages, message(&got[i], int64(i)))
	}
	if skip+limit < q.Messages && len(got) == skip+limit {
		page.Next = strconv.Itoa(skip + limit)
	}
	return page, nil
}

// giveBack returns every delivery to the queue in order. On a quorum queue
// with a delivery limit, a message whose return would exceed the limit is
// first copied to the queue's tail (confirmed) and acked, and a return that
// brings a message to the limit makes later browses refuse; the refusal
// reason is returned.
func (br *browser) giveBack(ctx context.Context, ch *amqp.Channel, got []amqp.Delivery) (string, error) {
	if len(got) == 0 {
		return "", nil
	}
	var refusal string
	saved := map[uint64]bool{}
	if br.limit > 0 {
		var err error
		if refusal, err = br.b.spareLimit(ctx, br.conn, br.ref, br.limit, got, saved); err != nil {
			return "", err
		}
	}
	// Tag 0 with multiple returns every outstanding delivery, in order.
	if err := ch.Nack(0, true, true); err != nil {
		return "", fmt.Errorf("return browsed messages: %w", err)
	}
	if refusal != "" {
		br.b.mu.Lock()
		br.b.refused[br.ref.ID()] = refusal
		br.b.mu.Unlock()
	}
	return refusal, nil
}

// spareLimit protects a quorum queue's delivery limit before held messages
// are returned: those a return would drop are re-published to the queue
// (confirmed) and acked; if any return brings a message to the limit, a
// refusal is returned so browsing stops spending deliveries.
func (b *Backend) spareLimit(ctx context.Context, conn *amqp.Connection, ref dlqreplay.Ref, limit int64, held []amqp.Delivery, saved map[uint64]bool) (string, error) {
	var refusal string
	var p *publisher
	defer func() {
		if p != nil {
			p.close()
		}
	}()
	for i := range held {
		d := &held[i]
		n, _ := toInt(d.Headers["x-delivery-count"])
		if n+1 >= limit && refusal == "" {
			refusal = fmt.Sprintf("message %d of queue %q has been delivered %d times and the queue's delivery-limit is %d; "+
				"browsing again would dead-letter or drop it — replay, move or delete it instead", i, ref.Name, n+1, limit)
		}
		if n+1 <= limit {
			continue
		}
		if p == nil {
			var err error
			if p, err = newPublisher(conn, 1, b.opts.ConfirmTimeout); err != nil {
				return "", err
			}
		}
		if err := p.publish(ctx, "", ref.Name, "", copyOf(d, "", b.user)); err != nil {
			return "", err
		}
		if s := p.settleAll(); s[0].err != nil {
			return "", fmt.Errorf("save message at its delivery limit: %w", s[0].err)
		}
		if err := d.Ack(false); err != nil {
			return "", fmt.Errorf("ack message saved at its delivery limit: %w", err)
		}
		saved[d.DeliveryTag] = true
		b.opts.Logger.Warn("message at its delivery limit copied to the queue's tail", "queue", ref.Name, "message", d.MessageId)
	}
	return refusal, nil
}
