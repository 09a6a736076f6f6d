package alerts

import (
	"strings"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// Pub/Sub subscriptions are judged from their configuration at this read
// alone: the traps found in it (queue.PubSubSubscription.Lints) are
// certain facts, and Cloud Monitoring's backlog and age, minutes behind,
// are left to the alert rules' thresholds. From the most severe:
//
//   - stop: the subscription is in RESOURCE_ERROR (nothing is delivered
//     until its destination is fixed);
//   - warn: its dead-letter topic has no subscription or does not exist
//     (every dead letter is dropped, while healthy messages still flow),
//     a dead-letter subscription keeps messages for less time than the
//     source, or maxDeliveryAttempts is at its floor;
//
// and ok otherwise, with the backlog as the reason where Monitoring tells
// it. A subscription attached to a dead-letter topic is a DLQ, ok with
// queue.DLQReason unless it is in RESOURCE_ERROR itself. Shown statuses
// are held by hysteresis like every other reader's.

// evaluatePubSub judges latest's subscriptions, then settles their
// statuses and tracks their onsets.
func (e *Evaluator) evaluatePubSub(latest *queue.Snapshot) {
	for i := range latest.PubSubSubscriptions {
		s := &latest.PubSubSubscriptions[i]
		raw, reason := PubSubStatus(s)
		st, since, text := e.settle(pubsubOnset(s.Name), raw, latest.Time, latest.Time, func(time.Time) string { return reason })
		s.Status, s.StatusReason, s.StatusSince = st, text, since
	}
}

// pubsubOnset names a subscription in onsets.
func pubsubOnset(name string) string { return "subscription:" + name }

// PubSubStatus judges a subscription by the rules at the top of this
// file; its reason is every lint's sentence of that severity, joined.
//
// With lints dlq_retention_shorter and max_delivery_attempts_floor: warn,
// "dead-letter subscription orders-dlq keeps messages 1d, less than this
// subscription's 7d: dead letters may expire unseen; maxDeliveryAttempts
// is 5, its floor: …".
//
// It is exported for tests elsewhere that build a judged snapshot.
func PubSubStatus(s *queue.PubSubSubscription) (queue.Status, string) {
	var stop, warn []string
	for _, l := range s.Lints {
		switch {
		case l.Kind == queue.PubSubLintResourceError:
			stop = append(stop, l.Sentence)
		case !s.DLQ:
			warn = append(warn, l.Sentence)
		}
	}
	switch {
	case len(stop) > 0:
		return queue.StatusStop, strings.Join(stop, "; ")
	case len(warn) > 0:
		return queue.StatusWarn, strings.Join(warn, "; ")
	case s.DLQ:
		return queue.StatusOK, queue.DLQReason
	}
	if m := s.Monitoring; m != nil && m.HasUndelivered {
		reason := queue.ExactCount(m.Undelivered) + " undelivered"
		if m.HasOldestAge && m.Undelivered > 0 {
			reason += ", oldest " + queue.HumanDuration(m.OldestAge)
		}
		return queue.StatusOK, reason + " (" + queue.PubSubMonitoringNote + ")"
	}
	return queue.StatusOK, "configured safely; backlog unknown (monitoring.enabled is off)"
}
