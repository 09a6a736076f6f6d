package components

import (
	"strconv"

	"github.com/queuewatch/queuewatch/queue"
)

// TabPubSub is the overview tab of Google Cloud Pub/Sub subscriptions.
const TabPubSub = "pubsub"

// PubSubRow is one Pub/Sub subscription in the overview table.
type PubSubRow struct {
	S      *queue.PubSubSubscription
	Status queue.Status
	// DeadLetterURL is the DLQ page of its first dead-letter subscription,
	// "" without one; DLQURL is its own DLQ page when it is a DLQ.
	DeadLetterURL string
	DLQURL        string
	Trend         Spark
}

// ShowsDLQState reports whether r shows the neutral DLQ state instead of
// its status.
func (r PubSubRow) ShowsDLQState() bool { return r.DLQURL != "" && r.Status == queue.StatusOK }

// sparkClass colours r's sparkline: by status, as a DLQ's when it is one.
func (r PubSubRow) sparkClass() string {
	if r.ShowsDLQState() {
		return "st-dlq"
	}
	return "st-" + string(r.Status)
}

// PubSubSubscriptionData is what a subscription's page shows.
type PubSubSubscriptionData struct {
	Links  Links
	Chrome Chrome
	Sub    *queue.PubSubSubscription
	Status queue.Status
	// DeadLetters are the DLQs its dead-letter topic feeds, as the same
	// poll listed them.
	DeadLetters []queue.DLQ
	// AsDLQ is the subscription itself as a DLQ, with its sources; IsDLQ
	// is false when it is not attached to a dead-letter topic.
	AsDLQ queue.DLQ
	IsDLQ bool
	// SourcePages are the source subscriptions' pages by name.
	SourcePages map[string]string
	// Project is the project's read: its id, and whether Cloud
	// Monitoring is read.
	Project    queue.PubSubProject
	HistoryURL string
	Range      string
}

// ShowsDLQState reports whether the page shows the neutral DLQ state.
func (d PubSubSubscriptionData) ShowsDLQState() bool { return d.IsDLQ && d.Status == queue.StatusOK }

// PubSubSubscriptionURL is the path of a subscription's page.
func PubSubSubscriptionURL(cluster, name string) string {
	return queue.PubSubSubscriptionPage(cluster, name)
}

// noPubSubBacklog is the hover text of an unknown backlog.
const noPubSubBacklog = "unknown: Pub/Sub publishes a subscription's backlog only to Cloud Monitoring; set pubsub[].monitoring.enabled to read it"

// pubsubBacklog writes a subscription's backlog for a cell, "—" unknown.
func pubsubBacklog(s *queue.PubSubSubscription) string {
	if m := s.Monitoring; m != nil && m.HasUndelivered {
		return Count(m.Undelivered)
	}
	return "—"
}

// pubsubBacklogTitle is its hover text.
func pubsubBacklogTitle(s *queue.PubSubSubscription) string {
	if m := s.Monitoring; m != nil && m.HasUndelivered {
		return Exact(m.Undelivered) + " undelivered (Cloud Monitoring's num_undelivered_messages, as of " + m.At.UTC().Format("15:04 UTC") + ": minutes behind)"
	}
	return noPubSubBacklog
}

// pubsubOldest writes the oldest unacked message's age, "—" unknown.
func pubsubOldest(s *queue.PubSubSubscription) string {
	if m := s.Monitoring; m != nil && m.HasOldestAge {
		return queue.HumanDuration(m.OldestAge)
	}
	return "—"
}

// pubsubOldestTitle is its hover text.
func pubsubOldestTitle(s *queue.PubSubSubscription) string {
	if m := s.Monitoring; m != nil && m.HasOldestAge {
		return Exact(int64(m.OldestAge.Seconds())) + " s (Cloud Monitoring's oldest_unacked_message_age, minutes behind)"
	}
	return noPubSubBacklog
}

// attempts writes maxDeliveryAttempts as a phrase: "after 5 attempts".
func attempts(n int) string {
	return "after " + strconv.Itoa(n) + " " + Plural(n, "delivery attempt", "delivery attempts")
}

// pubsubSentence is a subscription's status sentence.
func pubsubSentence(s queue.Status, reason string) string {
	if reason == queue.DLQReason || s == queue.StatusOK {
		return reason
	}
	return statusSentence(s, reason)
}

// depthText is a DLQ's depth for a cell: "≥ 3" for a count, a lower bound
// (queue.DLQ.AtLeast, a Pub/Sub DLQ without Cloud Monitoring), "3" else.
// The DLQ page and the overview's DLQ tab use it for every broker.
func depthText(d queue.DLQ) string {
	if d.AtLeast {
		return "≥ " + Count(d.Messages)
	}
	return Count(d.Messages)
}

// depthTitle is its hover text.
func depthTitle(d queue.DLQ) string {
	if d.AtLeast {
		return "at least " + Exact(d.Messages) + " messages: what a count saw (pull, then give every message back at once); messages a subscriber holds are not seen"
	}
	return Exact(d.Messages) + " messages"
}

// retryText writes a retry policy: "10s to 10m backoff", or immediate.
func retryText(s *queue.PubSubSubscription) string {
	if s.RetryMin == 0 && s.RetryMax == 0 {
		return "immediate redelivery (no retry policy)"
	}
	return queue.HumanDuration(s.RetryMin) + " to " + queue.HumanDuration(s.RetryMax) + " backoff"
}

// yesNo writes a flag.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// runbookURL is the runbook section of a lint's alert.
func runbookURL(lint string) string {
	alert := "queuewatchpubsubdeadletterrisk"
	switch lint {
	case "dead_letters_dropped":
		alert = "queuewatchpubsubdeadlettersdropped"
	case "resource_error":
		alert = "queuewatchpubsubsubscriptionresourceerror"
	}
	return "https://github.com/queuewatch/queuewatch/blob/main/docs/runbooks.md#" + alert
}
