package alerts

import (
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// groupPage is the UI page of one consumer group.
var groupPage = `/kafka/` + pathLabel("cluster") + `/groups/` + pathLabel("group")

// kafkaSpecs are the consumer group alerts: lag in messages and seconds
// over the thresholds, lag still rising, and the stall and stop statuses.
func kafkaSpecs(p ruleParams) []alertSpec {
	lag := lagSeries{p.cfg.Metrics}
	groups := readers{
		status: "queuewatch_kafka_consumergroup_status", identity: []string{"cluster", "group"}, name: "group", page: groupPage,
		backlog: lag.group, lagSeconds: lag.maxSeconds, backlogKind: lagHigh, lagSecondsKind: lagSecondsHigh,
	}
	w := promDuration(p.window)
	return []alertSpec{
		groups.backlogHigh(p, alertText{
			name: "QueuewatchKafkaConsumerLagHigh", severity: SeverityWarning,
			summary:     `Consumer group {{ $labels.group }} is far behind`,
			description: `Consumer group {{ $labels.group }} on Kafka cluster {{ $labels.cluster }} is {{ $value | humanize }} messages behind, over the threshold of <threshold>, for ` + p.hw + `.`,
		}),
		{
			name: "QueuewatchKafkaConsumerLagGrowing", severity: SeverityWarning, forDur: p.window, kind: lagHigh, page: groupPage,
			summary:     `Consumer group {{ $labels.group }} is falling further behind`,
			description: `Consumer group {{ $labels.group }} on Kafka cluster {{ $labels.cluster }} is {{ $value | humanize }} messages behind, over the threshold of <threshold>, and its lag kept rising over ` + p.hw + `: it consumes slower than producers produce.`,
			expr: func(m, t string) string {
				return `(` + lag.group(m) + ` > ` + t + `) and on (cluster, group) ` +
					`(sum by (cluster, group) (delta(` + lag.selector(m) + `[` + w + `])) > 0)`
			},
		},
		groups.lagSecondsHigh(p, alertText{
			name: "QueuewatchKafkaConsumerLagSecondsHigh", severity: SeverityCritical,
			summary:     `Consumer group {{ $labels.group }} processes old records`,
			description: `The next record consumer group {{ $labels.group }} on Kafka cluster {{ $labels.cluster }} will read is {{ $value | humanizeDuration }} old, over the threshold of <threshold>: data reaches its consumers late.`,
		}),
		groups.inStatus(p, queue.StatusStall, alertText{
			name: "QueuewatchKafkaConsumerGroupStalled", severity: SeverityCritical,
			summary:     `Consumer group {{ $labels.group }} is stalled`,
			description: `Consumer group {{ $labels.group }} on Kafka cluster {{ $labels.cluster }} has members, but its committed offset has not moved for ` + p.hw + ` while it is {{ $value | humanize }} messages behind: the consumer is alive but stuck.`,
		}),
		groups.inStatus(p, queue.StatusStop, alertText{
			name: "QueuewatchKafkaConsumerGroupStopped", severity: SeverityCritical,
			summary:     `Consumer group {{ $labels.group }} has no members`,
			description: `Consumer group {{ $labels.group }} on Kafka cluster {{ $labels.cluster }} has no members and is {{ $value | humanize }} messages behind: nobody is consuming.`,
		}),
	}
}

// lagSeries picks the lag series the rules query from those that
// cfg.Metrics exports: the per-topic aggregates at the partition and topic
// granularities, the per-group ones at the group granularity. Each
// expression keeps the labels cluster and group whichever it uses, so the
// alerts look the same at every granularity.
type lagSeries struct{ m config.Metrics }

// selector selects the lag series (per topic or per group) of the groups
// that matchers select.
func (l lagSeries) selector(matchers string) string {
	if l.m.PerTopic() {
		return selector("queuewatch_kafka_consumergroup_topic_lag", matchers)
	}
	return selector("queuewatch_kafka_consumergroup_total_lag", matchers)
}

// group is each group's total lag over the topics matchers select.
func (l lagSeries) group(matchers string) string {
	return `sum by (cluster, group) (` + l.selector(matchers) + `)`
}

// maxSeconds is each group's worst lag seconds. The topic granularity has
// no per-group series: it is the max over the group's topics there.
func (l lagSeries) maxSeconds(matchers string) string {
	if l.m.GroupDetails() {
		return selector("queuewatch_kafka_consumergroup_max_lag_seconds", matchers)
	}
	return `max by (cluster, group) (` + selector("queuewatch_kafka_consumergroup_topic_lag_seconds", matchers) + `)`
}
