package alerts

import "github.com/queuewatch/queuewatch/queue"

// consumerPage is the UI page of one JetStream consumer.
var consumerPage = `/nats/` + pathLabel("cluster") + `/streams/` + pathLabel("stream") + `/consumers/` + pathLabel("consumer")

// natsSpecs are the JetStream consumer alerts. They use the group
// thresholds and overrides (an override's group pattern selects consumers
// by name), so one alerts section governs every consumer of any broker.
func natsSpecs(p ruleParams) []alertSpec {
	const who = `Consumer {{ $labels.consumer }} of stream {{ $labels.stream }} on NATS cluster {{ $labels.cluster }}`
	consumers := readers{
		status: "queuewatch_nats_consumer_status", identity: []string{"cluster", "stream", "consumer"}, name: "consumer", page: consumerPage,
		backlog:     func(m string) string { return selector("queuewatch_nats_consumer_pending_messages", m) },
		lagSeconds:  func(m string) string { return selector("queuewatch_nats_consumer_lag_seconds", m) },
		backlogKind: lagHigh, lagSecondsKind: lagSecondsHigh,
	}
	return []alertSpec{
		consumers.backlogHigh(p, alertText{
			name: "QueuewatchNATSConsumerPendingHigh", severity: SeverityWarning,
			summary:     `NATS consumer {{ $labels.consumer }} is far behind`,
			description: who + ` has {{ $value | humanize }} messages not yet delivered, over the threshold of <threshold>, for ` + p.hw + `.`,
		}),
		consumers.lagSecondsHigh(p, alertText{
			name: "QueuewatchNATSConsumerLagSecondsHigh", severity: SeverityCritical,
			summary:     `NATS consumer {{ $labels.consumer }} processes old messages`,
			description: `The next message ` + lower(who) + ` will be delivered is {{ $value | humanizeDuration }} old, over the threshold of <threshold>: data reaches its consumers late.`,
		}),
		consumers.inStatus(p, queue.StatusStall, alertText{
			name: "QueuewatchNATSConsumerStalled", severity: SeverityCritical,
			summary:     `NATS consumer {{ $labels.consumer }} is stalled`,
			description: who + ` is stalled with {{ $value | humanize }} messages pending: max_ack_pending is reached, nobody pulls, or its delivered sequence is outside the stream. The consumer page says which.`,
		}),
		consumers.inStatus(p, queue.StatusStop, alertText{
			name: "QueuewatchNATSConsumerStopped", severity: SeverityCritical,
			summary:     `NATS consumer {{ $labels.consumer }} has no subscriber`,
			description: who + ` is a push consumer with {{ $value | humanize }} messages pending and no subscriber on its deliver subject: nobody is consuming.`,
		}),
	}
}

// lower turns the leading "Consumer" of a sentence into "consumer".
func lower(s string) string { return "c" + s[1:] }
