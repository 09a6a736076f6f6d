package alerts

import "time"

// consumerPage is the UI page of one JetStream consumer.
var consumerPage = `/nats/` + pathLabel("cluster") + `/streams/` + pathLabel("stream") + `/consumers/` + pathLabel("consumer")

// natsSpecs are the JetStream consumer alerts. They use the group
// thresholds and overrides (an override's group pattern selects consumers
// by name), so one alerts section governs every consumer of any broker.
func natsSpecs(twoPolls, window time.Duration, hw string) []alertSpec {
	const who = `Consumer {{ $labels.consumer }} of stream {{ $labels.stream }} on NATS cluster {{ $labels.cluster }}`
	return []alertSpec{
		{
			name: "QueuewatchNATSConsumerPendingHigh", severity: SeverityWarning, forDur: window, kind: natsPendingHigh, page: consumerPage,
			summary:     `NATS consumer {{ $labels.consumer }} is far behind`,
			description: who + ` has {{ $value | humanize }} messages not yet delivered, over the threshold of <threshold>, for ` + hw + `.`,
			expr: func(m, t string) string {
				return selector("queuewatch_nats_consumer_pending_messages", m) + ` > ` + t
			},
		},
		{
			name: "QueuewatchNATSConsumerLagSecondsHigh", severity: SeverityCritical, forDur: window, kind: natsLagSecondsHigh, page: consumerPage,
			summary:     `NATS consumer {{ $labels.consumer }} processes old messages`,
			description: `The next message ` + lower(who) + ` will be delivered is {{ $value | humanizeDuration }} old, over the threshold of <threshold>: data reaches its consumers late.`,
			expr: func(m, t string) string {
				return selector("queuewatch_nats_consumer_lag_seconds", m) + ` > ` + t
			},
		},
		{
			name: "QueuewatchNATSConsumerStalled", severity: SeverityCritical, forDur: twoPolls, page: consumerPage,
			summary:     `NATS consumer {{ $labels.consumer }} is stalled`,
			description: who + ` is stalled with {{ $value | humanize }} messages pending: max_ack_pending is reached, nobody pulls, or its delivered sequence is outside the stream. The consumer page says which.`,
			expr: func(string, string) string {
				return `queuewatch_nats_consumer_pending_messages and on (cluster, stream, consumer) (queuewatch_nats_consumer_status{status="stall"} == 1)`
			},
		},
		{
			name: "QueuewatchNATSConsumerStopped", severity: SeverityCritical, forDur: twoPolls, page: consumerPage,
			summary:     `NATS consumer {{ $labels.consumer }} has no subscriber`,
			description: who + ` is a push consumer with {{ $value | humanize }} messages pending and no subscriber on its deliver subject: nobody is consuming.`,
			expr: func(string, string) string {
				return `queuewatch_nats_consumer_pending_messages and on (cluster, stream, consumer) (queuewatch_nats_consumer_status{status="stop"} == 1)`
			},
		},
	}
}

// lower turns the leading "Consumer" of a sentence into "consumer".
func lower(s string) string { return "c" + s[1:] }
