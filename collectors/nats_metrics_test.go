package collectors

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/queuewatch/queuewatch/queue"
)

func natsSnapshot() *queue.Snapshot {
	return &queue.Snapshot{
		Broker: queue.NATS, Cluster: "local", Time: fixedTime,
		Streams: []queue.Stream{{Cluster: "local", Name: "ORDERS", Messages: 10, Bytes: 1234, FirstSeq: 1, LastSeq: 10, Consumers: 3}},
		Consumers: []queue.StreamConsumer{
			{
				Cluster: "local", Stream: "ORDERS", Name: "billing", Pull: true, Pending: 6, AckPending: 3, MaxAckPending: 3,
				Redelivered: 1, Waiting: 2, DeliveredSeq: 4, LagSeconds: 12.5, HasLagSeconds: true,
				Status: queue.StatusStall, StatusReason: "max_ack_pending reached",
				Headroom: queue.Headroom{Seconds: 587.5, Known: true, Limit: "max_age 10m"},
			},
			{Cluster: "local", Stream: "ORDERS", Name: "caught-up", Pull: true, MaxAckPending: 1000, HasLagSeconds: true},
			{Cluster: "local", Stream: "ORDERS", Name: "unread", Err: "its leader did not answer the consumer listing", Status: queue.StatusOK},
		},
	}
}

// TestNATSMetricsGolden compares the NATS families for a fixed snapshot with
// a golden file. Regenerate it with QUEUEWATCH_UPDATE_GOLDEN=1.
func TestNATSMetricsGolden(t *testing.T) {
	c := New([]Source{
		&scriptedSource{broker: queue.NATS, cluster: "local", results: []func() (*queue.Snapshot, error){ok(natsSnapshot())}},
	}, Options{})
	c.PollOnce(context.Background())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	var names []string
	for _, f := range natsFamilies {
		names = append(names, f.name)
	}
	names = append(names, descHeadroom.name)
	const golden = "testdata/nats_metrics.golden"
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

// TestNATSTextMatchesCollect holds the cached text exposition of the NATS
// families to what Collect produces.
func TestNATSTextMatchesCollect(t *testing.T) {
	snap := natsSnapshot()
	snap.Consumers[0].Name = `quote" back\slash`
	c := New([]Source{
		&scriptedSource{broker: queue.NATS, cluster: "local", results: []func() (*queue.Snapshot, error){ok(snap)}},
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
	got := parseText(t, rec.Body)
	if ws, gs := samples(t, want), samples(t, got); strings.Join(ws, "\n") != strings.Join(gs, "\n") {
		t.Errorf("text exposition differs from Collect:\nwant\n%s\ngot\n%s", strings.Join(ws, "\n"), strings.Join(gs, "\n"))
	}
}

// TestConsumerHistory: each poll adds a point per consumer, and consumers
// that are gone are forgotten.
func TestConsumerHistory(t *testing.T) {
	first, second := natsSnapshot(), natsSnapshot()
	second.Time = fixedTime.Add(15 * time.Second)
	second.Consumers[0].Pending = 9
	second.Consumers = second.Consumers[:1]
	c := New([]Source{
		&scriptedSource{broker: queue.NATS, cluster: "local", results: []func() (*queue.Snapshot, error){ok(first), ok(second)}},
	}, Options{})
	c.PollOnce(context.Background())
	c.PollOnce(context.Background())
	h := c.ConsumerHistory("local", "ORDERS", "billing")
	if len(h) != 2 || h[0].Pending != 6 || h[1].Pending != 9 || h[1].AckPending != 3 ||
		h[1].LagSeconds != 12.5 || !h[1].HasLagSeconds || !h[1].At.Equal(second.Time) {
		t.Errorf("billing history %+v", h)
	}
	if h := c.ConsumerHistory("local", "ORDERS", "caught-up"); len(h) != 0 {
		t.Errorf("a consumer gone from the last poll kept %d points", len(h))
	}
	if h := c.ConsumerHistory("other", "ORDERS", "billing"); h != nil {
		t.Errorf("another cluster's history: %+v", h)
	}
}
