package alerts

import (
	"time"

	"github.com/queuewatch/queuewatch/config"
)

// pubsubPage is the UI page of one Pub/Sub subscription.
var pubsubPage = `/pubsub/` + pathLabel("cluster") + `/subscriptions/` + pathLabel("subscription")

// pubsubDLQs are the subscriptions attached to a dead-letter topic: a DLQ
// is meant to fill without a consumer and has its own alerts
// (QueuewatchDLQNotEmpty), so the backlog rules leave them out.
const pubsubDLQs = `queuewatch_pubsub_subscription_info{dlq="true"}`

// pubsubSpecs are the Pub/Sub alerts: the two traps that lose or hold
// messages (a dead-letter topic nobody subscribes to, a subscription in
// RESOURCE_ERROR) page; the two that may (a dead-letter subscription
// that keeps messages shorter than its source, maxDeliveryAttempts at its
// floor) warn; and, with Cloud Monitoring read, the backlog and the
// oldest unacked message's age over the group thresholds (whose overrides
// select subscriptions by name). Each waits for two reads of the project,
// since the series change only when it is read (see pubsubTwoReads); the
// backlog and age, minutes behind already, also for the status window.
func pubsubSpecs(p ruleParams) []alertSpec {
	const who = `Pub/Sub subscription {{ $labels.subscription }} (project {{ $labels.cluster }})`
	subs := readers{
		status: "queuewatch_pubsub_subscription_status", identity: []string{"cluster", "subscription"}, name: "subscription", page: pubsubPage,
		backlog: func(m string) string {
			return `(` + selector("queuewatch_pubsub_subscription_undelivered_messages", m) + ` unless on (cluster, subscription) ` + pubsubDLQs + `)`
		},
		lagSeconds: func(m string) string {
			return `(` + selector("queuewatch_pubsub_subscription_oldest_unacked_message_age_seconds", m) + ` unless on (cluster, subscription) ` + pubsubDLQs + `)`
		},
		backlogKind: lagHigh, lagSecondsKind: lagSecondsHigh,
	}
	reads := pubsubTwoReads(p)
	lint := func(name, severity, matcher, summary, description string) alertSpec {
		return alertSpec{
			name: name, severity: severity, forDur: reads, kind: noThreshold, label: "subscription", page: pubsubPage,
			summary: summary, description: description,
			expr: func(string, string) string {
				return `queuewatch_pubsub_subscription_lint{` + matcher + `} == 1`
			},
		}
	}
	backlog := subs.backlogHigh(p, alertText{
		name: "QueuewatchPubSubBacklogHigh", severity: SeverityWarning,
		summary:     `Pub/Sub subscription {{ $labels.subscription }} has a large backlog`,
		description: who + ` has {{ $value | humanize }} undelivered messages (Cloud Monitoring, minutes behind), over the threshold of <threshold>. Dead-letter subscriptions are excluded.`,
	})
	age := subs.lagSecondsHigh(p, alertText{
		name: "QueuewatchPubSubOldestUnackedHigh", severity: SeverityCritical,
		summary:     `Pub/Sub subscription {{ $labels.subscription }} holds old messages`,
		description: `The oldest unacked message of ` + who + ` is {{ $value | humanizeDuration }} old (Cloud Monitoring, minutes behind), over the threshold of <threshold>: data reaches its subscribers late, and is deleted at the subscription's retention.`,
	})
	backlog.forDur, age.forDur = max(p.window, reads), max(p.window, reads)
	return []alertSpec{
		lint("QueuewatchPubSubDeadLettersDropped", SeverityCritical, `lint="dead_letters_dropped"`,
			`Dead letters of Pub/Sub subscription {{ $labels.subscription }} are dropped`,
			who+` has a dead-letter policy whose topic has no subscription, or does not exist: Pub/Sub drops every message it dead-letters. Attach a subscription to the dead-letter topic.`),
		lint("QueuewatchPubSubSubscriptionResourceError", SeverityCritical, `lint="resource_error"`,
			`Pub/Sub subscription {{ $labels.subscription }} is in RESOURCE_ERROR`,
			who+` is in RESOURCE_ERROR: Pub/Sub cannot write to its destination (a BigQuery table, a bucket, a push endpoint's permissions) and delivers nothing until that is fixed.`),
		lint("QueuewatchPubSubDeadLetterRisk", SeverityWarning, `lint=~"dlq_retention_shorter|max_delivery_attempts_floor"`,
			`Pub/Sub subscription {{ $labels.subscription }} may lose dead letters`,
			who+` has a dead-letter trap ({{ $labels.lint }}): its dead-letter subscription keeps messages for less time than it does, or maxDeliveryAttempts is at its floor of 5. Its page says which.`),
		backlog,
		age,
	}
}

// pubsubTwoReads is how long a Pub/Sub fact must hold to have been seen
// by two reads of its project: the longest read interval of the
// configured projects (config.DefaultPubSubPollInterval without any),
// plus two polls for the next read to be scraped. With the defaults: 1m +
// 30s = 1m30s.
func pubsubTwoReads(p ruleParams) time.Duration {
	read := max(config.DefaultPubSubPollInterval, p.cfg.PollInterval)
	if len(p.cfg.PubSub) > 0 {
		read = 0
		for _, s := range p.cfg.PubSub {
			read = max(read, s.Interval(), p.cfg.PollInterval)
		}
	}
	return read + p.twoPolls
}
