package collectors_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/kafkaload"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// kminionSeries is what kminion v2.3.5 exports for kafkaload.Target
// (measured side by side in issue 15): the budget the default must meet.
const kminionSeries = 24465

// seriesBudget is one metrics setting and the most series it may export on
// kafkaload.Target, as a share of kminion's.
type seriesBudget struct {
	name    string
	metrics config.Metrics
	share   float64 // of kminionSeries; 0 for no bound
}

var seriesBudgets = []seriesBudget{
	{"partition (default)", config.Default().Metrics, 1.0},
	{"topic", config.Metrics{Granularity: config.GranularityTopic}, 0.15},
	{"group", config.Metrics{Granularity: config.GranularityGroup}, 0.15},
	{"partition + partition_lag_seconds", config.Metrics{Granularity: config.GranularityPartition, PartitionLagSeconds: true}, 0},
	{"partition + every opt-in", config.Metrics{
		Granularity: config.GranularityPartition, CommittedOffsets: true, PartitionOffsets: true,
		PartitionLagSeconds: true, CommitGaps: true,
	}, 0},
}

// fixedSource serves one snapshot, so that every setting is measured on
// the same poll of the real cluster.
type fixedSource struct{ snap *queue.Snapshot }

func (f fixedSource) Broker() queue.Broker { return f.snap.Broker }
func (f fixedSource) Cluster() string      { return f.snap.Cluster }
func (f fixedSource) Poll(context.Context) (*queue.Snapshot, error) {
	return f.snap, nil
}

// pollTarget seeds kafkaload.Target in kfake, polls it twice with the real
// Kafka collector and status evaluator (the catch-up ETA needs two polls)
// and returns the latest snapshot.
func pollTarget(t *testing.T) *queue.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c, err := kafkaload.Start(ctx, kafkaload.Target)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	src, err := kafka.New(kafka.Options{Cluster: testenv.KafkaCluster(t, "load", c.ListenAddrs())})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ev := alerts.NewEvaluator(alerts.StatusOptions{})
	col := collectors.New([]collectors.Source{src}, collectors.Options{
		Interval: time.Minute, Evaluator: ev,
	})
	col.PollOnce(ctx)
	col.PollOnce(ctx)
	snaps := col.Snapshots()
	if len(snaps) != 1 || snaps[0] == nil {
		t.Fatalf("no snapshot: %+v", col.Statuses())
	}
	return snaps[0]
}

// scrape returns the /metrics a collector with setting m serves for snap:
// the plain body and the gzipped size.
func scrape(t *testing.T, snap *queue.Snapshot, m config.Metrics) (string, int) {
	t.Helper()
	col := collectors.New([]collectors.Source{fixedSource{snap}}, collectors.Options{Metrics: m})
	col.PollOnce(t.Context())
	h := col.Handler(prometheus.NewRegistry())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	gz := httptest.NewRequest("GET", "/metrics", nil)
	gz.Header.Set("Accept-Encoding", "gzip")
	recGz := httptest.NewRecorder()
	h.ServeHTTP(recGz, gz)
	body, err := io.ReadAll(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body), recGz.Body.Len()
}

// seriesByFamily counts the samples of a text exposition by metric name.
func seriesByFamily(body string) (map[string]int, int) {
	out := map[string]int{}
	total := 0
	for line := range strings.Lines(body) {
		if line == "\n" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		out[name]++
		total++
	}
	return out, total
}

// TestSeriesBudget measures the series and bytes of /metrics on the target
// workload for each metrics setting and holds the defaults to their budget:
// a new family that breaks it fails here. go test -v prints the table the
// README quotes.
func TestSeriesBudget(t *testing.T) {
	snap := pollTarget(t)
	var gp, committed int
	for _, g := range snap.Groups {
		gp += len(g.Partitions)
		for _, p := range g.Partitions {
			if p.HasCommit {
				committed++
			}
		}
	}
	if len(snap.Groups) != kafkaload.Target.Groups || gp != kafkaload.Target.GroupPartitions() {
		t.Fatalf("snapshot has %d groups and %d group-partitions, want %d and %d",
			len(snap.Groups), gp, kafkaload.Target.Groups, kafkaload.Target.GroupPartitions())
	}
	var table strings.Builder
	fmt.Fprintf(&table, "workload: %d topics × %d partitions, %d groups × %d topics: %d group-partitions, %d committed\n",
		kafkaload.Target.Topics, kafkaload.Target.Partitions, kafkaload.Target.Groups, kafkaload.Target.TopicsPerGroup, gp, committed)
	fmt.Fprintf(&table, "| setting | series | × kminion (%d) | /metrics | gzip |\n|---|---|---|---|---|\n", kminionSeries)
	for _, b := range seriesBudgets {
		body, gz := scrape(t, snap, b.metrics)
		families, n := seriesByFamily(body)
		share := float64(n) / kminionSeries
		fmt.Fprintf(&table, "| %s | %d | %.2f× | %.2f MB | %.0f KiB |\n", b.name, n, share, float64(len(body))/1e6, float64(gz)/1024)
		if b.share > 0 && share > b.share {
			t.Errorf("%s exports %d series, %.3f× kminion's, over its budget of %.2f×; by family: %v",
				b.name, n, share, b.share, sortedCounts(families))
		}
	}
	t.Log("\n" + table.String())
}

func sortedCounts(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%d", k, v))
	}
	slices.Sort(out)
	return out
}
