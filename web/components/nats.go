package components

import (
	"strconv"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// TabNATS is the overview tab of NATS JetStream consumers.
const TabNATS = "nats"

// ConsumerRow is one JetStream consumer in the overview table.
type ConsumerRow struct {
	C      *queue.StreamConsumer
	Status queue.Status
	Trend  Spark
}

// NATSConsumerData is what a JetStream consumer's page shows.
type NATSConsumerData struct {
	// Links are the DLQs this reader's messages die in and its
	// Grafana dashboard.
	Links    Links
	Chrome   Chrome
	Consumer *queue.StreamConsumer
	Status   queue.Status
	// Stream is the consumer's stream as the same poll saw it; HasStream
	// is false when the stream was not in it.
	Stream    queue.Stream
	HasStream bool
	// DeadLetters is the DLQ of the consumer's captured dead letters;
	// HasDeadLetters is false when none are kept.
	DeadLetters    queue.DLQ
	HasDeadLetters bool
	// HistoryURL is the JSON endpoint the chart reads; Range its initial
	// time range.
	HistoryURL string
	Range      string
	// CanReset offers "Reset…" (ResetAPI, …/offsets) and Pause/Resume
	// (PauseAPI, …/pause and …/resume): the user is an operator and the
	// server has consumer resets.
	CanReset bool
	ResetAPI string
	PauseAPI string
}

// NATSConsumerURL is the path of a JetStream consumer's page.
func NATSConsumerURL(cluster, stream, consumer string) string {
	return queue.ConsumerPage(cluster, stream, consumer)
}

func kind(c *queue.StreamConsumer) string {
	if c.Pull {
		return "pull"
	}
	return "push"
}

func seq(n uint64) string { return strconv.FormatUint(n, 10) }

// maxDeliver writes max_deliver, where -1 (or 0) means unlimited.
func maxDeliver(n int) string {
	if n <= 0 {
		return "unlimited"
	}
	return strconv.Itoa(n)
}

// inFlight writes ack pending against max_ack_pending, "3 / 20".
func inFlight(c *queue.StreamConsumer) string {
	s := Count(int64(c.AckPending))
	if c.MaxAckPending > 0 {
		s += " / " + Count(int64(c.MaxAckPending))
	}
	return s
}

func consumerLagSeconds(c *queue.StreamConsumer) string {
	if !c.HasLagSeconds {
		return "—"
	}
	return Seconds(c.LagSeconds)
}

func filters(c *queue.StreamConsumer) string {
	if len(c.FilterSubject) == 0 {
		return "all subjects"
	}
	s := c.FilterSubject[0]
	for _, f := range c.FilterSubject[1:] {
		s += ", " + f
	}
	return s
}

// atMaxAck reports whether the consumer has reached max_ack_pending.
func atMaxAck(c *queue.StreamConsumer) bool {
	return c.MaxAckPending > 0 && c.AckPending >= c.MaxAckPending
}

// deadLetterAge writes how old a consumer's oldest dead letter is, when
// known: "oldest 2h".
func deadLetterAge(d *queue.DLQ) string {
	if !HasOldest(d) {
		return ""
	}
	return " · oldest " + OldestAge(d)
}

// consumerSentence is a consumer's status sentence. An ok consumer gets its
// own: a JetStream consumer cannot rewind, so the groups' sentence would
// name a check that never ran.
func consumerSentence(s queue.Status, reason string) string {
	if reason == "" && s == queue.StatusOK {
		return "no stall, stop or rising pending over the status window"
	}
	return statusSentence(s, reason)
}

// pauseLeft says how long a paused consumer stays paused: "42m left", or
// "resuming" once the deadline passed (the next poll shows it resumed).
func pauseLeft(until time.Time, now Now) string {
	left := until.Sub(now.T)
	if left <= 0 {
		return "resuming"
	}
	return Seconds(left.Seconds()) + " left"
}
