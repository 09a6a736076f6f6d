package alerts

import "github.com/queuewatch/queuewatch/queue"

// shareGroupPage is the UI page of one Kafka share group.
var shareGroupPage = `/kafka/` + pathLabel("cluster") + `/share-groups/` + pathLabel("group")

// shareSpecs are the Kafka share group alerts (KIP-932): no members while
// records wait, no start offset moving, and lag over the group threshold
// (the group overrides select share groups by name too). A share group's
// lag is summed over its partitions whatever its lag_source: an estimate
// is an upper bound, which the description says. Kafka tells no record's
// age for a share group, so there is no lag seconds alert.
func shareSpecs(p ruleParams) []alertSpec {
	const who = `Share group {{ $labels.group }} on Kafka cluster {{ $labels.cluster }}`
	groups := readers{
		status: "queuewatch_kafka_sharegroup_status", identity: []string{"cluster", "group"}, name: "group", page: shareGroupPage,
		backlog: func(m string) string {
			return `sum by (cluster, group) (` + selector("queuewatch_kafka_sharegroup_lag", m) + `)`
		},
		backlogKind: lagHigh,
	}
	return []alertSpec{
		groups.backlogHigh(p, alertText{
			name: "QueuewatchKafkaShareGroupLagHigh", severity: SeverityWarning,
			summary:     `Share group {{ $labels.group }} is far behind`,
			description: who + ` has {{ $value | humanize }} records not yet done with, over the threshold of <threshold>, for ` + p.hw + ` (an upper bound where the broker sends no lag and it is estimated).`,
		}),
		groups.inStatus(p, queue.StatusStall, alertText{
			name: "QueuewatchKafkaShareGroupStalled", severity: SeverityCritical,
			summary:     `Share group {{ $labels.group }} is stalled`,
			description: who + ` has members and {{ $value | humanize }} records waiting, and no share-partition start offset moved since the last poll: its members hold or keep failing the oldest records.`,
		}),
		groups.inStatus(p, queue.StatusStop, alertText{
			name: "QueuewatchKafkaShareGroupStopped", severity: SeverityCritical,
			summary:     `Share group {{ $labels.group }} has no members`,
			description: who + ` has {{ $value | humanize }} records waiting and no members: nobody is consuming.`,
		}),
	}
}
