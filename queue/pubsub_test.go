package queue

import (
	"testing"
	"time"
)

// TestPubSubReader: without Cloud Monitoring the backlog and age are
// unknown; with it they are its figures, exact, and the retention's
// headroom follows.
func TestPubSubReader(t *testing.T) {
	s := PubSubSubscription{Cluster: "prod", Name: "orders/eu", Retention: 7 * 24 * time.Hour, Status: StatusWarn, StatusReason: "x"}
	r := s.Reader()
	if r.BacklogKnown || r.LagBasis != LagUnknown || r.Members != -1 || r.Page != "/pubsub/prod/subscriptions/orders%2Feu" || r.Status != StatusWarn {
		t.Errorf("without monitoring: %+v", r)
	}
	s.Monitoring = &PubSubMetrics{Undelivered: 1250, HasUndelivered: true, OldestAge: 6*24*time.Hour + 20*time.Hour, HasOldestAge: true}
	r = s.Reader()
	if !r.BacklogKnown || r.Backlog != 1250 || r.LagBasis != LagExact || r.LagSeconds != (164*time.Hour).Seconds() || r.Headroom.Seconds != (4*time.Hour).Seconds() {
		t.Errorf("with monitoring: %+v", r)
	}
	if ref, err := ParseDLQID("pubsub:prod::orders-dlq"); err != nil || ref.Broker != PubSub || ref.Name != "orders-dlq" {
		t.Errorf("ParseDLQID = %+v, %v", ref, err)
	}
}

// TestPubSubMonitoringMonthlyCost checks the doc comment's example.
func TestPubSubMonitoringMonthlyCost(t *testing.T) {
	calls, usd := PubSubMonitoringMonthlyCost(5, time.Minute)
	if calls != 216000 || usd < 2.159 || usd > 2.161 {
		t.Errorf("5 calls a minute: %d calls, $%.4f; want 216,000, $2.16", calls, usd)
	}
}
