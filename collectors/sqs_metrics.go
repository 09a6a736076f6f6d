package collectors

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/queue"
)

// Amazon SQS families. A queue is named by cluster (the configured
// account) and queue; its DLQ depth is in queuewatch_dlq_messages with
// every other broker's.
var (
	sqsQueueLabels = []string{"cluster", "queue"}

	descSQSMessages  = desc("sqs_queue_messages", "Messages in the queue by state: visible (ApproximateNumberOfMessages), in_flight (received, not yet deleted: ...NotVisible) and delayed (...Delayed).", append(sqsQueueLabels, "state")...)
	descSQSStatus    = statusDesc("sqs_queue_status", "SQS queue", sqsQueueLabels...)
	descSQSOldestAge = desc("sqs_queue_oldest_age_seconds", "Age of the queue's oldest message where known, by where it comes from: basis cloudwatch (ApproximateAgeOfOldestMessage) or browse (the oldest SentTimestamp a browse or job received: an estimate, a lower bound).", append(sqsQueueLabels, "basis")...)
	descSQSRequests  = counterDesc("sqs_api_requests_total", "Requests queuewatch sent to the SQS account since it started, by action, retries included: AWS bills each.", "cluster", "action")

	sqsFamilies = []*family{descSQSMessages, descSQSStatus, descSQSOldestAge, descSQSRequests}
)

// describeSQS sends the SQS descriptors.
func describeSQS(ch chan<- *prometheus.Desc) {
	for _, f := range sqsFamilies {
		ch <- f.desc
	}
}

// collectSQS emits the snapshot's SQS queues and request counts. A queue
// that could not be read has only its status series (error): its counts
// are unknown, not 0.
func collectSQS(ch sink, snap *queue.Snapshot) {
	cl := snap.Cluster
	for i := range snap.SQSQueues {
		q := &snap.SQSQueues[i]
		emitStatus(ch, descSQSStatus, q.EffectiveStatus(), cl, q.Name)
		if q.EffectiveStatus() == queue.StatusError {
			continue
		}
		ch.gauge(descSQSMessages, float64(q.Visible), cl, q.Name, "visible")
		ch.gauge(descSQSMessages, float64(q.InFlight), cl, q.Name, "in_flight")
		ch.gauge(descSQSMessages, float64(q.Delayed), cl, q.Name, "delayed")
		if q.OldestAgeBasis != queue.SQSAgeUnknown {
			ch.gauge(descSQSOldestAge, q.OldestAge.Seconds(), cl, q.Name, string(q.OldestAgeBasis))
		}
		emitHeadroom(ch, q.RetentionHeadroom(), snap.Broker, cl, "", q.Name)
	}
	if snap.SQS == nil {
		return
	}
	// The sink emits a counter family as a counter.
	for _, r := range snap.SQS.Requests {
		ch.gauge(descSQSRequests, float64(r.Count), cl, r.Action)
	}
}
