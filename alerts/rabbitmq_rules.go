package alerts

import (
	"strconv"

	"github.com/queuewatch/queuewatch/queue"
)

// Series of the RabbitMQ rules.
const (
	// rabbitDLQs are the RabbitMQ DLQs relabelled to the queue label, so
	// queue rules can drop them with "unless on (cluster, vhost, queue)":
	// a DLQ is meant to sit without consumers and has its own alerts. The
	// queues tab leaves out the same ones (queue.Queue.NoConsumers).
	rabbitDLQs = `label_replace(queuewatch_dlq_messages{broker="` + string(queue.RabbitMQ) + `"}, "queue", "$1", "dlq", "(.*)")`
	readyMsgs  = `queuewatch_rabbitmq_queue_messages{state="ready"}`
)

// rabbitMQSpecs are the queue alerts: ready messages and nobody consuming
// them, or too many of them. Dead-letter queues are left to the DLQ rules.
func rabbitMQSpecs(p ruleParams) []alertSpec {
	return []alertSpec{
		{
			name: "QueuewatchRabbitMQQueueNoConsumers", severity: SeverityCritical, forDur: p.window, page: overviewPage,
			summary:     `Queue {{ $labels.queue }} has messages but no consumers`,
			description: `RabbitMQ queue {{ $labels.queue }} (cluster {{ $labels.cluster }}, vhost {{ $labels.vhost }}) has {{ $value | humanize }} ready messages and no consumer for ` + p.hw + `. Dead-letter queues are excluded.`,
			expr: func(string, string) string {
				return `(` + readyMsgs + ` > 0) and on (cluster, vhost, queue) (queuewatch_rabbitmq_queue_consumers == 0) ` +
					`unless on (cluster, vhost, queue) ` + rabbitDLQs
			},
		},
		{
			name: "QueuewatchRabbitMQQueueBacklogHigh", severity: SeverityWarning, forDur: p.window, page: overviewPage,
			summary:     `Queue {{ $labels.queue }} has a large backlog`,
			description: `RabbitMQ queue {{ $labels.queue }} (cluster {{ $labels.cluster }}, vhost {{ $labels.vhost }}) has {{ $value | humanize }} ready messages, over the threshold of ` + queue.ExactCount(p.cfg.Alerts.BacklogHigh) + `, for ` + p.hw + `. Dead-letter queues are excluded.`,
			expr: func(string, string) string {
				return `(` + readyMsgs + ` > ` + strconv.FormatInt(p.cfg.Alerts.BacklogHigh, 10) + `) unless on (cluster, vhost, queue) ` + rabbitDLQs
			},
		},
	}
}
