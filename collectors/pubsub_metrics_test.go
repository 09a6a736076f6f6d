package collectors

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/queuewatch/queuewatch/queue"
)

// pubsubSnapshot is a project read with Cloud Monitoring: a source with
// a backlog and two traps, its DLQ subscription, and an export in
// RESOURCE_ERROR; and one DLQ counted without Monitoring (at least 2).
func pubsubSnapshot() *queue.Snapshot {
	return &queue.Snapshot{
		Broker: queue.PubSub, Cluster: "orders-gcp", Time: fixedTime,
		PubSubSubscriptions: []queue.PubSubSubscription{
			{
				Cluster: "orders-gcp", Name: "orders", Topic: "orders", Delivery: "pull", DeadLetterTopic: "orders-dl", MaxDeliveryAttempts: 5,
				Retention: 7 * 24 * time.Hour, Status: queue.StatusWarn, StatusReason: "maxDeliveryAttempts is 5, its floor",
				Lints:      []queue.PubSubLint{{Kind: "dlq_retention_shorter", Sentence: "x"}, {Kind: "max_delivery_attempts_floor", Sentence: "y"}},
				Monitoring: &queue.PubSubMetrics{At: fixedTime, Undelivered: 1250, HasUndelivered: true, OldestAge: 754 * time.Second, HasOldestAge: true, DeadLettered: 3},
			},
			{
				Cluster: "orders-gcp", Name: "orders-dlq", Topic: "orders-dl", Delivery: "pull", DLQ: true, Status: queue.StatusOK, StatusReason: queue.DLQReason,
				Monitoring: &queue.PubSubMetrics{At: fixedTime, Undelivered: 7, HasUndelivered: true},
			},
			{
				Cluster: "orders-gcp", Name: "to-bq", Topic: "orders", Delivery: "bigquery", State: "RESOURCE_ERROR", Status: queue.StatusStop,
				Lints: []queue.PubSubLint{{Kind: "resource_error", Sentence: "z"}},
			},
		},
		DLQs: []queue.DLQ{
			{Broker: queue.PubSub, Cluster: "orders-gcp", Name: "orders-dlq", Sources: []string{"orders"}, Detection: queue.DetectedTopology, Messages: 7},
			{Broker: queue.PubSub, Cluster: "orders-gcp", Name: "pay-dlq", Sources: []string{"pay"}, Detection: queue.DetectedTopology, Messages: 2, AtLeast: true},
		},
		PubSub: &queue.PubSubProject{Project: "orders-prod", Monitoring: true, MonitoringCalls: 10, Topics: 3, Subscriptions: 3},
	}
}

// TestPubSubMetricsGolden compares the Pub/Sub families and its DLQs for
// a fixed snapshot with a golden file. Regenerate it with
// QUEUEWATCH_UPDATE_GOLDEN=1.
func TestPubSubMetricsGolden(t *testing.T) {
	c := New([]Source{
		&scriptedSource{broker: queue.PubSub, cluster: "orders-gcp", results: []func() (*queue.Snapshot, error){ok(pubsubSnapshot())}},
	}, Options{})
	c.PollOnce(context.Background())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	names := []string{descDLQMsgs.name}
	for _, f := range pubsubFamilies {
		names = append(names, f.name)
	}
	const golden = "testdata/pubsub_metrics.golden"
	if os.Getenv("QUEUEWATCH_UPDATE_GOLDEN") != "" {
		got, err := gatherText(reg, names)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(string(want)), names...); err != nil {
		t.Error(err)
	}
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}
