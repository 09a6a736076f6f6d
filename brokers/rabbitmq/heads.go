package rabbitmq

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// maxHeads bounds the head sightings kept per cluster.
const maxHeads = 10_000

// HeadSighting is what a browse saw at the head of a queue: reading a
// head is only safe while browsing (which the operator asked for), so the
// collector, which must not read it, estimates the oldest age from the
// last sighting.
type HeadSighting struct {
	// At is when the head message was dead-lettered (x-death[0].time),
	// else its timestamp property.
	At time.Time
	// Seen is when the browse read it.
	Seen time.Time
	// Ready is how many messages were ready when the browse began: while
	// no consumer holds any, fewer mean the head may have left.
	Ready int64
}

type headKey struct{ vhost, queue string }

// SawHead records the head message of vhost/queue as a browse read it,
// with the queue's ready count before the browse. A message with neither
// an x-death time nor a timestamp records nothing.
func (c *Cluster) SawHead(vhost, queue string, ready int, head *amqp.Delivery) {
	at, ok := DeadLetteredAt(head)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.heads == nil {
		c.heads = map[headKey]HeadSighting{}
	}
	k := headKey{vhost, queue}
	if _, ok := c.heads[k]; !ok && len(c.heads) >= maxHeads {
		c.dropOldestHead()
	}
	c.heads[k] = HeadSighting{At: at, Seen: time.Now(), Ready: int64(ready)}
}

func (c *Cluster) dropOldestHead() {
	var oldest headKey
	var first time.Time
	for k, h := range c.heads {
		if first.IsZero() || h.Seen.Before(first) {
			oldest, first = k, h.Seen
		}
	}
	delete(c.heads, oldest)
}

// HeadSeen returns the last sighting of vhost/queue's head.
func (c *Cluster) HeadSeen(vhost, queue string) (HeadSighting, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.heads[headKey{vhost, queue}]
	return h, ok
}

// ForgetHead drops a sighting of vhost/queue's head made before t: the
// caller saw messages leave the queue after it, so the head may be gone.
func (c *Cluster) ForgetHead(vhost, queue string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := headKey{vhost, queue}
	if h, ok := c.heads[k]; ok && h.Seen.Before(t) {
		delete(c.heads, k)
	}
}
