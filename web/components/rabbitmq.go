package components

import (
	"strconv"

	"github.com/queuewatch/queuewatch/queue"
)

// RabbitMQQueueData is what a RabbitMQ queue's page shows.
type RabbitMQQueueData struct {
	Chrome Chrome
	Queue  *queue.Queue
	Status queue.Status
	// DeadLetters is the DLQ the queue dead-letters into, when its poll
	// found one (HasDeadLetters); AsDLQ is the queue's own DLQ entry when
	// it is a DLQ (IsDLQ), whose SourcePages link the watched sources.
	DeadLetters    queue.DLQ
	HasDeadLetters bool
	AsDLQ          queue.DLQ
	IsDLQ          bool
	SourcePages    map[string]string
	// Links holds the Grafana dashboard's address; the DLQ is linked
	// above, with the exchange that routes to it.
	Links Links
	// HistoryURL is the JSON endpoint the chart reads; Range its initial
	// time range.
	HistoryURL string
	Range      string
}

// RabbitMQQueueURL is the path of a RabbitMQ queue's page.
func RabbitMQQueueURL(cluster, vhost, name string) string {
	return queue.RabbitMQQueuePage(cluster, vhost, name)
}

// rabbitSentence is a queue's status sentence: its reason, or what an ok
// queue was checked for.
func rabbitSentence(s queue.Status, reason string) string {
	if reason == "" && s == queue.StatusOK {
		return "no missing consumer, stall or rising backlog over the status window"
	}
	return statusSentence(s, reason)
}

// RateSourceRabbitMQ says where a RabbitMQ queue's rates come from.
const RateSourceRabbitMQ = "messages per second over the status window, from the message_stats counters of the management API's queue listing at each poll (no extra request): consume counts acknowledgements and no-ack deliveries, produce counts publishes. The broker refreshes them every 5 s"

// RateSourceNATS says where a JetStream consumer's rates come from.
const RateSourceNATS = "messages per second over the status window, from stream sequences of each poll (no extra request): consume is the ack floor's advance, produce the stream's last sequence's"

// SQSRatesUnknown says why an SQS queue's rates are not shown.
const SQSRatesUnknown = "not known: SQS counts no sends or deletes in the attributes queuewatch reads (CloudWatch's NumberOfMessagesSent and NumberOfMessagesDeleted would), and a change in the visible count mixes both"

// utilisation writes consumer_utilisation as a percentage, "—" when the
// broker does not say.
func utilisation(q *queue.Queue) string {
	if !q.HasUtilisation {
		return "—"
	}
	return strconv.FormatFloat(q.Utilisation*100, 'f', 0, 64) + "%"
}

// ratesTitle is the hover text of a page's rates: where they come from,
// and that they need two polls while they are not known.
func ratesTitle(e queue.ETA, source string) string {
	if !e.Rates {
		return "known after two polls: " + source
	}
	return source
}
