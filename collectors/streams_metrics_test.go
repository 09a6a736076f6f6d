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

// streamsSnapshot has a running streams group (an input partition with no
// commit yet, a repartition topic, a standby task), one stopped, and one
// that could not be read.
func streamsSnapshot() *queue.Snapshot {
	return &queue.Snapshot{
		Broker: queue.Kafka, Cluster: "prod", Time: fixedTime,
		StreamsGroups: []queue.StreamsGroup{
			{
				Cluster: "prod", Name: "counts", State: "Stable",
				Members: []queue.StreamsMember{
					{ID: "a", ProcessID: "p1", Active: []queue.StreamsTasks{{Subtopology: "0", Partitions: []int32{0, 1}}, {Subtopology: "1", Partitions: []int32{0}}}},
					{ID: "b", ProcessID: "p2", Standby: []queue.StreamsTasks{{Subtopology: "1", Partitions: []int32{0}}}},
				},
				Partitions: []queue.StreamsPartition{
					{Topic: "counts-by-value-repartition", Partition: 0, Internal: true, Committed: 30, End: 32, Lag: 2},
					{Topic: "orders", Partition: 0, Committed: 40, End: 47, Lag: 7},
					{Topic: "orders", Partition: 1, Committed: -1, End: 4, Lag: 4},
				},
				Status: queue.StatusOK, StatusReason: "13 records waiting; 3 active tasks, 1 standby task on 2 members",
			},
			{
				Cluster: "prod", Name: "stopped", State: "Empty",
				Partitions: []queue.StreamsPartition{{Topic: "audit", Partition: 0, Committed: 3, End: 9, Lag: 6}},
				Status:     queue.StatusStop, StatusReason: "no members: 6 records waiting, no task running",
			},
			{Cluster: "prod", Name: "locked", Err: "describe: GROUP_AUTHORIZATION_FAILED"},
		},
	}
}

// TestStreamsMetricsGolden compares the streams group families for a
// fixed snapshot with a golden file. Regenerate it with
// QUEUEWATCH_UPDATE_GOLDEN=1.
func TestStreamsMetricsGolden(t *testing.T) {
	c := New([]Source{
		&scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(streamsSnapshot())}},
	}, Options{})
	c.PollOnce(context.Background())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	var names []string
	for _, f := range streamsFamilies {
		names = append(names, f.name)
	}
	const golden = "testdata/streams_metrics.golden"
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

// TestStreamsTextMatchesCollect holds the cached text exposition of the
// streams group families to what Collect produces.
func TestStreamsTextMatchesCollect(t *testing.T) {
	snap := streamsSnapshot()
	snap.StreamsGroups[0].Name = `quote" back\slash`
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
