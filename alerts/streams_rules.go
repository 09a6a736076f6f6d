package alerts

import "github.com/queuewatch/queuewatch/queue"

// streamsGroupPage is the UI page of one Kafka streams group.
var streamsGroupPage = `/kafka/` + pathLabel("cluster") + `/streams-groups/` + pathLabel("group")

// streamsSpecs are the Kafka streams group alerts (KIP-1071): no members
// while records wait, committed offsets not moving while the lag grows,
// and lag over the group threshold (the group overrides select streams
// groups by name too). The lag is summed over the source partitions,
// repartition topics included: records there still wait for the
// application's next subtopology.
func streamsSpecs(p ruleParams) []alertSpec {
	const who = `Streams group {{ $labels.group }} on Kafka cluster {{ $labels.cluster }}`
	groups := readers{
		status: "queuewatch_kafka_streamsgroup_status", identity: []string{"cluster", "group"}, name: "group", page: streamsGroupPage,
		backlog: func(m string) string {
			return `sum by (cluster, group) (` + selector("queuewatch_kafka_streamsgroup_lag", m) + `)`
		},
		backlogKind: lagHigh,
	}
	return []alertSpec{
		groups.backlogHigh(p, alertText{
			name: "QueuewatchKafkaStreamsGroupLagHigh", severity: SeverityWarning,
			summary:     `Streams group {{ $labels.group }} is far behind`,
			description: who + ` has {{ $value | humanize }} records to process on its source and repartition topics, over the threshold of <threshold>, for ` + p.hw + `.`,
		}),
		groups.inStatus(p, queue.StatusStall, alertText{
			name: "QueuewatchKafkaStreamsGroupStalled", severity: SeverityCritical,
			summary:     `Streams group {{ $labels.group }} is stalled`,
			description: who + ` has members and {{ $value | humanize }} records waiting, more at each poll, and no committed offset moved: its tasks are stuck.`,
		}),
		groups.inStatus(p, queue.StatusStop, alertText{
			name: "QueuewatchKafkaStreamsGroupStopped", severity: SeverityCritical,
			summary:     `Streams group {{ $labels.group }} has no members`,
			description: who + ` has {{ $value | humanize }} records waiting and no members: no task of the application runs.`,
		}),
	}
}
