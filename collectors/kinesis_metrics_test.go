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

func kinesisSnapshot() *queue.Snapshot {
	return &queue.Snapshot{
		Broker: queue.Kinesis, Cluster: "prod-eu", Time: fixedTime,
		KinesisStreams: []queue.KinesisStream{
			{Cluster: "prod-eu", Name: "orders", Retention: 24 * time.Hour, Consumers: []string{"efo-search"}, Shards: []queue.KinesisShard{
				{ID: "shardId-000000000000"}, {ID: "shardId-000000000001", Parents: []string{"shardId-000000000000"}, Open: true},
			}},
			{Cluster: "prod-eu", Name: "broken", Err: "describe stream broken: AccessDenied"},
		},
		KinesisApps: []queue.KinesisApplication{
			{
				Cluster: "prod-eu", Name: "billing", Stream: "orders", LeaseTable: "billing", Retention: 24 * time.Hour,
				Status: queue.StatusStall, StatusReason: "checkpoint of shardId-000000000001 unmoved since the last read, 12s behind the newest record",
				Headroom: queue.AgeHeadroom(24*time.Hour, 22*time.Hour, "retention"),
				Leases: []queue.KinesisLease{
					{Shard: "shardId-000000000000", Owner: "w1", Checkpoint: "SHARD_END", HasLag: true},
					{Shard: "shardId-000000000001", Owner: "w2", Checkpoint: "4960", HasLag: true, Behind: 12 * time.Second, Open: true},
				},
			},
			{Cluster: "prod-eu", Name: "search", Stream: "orders", LeaseTable: "search", Err: "scan lease table search: ResourceNotFoundException"},
		},
		Kinesis: &queue.KinesisAccount{ReadEvery: time.Minute, Requests: []queue.SQSRequests{{Action: "GetRecords", Count: 2}, {Action: "Scan", Count: 2}}},
	}
}

// TestKinesisMetricsGolden compares the Kinesis families for a fixed
// snapshot with a golden file. Regenerate it with
// QUEUEWATCH_UPDATE_GOLDEN=1.
func TestKinesisMetricsGolden(t *testing.T) {
	c := New([]Source{
		&scriptedSource{broker: queue.Kinesis, cluster: "prod-eu", results: []func() (*queue.Snapshot, error){ok(kinesisSnapshot())}},
	}, Options{})
	c.PollOnce(context.Background())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	names := []string{descHeadroom.name}
	for _, f := range kinesisFamilies {
		names = append(names, f.name)
	}
	const golden = "testdata/kinesis_metrics.golden"
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
