package collectors

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/queuewatch/queuewatch/queue"
)

// shareSnapshot has a share group read with the broker's lag, one whose
// lag is estimated (with a partition no member fetched yet), and one that
// could not be read.
func shareSnapshot() *queue.Snapshot {
	return &queue.Snapshot{
		Broker: queue.Kafka, Cluster: "prod", Time: fixedTime,
		ShareGroups: []queue.ShareGroup{
			{
				Cluster: "prod", Name: "workers", State: "Stable",
				Members: []queue.ShareMember{{ID: "a", ClientID: "w-1"}, {ID: "b", ClientID: "w-2"}},
				Partitions: []queue.SharePartition{
					{Topic: "orders", Partition: 0, Initialized: true, Start: 40, End: 50, Lag: 7, LagSource: queue.LagFromBroker},
					{Topic: "orders", Partition: 1, Initialized: true, Start: 12, End: 12, Lag: 0, LagSource: queue.LagFromBroker},
				},
				Status: queue.StatusOK, StatusReason: "7 records waiting, 2 members",
			},
			{
				Cluster: "prod", Name: "old-broker", State: "Empty",
				Partitions: []queue.SharePartition{
					{Topic: "audit", Partition: 0, Initialized: true, Start: 3, End: 9, Lag: 6, LagSource: queue.LagEstimated},
					{Topic: "audit", Partition: 1, End: 4},
				},
				Status: queue.StatusStop, StatusReason: "no members: 6 records waiting",
			},
			{Cluster: "prod", Name: "locked", Err: "describe: GROUP_AUTHORIZATION_FAILED"},
		},
	}
}

// TestShareMetricsGolden compares the share group families for a fixed
// snapshot with a golden file. Regenerate it with
// QUEUEWATCH_UPDATE_GOLDEN=1.
func TestShareMetricsGolden(t *testing.T) {
	c := New([]Source{
		&scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(shareSnapshot())}},
	}, Options{})
	c.PollOnce(context.Background())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	var names []string
	for _, f := range shareFamilies {
		names = append(names, f.name)
	}
	const golden = "testdata/share_metrics.golden"
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

// TestShareTextMatchesCollect holds the cached text exposition of the
// share group families to what Collect produces.
func TestShareTextMatchesCollect(t *testing.T) {
	snap := shareSnapshot()
	snap.ShareGroups[0].Name = `quote" back\slash`
	c := New([]Source{
		&scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(snap)}},
	}, Options{})
	c.PollOnce(context.Background())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	gathered, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*dto.MetricFamily{}
	for _, mf := range gathered {
		want[mf.GetName()] = mf
	}
	rec := httptest.NewRecorder()
	c.Handler(prometheus.NewRegistry()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	got := parseText(t, strings.NewReader(rec.Body.String()))
	if ws, gs := samples(t, want), samples(t, got); strings.Join(ws, "\n") != strings.Join(gs, "\n") {
		t.Errorf("text exposition differs from Collect:\nwant\n%s\ngot\n%s", strings.Join(ws, "\n"), strings.Join(gs, "\n"))
	}
}
