package collectors

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/queue"
)

// Google Cloud Pub/Sub families. A subscription is named by cluster (the
// configured project) and subscription; its DLQ depth is in
// queuewatch_dlq_messages with every other broker's. The backlog and age
// families exist only where Cloud Monitoring gave a figure (monitoring.enabled):
// a backlog Pub/Sub's admin API cannot tell is left out, not 0.
var (
	pubsubSubLabels = []string{"cluster", "subscription"}

	descPubSubStatus       = statusDesc("pubsub_subscription_status", "Pub/Sub subscription", pubsubSubLabels...)
	descPubSubInfo         = desc("pubsub_subscription_info", "A Pub/Sub subscription's topic and delivery (pull, push, bigquery, cloudstorage, bigtable), and whether it is a DLQ (attached to a dead-letter topic); always 1.", append(pubsubSubLabels, "topic", "delivery", "dlq")...)
	descPubSubLint         = desc("pubsub_subscription_lint", "A configuration trap found in the subscription, one series per trap (dead_letters_dropped, resource_error, dlq_retention_shorter, max_delivery_attempts_floor); always 1.", append(pubsubSubLabels, "lint")...)
	descPubSubMaxAttempts  = desc("pubsub_subscription_max_delivery_attempts", "The dead-letter policy's maxDeliveryAttempts; only for subscriptions with a policy.", pubsubSubLabels...)
	descPubSubUndelivered  = desc("pubsub_subscription_undelivered_messages", "Cloud Monitoring's num_undelivered_messages: the backlog, minutes behind.", pubsubSubLabels...)
	descPubSubOldestAge    = desc("pubsub_subscription_oldest_unacked_message_age_seconds", "Cloud Monitoring's oldest_unacked_message_age, minutes behind.", pubsubSubLabels...)
	descPubSubDeadLettered = desc("pubsub_subscription_dead_lettered_messages", "Cloud Monitoring's dead_letter_message_count in its newest sample period (about a minute).", pubsubSubLabels...)
	descPubSubMonCalls     = counterDesc("pubsub_monitoring_calls_total", "Cloud Monitoring timeSeries.list calls queuewatch made for the project since it started: Google bills each.", "cluster")

	pubsubFamilies = []*family{descPubSubStatus, descPubSubInfo, descPubSubLint, descPubSubMaxAttempts, descPubSubUndelivered, descPubSubOldestAge, descPubSubDeadLettered, descPubSubMonCalls}
)

// describePubSub sends the Pub/Sub descriptors.
func describePubSub(ch chan<- *prometheus.Desc) {
	for _, f := range pubsubFamilies {
		ch <- f.desc
	}
}

// collectPubSub emits the snapshot's subscriptions and the project's
// Monitoring call count.
func collectPubSub(ch sink, snap *queue.Snapshot) {
	cl := snap.Cluster
	for i := range snap.PubSubSubscriptions {
		s := &snap.PubSubSubscriptions[i]
		emitStatus(ch, descPubSubStatus, s.EffectiveStatus(), cl, s.Name)
		ch.gauge(descPubSubInfo, 1, cl, s.Name, s.Topic, s.Delivery, boolLabel(s.DLQ))
		for _, l := range s.Lints {
			ch.gauge(descPubSubLint, 1, cl, s.Name, l.Kind)
		}
		if s.DeadLetterTopic != "" {
			ch.gauge(descPubSubMaxAttempts, float64(s.MaxDeliveryAttempts), cl, s.Name)
		}
		if m := s.Monitoring; m != nil {
			if m.HasUndelivered {
				ch.gauge(descPubSubUndelivered, float64(m.Undelivered), cl, s.Name)
				ch.gauge(descPubSubDeadLettered, float64(m.DeadLettered), cl, s.Name)
			}
			if m.HasOldestAge {
				ch.gauge(descPubSubOldestAge, m.OldestAge.Seconds(), cl, s.Name)
			}
		}
		emitHeadroom(ch, s.Reader().Headroom, snap.Broker, cl, "", s.Name)
	}
	if p := snap.PubSub; p != nil && p.Monitoring {
		// The sink emits a counter family as a counter.
		ch.gauge(descPubSubMonCalls, float64(p.MonitoringCalls), cl)
	}
}

// boolLabel is a bool as a label value.
func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
