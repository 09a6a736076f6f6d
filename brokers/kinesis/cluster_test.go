package kinesis

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopKinesis()
	testenv.StopMoto()
	os.Exit(code)
}

func newCluster(t *testing.T, k *testenv.KinesisServer, m *testenv.MotoServer) *Cluster {
	t.Helper()
	for _, kv := range []string{"AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true"} {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	c, err := New(config.Kinesis{Name: "local", Region: testenv.KinesisRegion, Endpoint: k.Endpoint, DynamoDBEndpoint: m.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestKinesisStreamAndReadAt describes a two-shard stream with an
// enhanced fan-out consumer, made with the aws CLI, and reads at
// checkpoints: the oldest of three records is as far behind the newest
// as their arrival times (read back by the aws CLI) say, the newest is 0
// behind, and TRIM_HORIZON reads the oldest.
func TestKinesisStreamAndReadAt(t *testing.T) {
	k, m := testenv.Kinesis(t), testenv.Moto(t)
	c := newCluster(t, k, m)
	name := testenv.Unique("stream")
	k.AWS(t, "kinesis", "create-stream", "--stream-name", name, "--shard-count", "2")
	k.AWS(t, "kinesis", "wait", "stream-exists", "--stream-name", name)
	k.AWS(t, "kinesis", "register-stream-consumer", "--stream-arn", k.StreamARN(name), "--consumer-name", "efo-app")
	var seqs []string
	for _, data := range []string{"YQ==", "Yg==", "Yw=="} {
		var put struct {
			ShardID        string `json:"ShardId"`
			SequenceNumber string
		}
		mustJSON(t, k.AWS(t, "kinesis", "put-record", "--stream-name", name, "--partition-key", "p", "--explicit-hash-key", "0", "--data", data), &put)
		if put.ShardID != "shardId-000000000000" {
			t.Fatalf("put on %s, want shard 0", put.ShardID)
		}
		seqs = append(seqs, put.SequenceNumber)
	}

	s, err := c.DescribeStream(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if s.Retention != 24*time.Hour || len(s.Shards) != 2 || !s.Shards[0].Open || !s.Shards[1].Open ||
		len(s.Consumers) != 1 || s.Consumers[0].Name != "efo-app" {
		t.Fatalf("stream %+v", s)
	}
	names, err := c.ListStreams(t.Context())
	if err != nil || !slices.Contains(names, name) {
		t.Fatalf("ListStreams %v %v, want %s among them", names, err, name)
	}

	var got struct {
		ShardIterator string
		Records       []struct{ ApproximateArrivalTimestamp float64 }
	}
	mustJSON(t, k.AWS(t, "kinesis", "get-shard-iterator", "--stream-name", name, "--shard-id", "shardId-000000000000", "--shard-iterator-type", "TRIM_HORIZON"), &got)
	mustJSON(t, k.AWS(t, "kinesis", "get-records", "--shard-iterator", got.ShardIterator), &got)
	if len(got.Records) != 3 {
		t.Fatalf("aws CLI read %d records, want 3", len(got.Records))
	}
	first, last := arrival(got.Records[0].ApproximateArrivalTimestamp), arrival(got.Records[2].ApproximateArrivalTimestamp)

	oldest, err := c.ReadAt(t.Context(), name, "shardId-000000000000", seqs[0])
	if err != nil {
		t.Fatal(err)
	}
	if d := oldest.Behind - last.Sub(first); d < -time.Millisecond || d > time.Millisecond || !oldest.Arrival.Equal(first) {
		t.Errorf("at the oldest record: behind %s arrived %s; the aws CLI read arrivals %s and %s", oldest.Behind, oldest.Arrival, first, last)
	}
	newest, err := c.ReadAt(t.Context(), name, "shardId-000000000000", seqs[2])
	if err != nil || newest.Behind != 0 || !newest.Arrival.Equal(last) {
		t.Errorf("at the newest record: %+v %v, want 0 behind", newest, err)
	}
	horizon, err := c.ReadAt(t.Context(), name, "shardId-000000000000", CheckpointTrimHorizon)
	if err != nil || !horizon.Arrival.Equal(first) {
		t.Errorf("at TRIM_HORIZON: %+v %v, want the oldest record", horizon, err)
	}
	empty, err := c.ReadAt(t.Context(), name, "shardId-000000000001", CheckpointTrimHorizon)
	if err != nil || !empty.Arrival.IsZero() || empty.Behind != 0 {
		t.Errorf("an empty shard's TRIM_HORIZON: %+v %v, want no record", empty, err)
	}
	if r := c.Requests(); r["GetShardIterator"] != 4 || r["GetRecords"] != 4 {
		t.Errorf("requests %v, want 4 GetShardIterator and 4 GetRecords for 4 reads", r)
	}
	if _, err := c.ReadAt(t.Context(), testenv.Unique("gone"), "shardId-000000000000", seqs[0]); err == nil || errors.Is(err, ErrExpired) {
		t.Errorf("a missing stream: %v, want an error that is not ErrExpired", err)
	}
}

// arrival is an arrival time as the aws CLI prints it (epoch seconds with
// a fraction), to the millisecond Kinesis keeps.
func arrival(epoch float64) time.Time {
	return time.UnixMilli(int64(epoch*1000 + 0.5))
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

// TestKinesisLeases reads lease tables written in the KCL's item layouts
// with boto3: a 2.x single-stream table (one childShardId) and a 3.x
// multi-stream table with worker metric items, whose leases on another
// stream are left out.
func TestKinesisLeases(t *testing.T) {
	k, m := testenv.Kinesis(t), testenv.Moto(t)
	c := newCluster(t, k, m)
	v2 := testenv.Unique("kcl2")
	k.KCLLeases(t, m.Endpoint, v2, true, []testenv.KCLLease{
		{Key: "shardId-000000000000", Owner: "w1", Counter: 42, Checkpoint: CheckpointShardEnd, Children: []string{"shardId-000000000002"}, Layout: "2.x"},
		{Key: "shardId-000000000002", Owner: "w2", Counter: 7, Checkpoint: "4960", Switches: 3, Parents: []string{"shardId-000000000000"}, Layout: "2.x"},
	})
	leases, err := c.Leases(t.Context(), v2, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if len(leases) != 2 || leases[0].ShardID != "shardId-000000000000" || leases[0].Owner != "w1" || leases[0].Counter != 42 ||
		!slices.Equal(leases[0].Children, []string{"shardId-000000000002"}) || leases[1].OwnerSwitches != 3 ||
		leases[1].Checkpoint != "4960" || !slices.Equal(leases[1].Parents, []string{"shardId-000000000000"}) || leases[0].Stream != "" {
		t.Fatalf("2.x leases %+v", leases)
	}

	v3 := testenv.Unique("kcl3")
	k.KCLLeases(t, m.Endpoint, v3, true, []testenv.KCLLease{
		{Key: "000000000000:orders:1700000000:shardId-000000000001", Owner: "w1", Counter: 5, Checkpoint: CheckpointTrimHorizon},
		{Key: "000000000000:payments:1700000000:shardId-000000000001", Owner: "w1", Counter: 9, Checkpoint: CheckpointLatest},
		{Key: "000000000000:orders:1700000000:shardId-000000000000", Checkpoint: "123", Children: []string{"a", "b"}},
	}, "w1", "w2")
	leases, err = c.Leases(t.Context(), v3, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if len(leases) != 2 || leases[0].ShardID != "shardId-000000000000" || leases[0].Stream != "orders" || leases[0].Owner != "" ||
		!slices.Equal(leases[0].Children, []string{"a", "b"}) || leases[1].Counter != 5 || !leases[1].Sentinel() || leases[0].Sentinel() {
		t.Fatalf("3.x multi-stream leases of orders %+v", leases)
	}
	if _, err := c.Leases(t.Context(), testenv.Unique("none"), "orders"); err == nil {
		t.Error("a missing lease table reads without an error")
	}
}

func TestSplitKey(t *testing.T) {
	for _, tt := range []struct{ key, stream, shard string }{
		{"shardId-000000000001", "", "shardId-000000000001"},
		{"123456789012:orders:1700000000:shardId-000000000001", "orders", "shardId-000000000001"},
	} {
		if s, sh := splitKey(tt.key); s != tt.stream || sh != tt.shard {
			t.Errorf("splitKey(%q) = %q, %q", tt.key, s, sh)
		}
	}
}
