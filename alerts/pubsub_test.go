package alerts

import (
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// TestPubSubStatus judges subscriptions from their lints: RESOURCE_ERROR
// is stop, every other trap warn with its sentence, a DLQ ok.
func TestPubSubStatus(t *testing.T) {
	lint := func(kind, sentence string) queue.PubSubLint { return queue.PubSubLint{Kind: kind, Sentence: sentence} }
	tests := []struct {
		name   string
		sub    queue.PubSubSubscription
		want   queue.Status
		reason string
	}{
		{"resource error wins", queue.PubSubSubscription{Lints: []queue.PubSubLint{lint("dead_letters_dropped", "a"), lint("resource_error", "b")}}, queue.StatusStop, "b"},
		{"traps warn", queue.PubSubSubscription{Lints: []queue.PubSubLint{lint("dlq_retention_shorter", "a"), lint("max_delivery_attempts_floor", "b")}}, queue.StatusWarn, "a; b"},
		{"a DLQ", queue.PubSubSubscription{DLQ: true}, queue.StatusOK, queue.DLQReason},
		{"no monitoring", queue.PubSubSubscription{}, queue.StatusOK, "configured safely; backlog unknown (monitoring.enabled is off)"},
		{
			"monitoring",
			queue.PubSubSubscription{Monitoring: &queue.PubSubMetrics{Undelivered: 1250, HasUndelivered: true, OldestAge: 754 * time.Second, HasOldestAge: true}},
			queue.StatusOK, "1,250 undelivered, oldest 12m 34s (Cloud Monitoring, minutes behind)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, reason := PubSubStatus(&tt.sub)
			if st != tt.want || reason != tt.reason {
				t.Errorf("= %s %q, want %s %q", st, reason, tt.want, tt.reason)
			}
		})
	}
}

// TestPubSubStatusSettles: the Evaluator fills each subscription's status
// and, once it is not ok, when that began.
func TestPubSubStatusSettles(t *testing.T) {
	e := NewEvaluator(StatusOptions{HysteresisPolls: 1})
	at := time.Date(2026, 12, 7, 15, 0, 0, 0, time.UTC)
	snap := &queue.Snapshot{Broker: queue.PubSub, Cluster: "prod", Time: at, PubSubSubscriptions: []queue.PubSubSubscription{
		{Cluster: "prod", Name: "to-bq", Lints: []queue.PubSubLint{{Kind: "resource_error", Sentence: "in RESOURCE_ERROR"}}},
	}}
	e.Evaluate(snap)
	s := snap.PubSubSubscriptions[0]
	if s.Status != queue.StatusStop || s.StatusReason == "" || !s.StatusSince.Equal(at) {
		t.Errorf("to-bq = %s %q since %s", s.Status, s.StatusReason, s.StatusSince)
	}
}
