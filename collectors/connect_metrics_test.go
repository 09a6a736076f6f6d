package collectors

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/queuewatch/queuewatch/queue"
)

// connectSnapshot has a running sink, one whose task failed, and one that
// could not be read.
func connectSnapshot() *queue.Snapshot {
	return &queue.Snapshot{
		Broker: queue.Kafka, Cluster: "prod", Time: fixedTime,
		Connectors: []queue.Connector{
			{
				Cluster: "prod", Connect: "main", Name: "payments-sink", Type: "sink", State: queue.ConnectRunning,
				Tasks:  []queue.ConnectTask{{ID: 0, State: queue.ConnectRunning}, {ID: 1, State: queue.ConnectRunning}},
				Status: queue.StatusOK, StatusReason: "2 tasks running",
			},
			{
				Cluster: "prod", Connect: "main", Name: "orders-sink", Type: "sink", State: queue.ConnectRunning,
				Tasks:  []queue.ConnectTask{{ID: 0, State: queue.ConnectRunning}, {ID: 1, State: queue.ConnectFailed, Trace: "boom"}},
				Status: queue.StatusStop, StatusReason: "task 1 failed: boom",
			},
			{Cluster: "prod", Connect: "main", Name: "cdc", Err: "connect main: list connectors: 503 Service Unavailable"},
		},
	}
}

// TestConnectMetricsGolden compares the connector families for a fixed
// snapshot with a golden file. Regenerate it with
// QUEUEWATCH_UPDATE_GOLDEN=1.
func TestConnectMetricsGolden(t *testing.T) {
	c := New([]Source{
		&scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(connectSnapshot())}},
	}, Options{})
	c.PollOnce(context.Background())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	var names []string
	for _, f := range connectFamilies {
		names = append(names, f.name)
	}
	const golden = "testdata/connect_metrics.golden"
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
