package collectors

import "github.com/queuewatch/queuewatch/queue"

// consumerKey names a JetStream consumer within a source.
type consumerKey struct{ stream, consumer string }

// recordConsumers appends each consumer's pending and ack pending messages
// and lag seconds, and forgets consumers that are gone. The caller holds s.mu.
// It is the consumer page's specific section: its chart draws ack pending,
// which the one reader history (recordReaders) does not keep.
func (s *sourceState) recordConsumers(snap *queue.Snapshot) {
	if len(snap.Consumers) == 0 {
		s.consumers = nil
		return
	}
	out := make(map[consumerKey][]queue.ConsumerPoint, len(snap.Consumers))
	for i := range snap.Consumers {
		c := &snap.Consumers[i]
		k := consumerKey{c.Stream, c.Name}
		p := queue.ConsumerPoint{
			At: snap.Time, Pending: int64(c.Pending), AckPending: c.AckPending,
			LagSeconds: c.LagSeconds, HasLagSeconds: c.HasLagSeconds,
		}
		out[k] = appendBounded(s.consumers[k], p, s.maxPoints)
	}
	s.consumers = out
}

// ConsumerHistory returns the kept history of one JetStream consumer,
// oldest first.
func (c *Collector) ConsumerHistory(cluster, stream, consumer string) []queue.ConsumerPoint {
	return history(c, cluster, func(s *sourceState) []queue.ConsumerPoint { return s.consumerHistory(stream, consumer) })
}

func (s *sourceState) consumerHistory(stream, consumer string) []queue.ConsumerPoint {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]queue.ConsumerPoint(nil), s.consumers[consumerKey{stream, consumer}]...)
}
