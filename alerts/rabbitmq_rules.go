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

// rabbitQueuePage is the UI page of one RabbitMQ queue.
var rabbitQueuePage = `/rabbitmq/` + pathLabel("cluster") + `/queues/` + pathLabel("vhost") + `/` + pathLabel("queue")

// rabbitQueues are RabbitMQ queues as the shared reader shapes see them;
// their backlog is the ready messages, without the state label.
var rabbitQueues = readers{
	status: "queuewatch_rabbitmq_queue_status", identity: []string{"cluster", "vhost", "queue"}, name: "queue", page: rabbitQueuePage,
	backlog: func(m string) string {
		sel := `state="ready"`
		if m != "" {
			sel += "," + m
		}
		return `max without (state) (queuewatch_rabbitmq_queue_messages{` + sel + `})`
	},
}

// rabbitMQSpecs are the queue alerts: ready messages and nobody consuming
// them, consumers that move nothing, or too many ready messages.
// Dead-letter queues are left to the DLQ rules (their status is ok: see
// queue.Snapshot.JudgedAsReader).
func rabbitMQSpecs(p ruleParams) []alertSpec {
	return []alertSpec{
		rabbitQueues.inStatus(p, queue.StatusStall, alertText{
			name: "QueuewatchRabbitMQQueueStalled", severity: SeverityCritical,
			summary:     `Queue {{ $labels.queue }} is stalled`,
			description: `RabbitMQ queue {{ $labels.queue }} (cluster {{ $labels.cluster }}, vhost {{ $labels.vhost }}) has consumers, {{ $value | humanize }} ready messages, and nothing was delivered or acknowledged over the status window: the consumers hold their prefetch and finish nothing.`,
		}),
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
