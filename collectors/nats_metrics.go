package collectors

import "github.com/queuewatch/queuewatch/queue"

// NATS JetStream families. A consumer is named by cluster, stream and
// consumer; a replicated stream is reported once, from its leader's view.
var (
	natsConsumerLabels = []string{"cluster", "stream", "consumer"}
	natsStreamLabels   = []string{"cluster", "stream"}

	descNATSPending     = desc("nats_consumer_pending_messages", "Messages matching the consumer's filter not yet delivered to it (num_pending).", natsConsumerLabels...)
	descNATSAckPending  = desc("nats_consumer_ack_pending_messages", "Messages delivered to the consumer and not yet acknowledged (num_ack_pending).", natsConsumerLabels...)
	descNATSMaxAck      = desc("nats_consumer_max_ack_pending", "The consumer's max_ack_pending: with this many messages unacknowledged the server delivers nothing more.", natsConsumerLabels...)
	descNATSRedelivered = desc("nats_consumer_redelivered_messages", "Unacknowledged messages delivered more than once (num_redelivered).", natsConsumerLabels...)
	descNATSWaiting     = desc("nats_consumer_waiting_pulls", "Pull requests waiting for messages (num_waiting); 0 for push consumers.", natsConsumerLabels...)
	descNATSLagSeconds  = desc("nats_consumer_lag_seconds", "Age in seconds of the next message the consumer has not been delivered; 0 when nothing is pending.", natsConsumerLabels...)
	descNATSStatus      = statusDesc("nats_consumer_status", "consumer", natsConsumerLabels...)
	descNATSMessages    = desc("nats_stream_messages", "Messages stored in the stream.", natsStreamLabels...)
	descNATSBytes       = desc("nats_stream_bytes", "Bytes stored in the stream.", natsStreamLabels...)
	descNATSFirstSeq    = desc("nats_stream_first_sequence", "Sequence of the first message still stored in the stream.", natsStreamLabels...)
	descNATSLastSeq     = desc("nats_stream_last_sequence", "Sequence of the last message stored in the stream.", natsStreamLabels...)

	natsFamilies = []*family{
		descNATSPending, descNATSAckPending, descNATSMaxAck, descNATSRedelivered, descNATSWaiting,
		descNATSLagSeconds, descNATSStatus, descNATSMessages, descNATSBytes, descNATSFirstSeq, descNATSLastSeq,
	}
)

// collectNATS emits the snapshot's streams and consumers. A consumer that
// could not be read has only its status series (error), like a Kafka group.
func collectNATS(ch sink, snap *queue.Snapshot) {
	cl := snap.Cluster
	for i := range snap.Streams {
		s := &snap.Streams[i]
		ch.gauge(descNATSMessages, float64(s.Messages), cl, s.Name)
		ch.gauge(descNATSBytes, float64(s.Bytes), cl, s.Name)
		ch.gauge(descNATSFirstSeq, float64(s.FirstSeq), cl, s.Name)
		ch.gauge(descNATSLastSeq, float64(s.LastSeq), cl, s.Name)
	}
	for i := range snap.Consumers {
		c := &snap.Consumers[i]
		emitStatus(ch, descNATSStatus, c.EffectiveStatus(), cl, c.Stream, c.Name)
		if c.Err != "" {
			continue
		}
		ch.gauge(descNATSPending, float64(c.Pending), cl, c.Stream, c.Name)
		ch.gauge(descNATSAckPending, float64(c.AckPending), cl, c.Stream, c.Name)
		if c.MaxAckPending > 0 {
			ch.gauge(descNATSMaxAck, float64(c.MaxAckPending), cl, c.Stream, c.Name)
		}
		ch.gauge(descNATSRedelivered, float64(c.Redelivered), cl, c.Stream, c.Name)
		ch.gauge(descNATSWaiting, float64(c.Waiting), cl, c.Stream, c.Name)
		if c.HasLagSeconds {
			ch.gauge(descNATSLagSeconds, c.LagSeconds, cl, c.Stream, c.Name)
		}
		emitHeadroom(ch, c.Headroom, snap.Broker, cl, c.Stream, c.Name)
	}
}
