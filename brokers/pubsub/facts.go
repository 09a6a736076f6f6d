package pubsub

import (
	"fmt"
	"slices"
	"strings"

	"github.com/queuewatch/queuewatch/queue"
)

// DeadLetter is where one subscription's dead letters go: its policy's
// topic and the subscriptions attached to that topic, each of which is a
// DLQ of Source.
type DeadLetter struct {
	Source string
	Topic  string
	// DLQs are the ids of the topic's subscriptions, sorted; empty when the
	// topic has none, and Pub/Sub then drops every dead letter.
	DLQs []string
}

// DeadLetters is where every subscription with a dead-letter policy sends
// its dead letters, in subscription order. A topic in another project has
// no DLQs here: its subscriptions are not listed with this project's.
func (t *Topology) DeadLetters() []DeadLetter {
	byTopic := map[string][]string{}
	for _, s := range t.Subscriptions {
		byTopic[s.Topic] = append(byTopic[s.Topic], s.ID)
	}
	var out []DeadLetter
	for _, s := range t.Subscriptions {
		if s.DeadLetterTopic != "" {
			d := DeadLetter{Source: s.ID, Topic: s.DeadLetterTopic}
			if subs := byTopic[s.DeadLetterTopic]; len(subs) > 0 {
				d.DLQs = slices.Sorted(slices.Values(subs))
			}
			out = append(out, d)
		}
	}
	return out
}

// Subscription returns the subscription with the given id.
func (t *Topology) Subscription(id string) (*Subscription, bool) {
	i := slices.IndexFunc(t.Subscriptions, func(s Subscription) bool { return s.ID == id })
	if i < 0 {
		return nil, false
	}
	return &t.Subscriptions[i], true
}

// LintKind names a configuration trap; it is the lint label of
// queuewatch_pubsub_subscription_lint.
type LintKind string

// The traps Lints finds, from the most harmful.
const (
	// LintDeadLettersDropped: the dead-letter topic has no subscription
	// (or does not exist), so Pub/Sub drops every dead letter.
	LintDeadLettersDropped LintKind = "dead_letters_dropped"
	// LintResourceError: the subscription is in RESOURCE_ERROR and
	// delivers nothing until its destination is fixed.
	LintResourceError LintKind = "resource_error"
	// LintDLQRetentionShorter: a dead-letter subscription keeps messages
	// for less time than the source, so a dead letter may expire before
	// anyone looks at it.
	LintDLQRetentionShorter LintKind = "dlq_retention_shorter"
	// LintMinDeliveryAttempts: maxDeliveryAttempts is at its floor (5),
	// so a short outage of a consumer dead-letters healthy messages.
	LintMinDeliveryAttempts LintKind = "max_delivery_attempts_floor"
)

// LintKinds are every kind, in the order above.
var LintKinds = []LintKind{LintDeadLettersDropped, LintResourceError, LintDLQRetentionShorter, LintMinDeliveryAttempts}

// Lint is one trap found on one subscription, with the sentence that
// explains it.
type Lint struct {
	Subscription string
	Kind         LintKind
	Sentence     string
}

// Lints finds the traps of every subscription, in subscription order and,
// for one subscription, in LintKinds order. For example, a subscription
// "orders" with retention 7d, a dead-letter policy to "orders-dl" at 5
// attempts, and "orders-dl" subscribed by "orders-dlq" with retention 1d
// has two: dlq_retention_shorter ("dead-letter subscription orders-dlq
// keeps messages 1d, less than orders' 7d") and
// max_delivery_attempts_floor.
func (t *Topology) Lints() []Lint {
	topics := map[string]bool{}
	for _, tp := range t.Topics {
		topics[tp.ID] = true
	}
	dls := map[string]DeadLetter{}
	for _, d := range t.DeadLetters() {
		dls[d.Source] = d
	}
	var out []Lint
	for _, s := range t.Subscriptions {
		add := func(k LintKind, format string, args ...any) {
			out = append(out, Lint{Subscription: s.ID, Kind: k, Sentence: fmt.Sprintf(format, args...)})
		}
		d, hasPolicy := dls[s.ID]
		local := !strings.HasPrefix(d.Topic, "projects/")
		switch {
		case hasPolicy && local && !topics[d.Topic]:
			add(LintDeadLettersDropped, "dead-letter topic %s does not exist: dead letters are dropped", d.Topic)
		case hasPolicy && local && len(d.DLQs) == 0:
			add(LintDeadLettersDropped, "dead-letter topic %s has no subscription: dead letters are dropped", d.Topic)
		}
		if s.State == StateResourceError {
			add(LintResourceError, "in RESOURCE_ERROR: Pub/Sub cannot deliver to its %s destination, and its backlog grows until that is fixed", s.Delivery)
		}
		for _, id := range d.DLQs {
			if q, ok := t.Subscription(id); ok && q.Retention > 0 && q.Retention < s.Retention {
				add(LintDLQRetentionShorter, "dead-letter subscription %s keeps messages %s, less than this subscription's %s: dead letters may expire unseen", id, queue.HumanDuration(q.Retention), queue.HumanDuration(s.Retention))
			}
		}
		if hasPolicy && s.MaxDeliveryAttempts <= MinDeliveryAttempts {
			add(LintMinDeliveryAttempts, "maxDeliveryAttempts is %d, its floor: a consumer down for a few redeliveries dead-letters healthy messages", s.MaxDeliveryAttempts)
		}
	}
	return out
}
