package sqs

import (
	"strconv"
	"time"
)

// This file keeps the oldest SentTimestamp each queue's receives saw.
// SQS's API tells no message's age without receiving it, and the collector
// must not receive (a receive hides a message and counts towards its
// delivery limit), so it estimates a queue's oldest age from what the
// replay backend's browses and jobs received, which the operator asked
// for.

// SentTimestamp is when the message with these system attributes was
// sent: its SentTimestamp attribute, epoch milliseconds.
func SentTimestamp(attrs map[string]string) (time.Time, bool) {
	ms, err := strconv.ParseInt(attrs["SentTimestamp"], 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(ms).UTC(), true
}

// SawSent records that a receive from queue got a message sent at sent;
// the queue keeps the oldest time recorded until ForgetSent.
func (c *Cluster) SawSent(queue string, sent time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.oldest == nil {
		c.oldest = map[string]time.Time{}
	}
	if t, ok := c.oldest[queue]; !ok || sent.Before(t) {
		c.oldest[queue] = sent
	}
}

// OldestSent is the oldest send time recorded for queue since it was last
// forgotten. The message sent then was in the queue when it was received,
// and no delete queuewatch knows of has removed it, so the queue's oldest
// message is at least that old.
func (c *Cluster) OldestSent(queue string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.oldest[queue]
	return t, ok
}

// ForgetSent drops what receives saw of queue: it was found empty, or
// messages were deleted from it (the oldest maybe among them). The next
// browse learns it again.
func (c *Cluster) ForgetSent(queue string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.oldest, queue)
}
