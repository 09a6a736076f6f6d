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
	if q.Messages == 0 && br.limit > 0 && br.b.knows(br.ref) {
		// Empty, or still counting messages another process just gave
		// back: what the guard knows goes only when it is empty.
		q.Messages = returnedDepth(ctx, ch, br.ref.Name, 1)
		if q.Messages == 0 {
			br.b.forget(br.ref)
		}
	}
	want := min(q.Messages, skip+limit)
	if want == 0 {
		return dlqreplay.Page{}, nil
	}
	if br.limit > 0 {
		if p, done, err := br.guard(q.Messages, want, after, limit); done {
			return p, err
		}
	}
	got, err := br.read(ctx, ch, want)
	if err != nil {
		return dlqreplay.Page{}, err
	}
	if skip == 0 && len(got) > 0 { // the collector dates the DLQ's oldest message by it
		br.b.opts.Cluster.SawHead(br.ref.VHost, br.ref.Name, q.Messages, &got[0])
	}
	saved := map[uint64]bool{}
	if err := br.giveBack(ctx, ch, got, saved); err != nil {
		return dlqreplay.Page{}, err
	}
	page := dlqreplay.Page{}
	for i := skip; i < min(len(got), skip+limit); i++ {
		page.Messages = append(page.Messages, message(&got[i], int64(i)))
	}
	if skip+limit < q.Messages && len(got) == skip+limit {
		page.Next = strconv.Itoa(skip + limit)
	}
	if br.limit > 0 {
		depth := returnedDepth(ctx, ch, br.ref.Name, len(got)-len(saved))
		br.note(&page, got, saved, depth, after, limit)
	}
	return page, nil
}

// read consumes up to want messages from the head without acking them.
func (br *browser) read(ctx context.Context, ch *amqp.Channel, want int) ([]amqp.Delivery, error) {
	if err := ch.Qos(want, 0, false); err != nil {
		return nil, fmt.Errorf("set prefetch: %w", err)
	}
	tag := "queuewatch-browse-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	deliveries, err := ch.ConsumeWithContext(ctx, br.ref.Name, tag, false, false, false, false, nil)
	if err != nil {
		if isExclusiveRefusal(err) {
			return nil, &dlqreplay.ConflictError{DLQ: br.ref.ID(), JobID: br.b.holder(ctx, br.ref)}
		}
		return nil, fmt.Errorf("consume %q: %w", br.ref.Name, err)
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
		return nil, fmt.Errorf("cancel browse consumer: %w", err)
	}
	for d := range deliveries {
		got = append(got, d)
	}
	return got, nil
}

// guard answers a browse of a quorum queue's first want messages without
// reading them when the read would bring one to its delivery limit: with
// the last page read, when that was this very page and the queue's depth
// has not changed since, and otherwise with ErrDeliveryLimit. done is
// false when the read is safe (or nothing is known).
func (br *browser) guard(depth, want, after, limit int) (p dlqreplay.Page, done bool, err error) {
	br.b.mu.Lock()
	defer br.b.mu.Unlock()
	m := br.b.seen[br.ref.ID()]
	if m == nil {
		return dlqreplay.Page{}, false, nil
	}
	why := m.refusal(br.ref.Name, depth, want, br.limit)
	if why == "" {
		return dlqreplay.Page{}, false, nil
	}
	if c := m.page; !c.at.IsZero() && c.after == after && c.limit == limit && m.depth == depth {
		p = c.page
		p.CachedAt = c.at
		p.SafeBrowsesLeft = new(int)
		return p, true, nil
	}
	return dlqreplay.Page{}, true, fmt.Errorf("%w: %s", dlqreplay.ErrDeliveryLimit, why)
}

// note remembers what a browse of a quorum queue read, caches the page and
// tells it how many more times it can be read safely.
func (br *browser) note(page *dlqreplay.Page, got []amqp.Delivery, saved map[uint64]bool, depth, after, limit int) {
	read, kept := readAndKept(got, saved)
	br.b.remember(br.ref, read, kept, depth)
	br.b.mu.Lock()
	defer br.b.mu.Unlock()
	m := br.b.seen[br.ref.ID()]
	if m == nil {
		return
	}
	left := safeLooks(br.limit, 0)
	if at, worst := m.riskiest(depth, len(got)); at >= 0 {
		left = safeLooks(br.limit, worst.count)
	}
	page.SafeBrowsesLeft = &left
	m.page = cachedPage{after: after, limit: limit, at: time.Now(), page: *page}
}

// giveBack returns every delivery to the queue in order. On a quorum queue
// with a delivery limit, a message the return would drop (it is already at
// the limit, which only a read that knew nothing of it finds) is first
// copied to the queue's tail (confirmed) and acked; saved gets its tag.
func (br *browser) giveBack(ctx context.Context, ch *amqp.Channel, got []amqp.Delivery, saved map[uint64]bool) error {
	if len(got) == 0 {
		return nil
	}
	if br.limit > 0 {
		if err := br.b.spareLimit(ctx, br.conn, br.ref, br.limit, got, saved); err != nil {
			return err
		}
	}
	// Tag 0 with multiple returns every outstanding delivery, in order.
	if err := ch.Nack(0, true, true); err != nil {
		return fmt.Errorf("return browsed messages: %w", err)
	}
	return nil
}

// spareLimit protects a quorum queue's delivery limit before held messages
// are returned: those a return would drop are re-published to the queue
// (confirmed) and acked, and saved gets their tags.
func (b *Backend) spareLimit(ctx context.Context, conn *amqp.Connection, ref dlqreplay.Ref, limit int64, held []amqp.Delivery, saved map[uint64]bool) error {
	var p *publisher
	defer func() {
		if p != nil {
			p.close()
		}
	}()
	for i := range held {
		d := &held[i]
		if saved[d.DeliveryTag] || deliveryCount(d) < limit {
			continue
		}
		if p == nil {
			var err error
			if p, err = newPublisher(conn, 1, b.opts.ConfirmTimeout); err != nil {
				return err
			}
		}
		if err := p.publish(ctx, "", ref.Name, "", copyOf(d, dlqreplay.Replay{}, b.user)); err != nil {
			return err
		}
		if s := p.settleAll(); s[0].err != nil {
			return fmt.Errorf("save message at its delivery limit: %w", s[0].err)
		}
		if err := d.Ack(false); err != nil {
			return fmt.Errorf("ack message saved at its delivery limit: %w", err)
		}
		saved[d.DeliveryTag] = true
		b.opts.Logger.Warn("message at its delivery limit copied to the queue's tail", "queue", ref.Name, "message", d.MessageId)
	}
	return nil
}
