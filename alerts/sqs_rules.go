package alerts

import (
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// sqsDLQs are the SQS DLQs relabelled to the queue label, so queue rules
// can drop them with "unless on (cluster, queue)": a DLQ is meant to sit
// without consumers and has its own alerts. These are the queues
// queue.Snapshot.JudgedAsReader leaves out, so the collector exports a
// DLQ's status ok, never stop (collectors' TestSQSDLQStatusAgreesWithRules).
const sqsDLQs = `label_replace(queuewatch_dlq_messages{broker="` + string(queue.SQS) + `"}, "queue", "$1", "dlq", "(.*)")`

// sqsSpecs are the SQS queue alerts: no consumer, stalled at the in-flight
// limit, and a visible backlog over the group threshold (its overrides
// select queues by name, as they select JetStream consumers). SQS has no
// age of the oldest message without CloudWatch, which queuewatch does not
// read yet, so there is no age alert. Each waits for two reads of the
// account to agree (see sqsTwoReads), because the series change only when
// the account is read.
func sqsSpecs(p ruleParams) []alertSpec {
	const who = `SQS queue {{ $labels.queue }} (account {{ $labels.cluster }})`
	queues := readers{
		status: "queuewatch_sqs_queue_status", identity: []string{"cluster", "queue"}, name: "queue", page: overviewPage,
		backlog: func(m string) string {
			return `(` + selector("queuewatch_sqs_queue_messages", join(`state="visible"`, m)) + ` unless on (cluster, queue) ` + sqsDLQs + `)`
		},
		backlogKind: lagHigh,
	}
	reads := sqsTwoReads(p)
	hr := queue.HumanDuration(reads)
	specs := []alertSpec{
		queues.inStatus(p, queue.StatusStop, alertText{
			name: "QueuewatchSQSQueueNoConsumer", severity: SeverityCritical,
			summary:     `SQS queue {{ $labels.queue }} has no consumer`,
			description: who + ` has {{ $value | humanize }} visible messages, more at each read for ` + hr + `, and none in flight: nobody receives from it. Dead-letter queues are excluded.`,
		}),
		queues.inStatus(p, queue.StatusStall, alertText{
			name: "QueuewatchSQSQueueStalled", severity: SeverityCritical,
			summary:     `SQS queue {{ $labels.queue }} is stalled at the in-flight limit`,
			description: who + ` has had ` + queue.ExactCount(queue.SQSInFlightLimit) + ` messages in flight, the most SQS allows, for ` + hr + `, with {{ $value | humanize }} visible ones waiting: receives fail with OverLimit until consumers delete what they received.`,
		}),
		queues.backlogHigh(p, alertText{
			name: "QueuewatchSQSQueueBacklogHigh", severity: SeverityWarning,
			summary:     `SQS queue {{ $labels.queue }} has a large backlog`,
			description: who + ` has {{ $value | humanize }} visible messages, over the threshold of <threshold>, for ` + hr + `. Dead-letter queues are excluded.`,
		}),
	}
	for i := range specs {
		specs[i].forDur = reads
	}
	return specs
}

// sqsTwoReads is how long an SQS fact must hold to have been seen by two
// reads of its account: the longest read interval of the configured
// accounts (config.DefaultSQSPollInterval without any), plus two polls for
// the next read to be scraped, since reads follow the poll scheduler and
// its jitter. With the defaults: 4m + 30s = 4m30s.
func sqsTwoReads(p ruleParams) time.Duration {
	read := max(config.DefaultSQSPollInterval, p.cfg.PollInterval)
	if len(p.cfg.SQS) > 0 {
		read = 0
		for _, a := range p.cfg.SQS {
			read = max(read, a.Interval(), p.cfg.PollInterval)
		}
	}
	return read + p.twoPolls
}

// join joins two label matcher lists, either of which may be empty.
func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ", " + b
}
