package components

import (
	"strconv"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// TabSQS is the overview tab of Amazon SQS queues.
const TabSQS = "sqs"

// SQSRow is one SQS queue in the overview table.
type SQSRow struct {
	Q      *queue.SQSQueue
	Status queue.Status
	// DeadLetterURL is the DLQ page of the queue its redrive policy names,
	// "" without a policy; DLQURL is its own DLQ page when it is a DLQ.
	DeadLetterURL string
	DLQURL        string
	Trend         Spark
}

// ShowsDLQState reports whether r shows the neutral DLQ state instead of
// its status: it is a DLQ, and read (an unreadable one shows its error).
func (r SQSRow) ShowsDLQState() bool { return r.DLQURL != "" && r.Status == queue.StatusOK }

// sparkClass colours r's sparkline: by status, as a DLQ's when it is one.
func (r SQSRow) sparkClass() string {
	if r.ShowsDLQState() {
		return "st-dlq"
	}
	return "st-" + string(r.Status)
}

// SQSQueueData is what an SQS queue's page shows.
type SQSQueueData struct {
	// Links are the DLQs this reader's messages die in and its
	// Grafana dashboard.
	Links  Links
	Chrome Chrome
	Queue  *queue.SQSQueue
	Status queue.Status
	// DeadLetters is the DLQ the queue's redrive policy sends to, as the
	// same poll listed it; HasDeadLetters is false without a policy.
	DeadLetters    queue.DLQ
	HasDeadLetters bool
	// AsDLQ is the queue itself as a DLQ, with its source queues;
	// IsDLQ is false when no redrive policy names it.
	AsDLQ queue.DLQ
	IsDLQ bool
	// SourcePages are the source queues' pages by name, for those the
	// poll read (a source left out by the filters has no page).
	SourcePages map[string]string
	// HistoryURL is the JSON endpoint the chart reads; Range its initial
	// time range.
	HistoryURL string
	Range      string
}

// ShowsDLQState reports whether the page shows the neutral DLQ state
// instead of the queue's status, as its row does (SQSRow.ShowsDLQState).
func (d SQSQueueData) ShowsDLQState() bool { return d.IsDLQ && d.Status == queue.StatusOK }

// SQSQueueURL is the path of an SQS queue's page.
func SQSQueueURL(cluster, name string) string { return queue.SQSQueuePage(cluster, name) }

// sqsLimit is SQS's in-flight limit, for hover texts.
const sqsLimit = queue.SQSInFlightLimit

// noOldestAge is the hover text where an SQS queue's oldest message age
// is unknown: SQS's API does not tell it.
const noOldestAge = "unknown: SQS tells a message's age only through CloudWatch (ApproximateAgeOfOldestMessage, sqs[].cloudwatch.oldest_age) or to whoever receives it; browse the queue's messages to estimate it"

// sqsOldest writes a queue's oldest message age for a table cell: "—"
// when unknown, "≥ 3h" for what a browse saw (a lower bound).
func sqsOldest(q *queue.SQSQueue) string {
	switch q.OldestAgeBasis {
	case queue.SQSAgeUnknown:
		return "—"
	case queue.SQSAgeBrowse:
		return "≥ " + queue.HumanDuration(q.OldestAge)
	}
	return queue.HumanDuration(q.OldestAge)
}

// sqsOldestLong is sqsOldest saying where an estimate comes from: "≥ 3h
// (seen while browsing)".
func sqsOldestLong(q *queue.SQSQueue) string {
	if q.OldestAgeBasis == queue.SQSAgeBrowse {
		return sqsOldest(q) + " (" + queue.SQSSeenWhileBrowsing + ")"
	}
	return sqsOldest(q)
}

// sqsOldestTitle is the hover text of sqsOldest: the exact seconds and
// where they come from.
func sqsOldestTitle(q *queue.SQSQueue) string {
	s := Exact(int64(q.OldestAge.Seconds())) + " s"
	switch q.OldestAgeBasis {
	case queue.SQSAgeBrowse:
		return "at least " + s + ": the oldest SentTimestamp a browse or job of this queue received, as of the last read; older messages the browse did not reach may wait. Forgotten when the queue is empty or a job deletes from it"
	case queue.SQSAgeCloudWatch:
		return s + ": CloudWatch's ApproximateAgeOfOldestMessage (maximum over a minute) as of the last read"
	}
	return noOldestAge
}

// fifoWord names an SQS queue's type.
func fifoWord(q *queue.SQSQueue) string {
	if q.FIFO {
		return "FIFO"
	}
	return "standard"
}

// receives writes maxReceiveCount as a phrase: "after 5 receives".
func receives(n int) string {
	return "after " + strconv.Itoa(n) + " " + Plural(n, "receive", "receives")
}

// sqsInFlight writes the in-flight count with its share of SQS's limit
// once it matters: "3", "96k of 120k".
func sqsInFlight(q *queue.SQSQueue) string {
	s := Count(q.InFlight)
	if q.InFlight >= queue.SQSInFlightLimit/2 {
		s += " of " + Count(queue.SQSInFlightLimit)
	}
	return s
}

// atInFlightLimit reports whether receives from q fail for its in-flight
// count.
func atInFlightLimit(q *queue.SQSQueue) bool { return q.InFlight >= queue.SQSInFlightLimit }

// durationOrDash writes a queue setting that is a duration, "—" when the
// server did not report it.
func durationOrDash(d time.Duration) string {
	if d <= 0 {
		return "—"
	}
	return queue.HumanDuration(d)
}

// exactSeconds is the hover text of a duration: "345600 s".
func exactSeconds(d time.Duration) string {
	if d <= 0 {
		return "not reported by this server"
	}
	return Exact(int64(d.Seconds())) + " s"
}

// sqsSentence is a queue's status sentence; an ok queue's says what SQS
// lets queuewatch check.
func sqsSentence(s queue.Status, reason string) string {
	const ok = "no sign of a missing or stuck consumer (SQS reports no consumers, only the in-flight count)"
	switch {
	case reason == queue.DLQReason:
		return reason
	case s == queue.StatusOK && reason == "":
		return ok
	case s == queue.StatusOK:
		return reason + " — " + ok
	}
	return statusSentence(s, reason)
}

// sqsOldestExact reports whether a queue's oldest age was read rather
// than estimated (or unknown); the others are shown muted.
func sqsOldestExact(q *queue.SQSQueue) bool { return q.OldestAgeBasis == queue.SQSAgeCloudWatch }
