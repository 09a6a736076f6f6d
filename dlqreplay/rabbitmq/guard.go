package rabbitmq

import (
	"context"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/dlqreplay"
)

// The delivery-limit guard. On a quorum queue every look at a message
// (a delivery given back) spends one of its deliveries, and a message
// given back once more than the queue's delivery limit is dead-lettered
// or dropped. No read can tell a message's count without spending one, so
// the guard remembers, per DLQ, the head of the queue as this process
// last read it: each message's id and the x-delivery-count it carries
// now. From that it refuses, before reading, a browse that would bring a
// message to the limit (leaving it no delivery to spare for a job's give
// back), says how many safe looks a page has left, and tells a dry run
// how many messages it can read without that risk.
//
// The memory follows the queue: it is dropped when the queue is empty,
// a remembered message a read did not find again is forgotten, and when
// the queue shrank without this process seeing why, a remembered message
// may have moved up by that many places, so the guard looks that much
// further.

// seenMsg is one message as last seen: its id and the x-delivery-count it
// carries in the queue now.
type seenMsg struct {
	id    string
	count int64
}

// memory is what the guard knows of one DLQ.
type memory struct {
	depth int       // the queue's depth after the last read
	head  []seenMsg // the first messages of the queue, in order
	page  cachedPage
}

// cachedPage is the last page a browse read, to show again when reading
// would spend a last safe delivery.
type cachedPage struct {
	after, limit int
	at           time.Time
	page         dlqreplay.Page
}

// reach is how many remembered messages may now be among the first n of
// a queue of the given depth: n, plus how much the queue shrank since.
func (m *memory) reach(depth, n int) int {
	return min(len(m.head), n+max(0, m.depth-depth))
}

// riskiest is the remembered message with the highest count that may be
// among the first n messages, and its index; -1 when none is known.
func (m *memory) riskiest(depth, n int) (int, seenMsg) {
	at, worst := -1, seenMsg{}
	for i, s := range m.head[:m.reach(depth, n)] {
		if at < 0 || s.count > worst.count {
			at, worst = i, s
		}
	}
	return at, worst
}

// safeLooks is how many more times a message delivered count times can be
// looked at (each look spends one delivery) and still keep one delivery
// below limit to spare.
//
// Example: limit 3, a fresh message (count 0) has 2 safe looks: after
// them it carries 2, and a third give back would bring it to 3, the last.
func safeLooks(limit, count int64) int {
	return int(max(0, limit-1-count))
}

// knownSafe is how many messages from the head of a queue of the given
// depth are known to have a safe look left: a dry run reads only those.
// A message this process never saw is not known.
func (m *memory) knownSafe(depth int, limit int64) int {
	if m == nil {
		return 0
	}
	shrink := max(0, m.depth-depth)
	n := 0
	for n < depth && n+shrink < len(m.head) {
		// Position n holds one of the remembered messages n…n+shrink.
		for _, s := range m.head[n : n+shrink+1] {
			if safeLooks(limit, s.count) == 0 {
				return n
			}
		}
		n++
	}
	return n
}

// seen updates the memory after a read of the queue's first messages:
// read are the messages as delivered, kept those given back (now carrying
// one delivery more), and depth the queue's depth after the give back.
// A remembered message the read should have met but did not is forgotten;
// those beyond it stay.
func (m *memory) seen(read, kept []seenMsg, depth int) {
	met := map[seenMsg]bool{}
	for _, s := range read {
		met[s] = true
	}
	head := append([]seenMsg(nil), kept...)
	for _, s := range m.head[min(len(read), len(m.head)):] {
		if !met[s] {
			head = append(head, s)
		}
	}
	m.head, m.depth = head, depth
}

// refusal explains why a look at the first n messages is refused, or is
// "" when it is safe.
func (m *memory) refusal(name string, depth, n int, limit int64) string {
	at, worst := m.riskiest(depth, n)
	if at < 0 || safeLooks(limit, worst.count) > 0 {
		return ""
	}
	why := fmt.Sprintf("message %q (position %d when last read) of queue %q has been delivered %d times and the queue's delivery-limit is %d; "+
		"reading it again would leave it no delivery to spare, and a return past the limit dead-letters or drops it — replay, move or delete it instead",
		worst.id, at, name, worst.count, limit)
	if m.depth > depth {
		why += fmt.Sprintf(" (the queue shrank from %d to %d messages since, so it may have left)", m.depth, depth)
	}
	return why
}

// deliveryCount is the x-delivery-count a delivery carries (0 when none).
func deliveryCount(d *amqp.Delivery) int64 {
	n, _ := toInt(d.Headers["x-delivery-count"])
	return n
}

// asSeen is d as the guard remembers it, given back (returned) or not.
func asSeen(d *amqp.Delivery, returned bool) seenMsg {
	s := seenMsg{id: d.MessageId, count: deliveryCount(d)}
	if returned {
		s.count++
	}
	return s
}

// memoryOf returns the guard's memory of a DLQ, creating it; the caller
// holds b.mu.
func (b *Backend) memoryOf(ref dlqreplay.Ref) *memory {
	m := b.seen[ref.ID()]
	if m == nil {
		m = &memory{}
		b.seen[ref.ID()] = m
	}
	return m
}

// knows reports whether the guard remembers anything of a DLQ.
func (b *Backend) knows(ref dlqreplay.Ref) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seen[ref.ID()] != nil
}

// forget drops what the guard knows of a DLQ (it is empty).
func (b *Backend) forget(ref dlqreplay.Ref) {
	b.mu.Lock()
	delete(b.seen, ref.ID())
	b.mu.Unlock()
}

// remember records a read of the DLQ's first messages (see memory.seen)
// and drops the cached page, which may no longer be what the queue holds.
func (b *Backend) remember(ref dlqreplay.Ref, read, kept []seenMsg, depth int) {
	if depth == 0 {
		b.forget(ref)
		return
	}
	b.mu.Lock()
	m := b.memoryOf(ref)
	m.seen(read, kept, depth)
	m.page = cachedPage{}
	b.mu.Unlock()
}

// readAndKept is what remember needs from deliveries of which those in
// acked were removed rather than given back.
func readAndKept(got []amqp.Delivery, acked map[uint64]bool) (read, kept []seenMsg) {
	for i := range got {
		read = append(read, asSeen(&got[i], false))
		if !acked[got[i].DeliveryTag] {
			kept = append(kept, asSeen(&got[i], true))
		}
	}
	return read, kept
}

// dryRunReadable is how many messages from the DLQ's head a dry run may
// read (memory.knownSafe).
func (b *Backend) dryRunReadable(ref dlqreplay.Ref, depth int, limit int64) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seen[ref.ID()].knownSafe(depth, limit)
}

// lockBrowse serializes browses of one DLQ and returns the unlock.
func (b *Backend) lockBrowse(ref dlqreplay.Ref) func() {
	b.mu.Lock()
	l := b.browsing[ref.ID()]
	if l == nil {
		l = &sync.Mutex{}
		b.browsing[ref.ID()] = l
	}
	b.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// returnedDepth is the queue's depth once the broker counts at least n
// messages given back on ch: a quorum queue applies returns after the nack
// is sent, and a depth read before that would look emptier than the queue
// is. It gives up after a few seconds and returns the last depth read, or
// n when it cannot read one.
func returnedDepth(ctx context.Context, ch *amqp.Channel, name string, n int) int {
	deadline := time.Now().Add(3 * time.Second)
	for {
		q, err := ch.QueueDeclarePassive(name, false, false, false, false, nil)
		if err != nil {
			return n
		}
		if q.Messages >= n || time.Now().After(deadline) || ctx.Err() != nil {
			return q.Messages
		}
		time.Sleep(10 * time.Millisecond)
	}
}
