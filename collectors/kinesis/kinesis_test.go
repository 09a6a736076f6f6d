package kinesis

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/alerts"
	brokerkinesis "github.com/queuewatch/queuewatch/brokers/kinesis"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopKinesis()
	testenv.StopMoto()
	os.Exit(code)
}

// world is a stream on kinesis-local and a lease table on moto's DynamoDB
// that one application's source reads.
type world struct {
	k      *testenv.KinesisServer
	m      *testenv.MotoServer
	stream string
	table  string
	src    *Source
	clock  time.Time
}

func newWorld(t *testing.T, shards string) *world {
	t.Helper()
	for _, kv := range []string{"AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true"} {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	w := &world{k: testenv.Kinesis(t), m: testenv.Moto(t), stream: testenv.Unique("orders"), table: testenv.Unique("billing")}
	w.k.AWS(t, "kinesis", "create-stream", "--stream-name", w.stream, "--shard-count", shards)
	w.k.AWS(t, "kinesis", "wait", "stream-exists", "--stream-name", w.stream)
	cfg := config.Kinesis{
		Name: "local", Region: testenv.KinesisRegion, Endpoint: w.k.Endpoint, DynamoDBEndpoint: w.m.Endpoint,
		Streams:      config.Filter{Include: []string{w.stream}},
		Applications: []config.KinesisApplication{{Name: "billing", LeaseTable: w.table, Stream: w.stream, FailoverTime: 10 * time.Second}},
	}
	c, err := brokerkinesis.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w.src, err = New(Options{Cluster: c}); err != nil {
		t.Fatal(err)
	}
	// The source's clock moves a minute a poll, as reads a minute apart
	// would, so lease renewals are judged against the failover time.
	w.clock = time.Now()
	w.src.now = func() time.Time { return w.clock }
	return w
}

// put writes a record on the shard the explicit hash key selects and
// returns its sequence number.
func (w *world) put(t *testing.T, hashKey string) string {
	t.Helper()
	var put struct{ SequenceNumber string }
	out := w.k.AWS(t, "kinesis", "put-record", "--stream-name", w.stream, "--partition-key", "p", "--explicit-hash-key", hashKey, "--data", "eA==")
	if err := json.Unmarshal(out, &put); err != nil {
		t.Fatal(err)
	}
	return put.SequenceNumber
}

func (w *world) poll(t *testing.T) *queue.Snapshot {
	t.Helper()
	w.clock = w.clock.Add(time.Minute)
	s, err := w.src.Poll(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// lastShard is an explicit hash key on the last shard of a two-shard
// stream.
const lastShard = "340282366920938463463374607431768211455"

// TestKinesisApplicationLag reads an application whose lease table (KCL
// 3.x layout, worker metric items beside the leases, written with boto3)
// checkpoints shard 0 at its first of three records and shard 1 at its
// only one: shard 0 is behind by the newest record's arrival less the
// first's (as kinesis-local computes MillisBehindLatest), shard 1 by 0.
// Then the alerts evaluation over further reads: a renewed lease whose
// checkpoint stays behind is stall, and reads with no renewal are stop.
func TestKinesisApplicationLag(t *testing.T) {
	w := newWorld(t, "2")
	first := w.put(t, "0")
	w.put(t, "0")
	w.put(t, "0")
	only := w.put(t, lastShard)
	w.k.KCLLeases(t, w.m.Endpoint, w.table, true, []testenv.KCLLease{
		{Key: "shardId-000000000000", Owner: "worker-1", Counter: 10, Checkpoint: first},
		{Key: "shardId-000000000001", Owner: "worker-2", Counter: 10, Checkpoint: only},
	}, "worker-1", "worker-2")

	e := alerts.NewEvaluator(alerts.StatusOptions{})
	start := time.Now()
	s := w.poll(t)
	took := time.Since(start)
	e.Evaluate(s)
	if len(s.KinesisStreams) != 1 || s.KinesisStreams[0].OpenShards() != 2 || s.KinesisStreams[0].Retention != 24*time.Hour {
		t.Fatalf("streams %+v", s.KinesisStreams)
	}
	a := s.KinesisApps[0]
	if a.Err != "" || len(a.Leases) != 2 || a.Owners() != 2 || len(a.Unleased) != 0 {
		t.Fatalf("application %+v", a)
	}
	l0, l1 := a.Leases[0], a.Leases[1]
	if !l0.HasLag || l0.Behind <= 0 || l0.Arrival.IsZero() || !l1.HasLag || l1.Behind != 0 {
		t.Fatalf("leases %+v", a.Leases)
	}
	if !a.Headroom.Known || a.Headroom.Where != "shardId-000000000000" {
		t.Errorf("headroom %+v, want known on shard 0", a.Headroom)
	}
	if r := a.Reader(); r.Backlog != 1 || r.LagSeconds != l0.Behind.Seconds() || r.Status != queue.StatusOK {
		t.Errorf("reader %+v", r)
	}
	t.Logf("a read of 1 stream and 1 application with 2 leased shards took %s: %+v", took, s.Kinesis.Requests)
	if got := s.Kinesis.Requests; !slices.ContainsFunc(got, func(r queue.SQSRequests) bool { return r.Action == "GetRecords" && r.Count == 2 }) {
		t.Errorf("requests %+v, want 2 GetRecords: one per leased shard", got)
	}

	// A worker renews its leases but shard 0's checkpoint stays behind.
	w.k.KCLLeases(t, w.m.Endpoint, w.table, false, []testenv.KCLLease{
		{Key: "shardId-000000000000", Owner: "worker-1", Counter: 20, Checkpoint: first},
		{Key: "shardId-000000000001", Owner: "worker-2", Counter: 20, Checkpoint: only},
	})
	s = w.poll(t)
	e.Evaluate(s)
	if a := s.KinesisApps[0]; a.Status != queue.StatusStall || !strings.Contains(a.StatusReason, "checkpoint of shardId-000000000000 unmoved") {
		t.Errorf("renewed, unmoved and behind: %s %q, want stall", a.Status, a.StatusReason)
	}
	// No worker renews anything any more.
	s = w.poll(t)
	e.Evaluate(s)
	if a := s.KinesisApps[0]; a.Status != queue.StatusStop || !strings.Contains(a.StatusReason, "no lease renewed in 1m") {
		t.Errorf("no renewal: %s %q, want stop", a.Status, a.StatusReason)
	}
}

// TestKinesisReshard doubles a stream's shards (kinesis-local closes both
// and opens four children): children of a parent not yet at SHARD_END
// wait and are not reported unleased; once a parent's lease is at
// SHARD_END, its children with no lease are.
func TestKinesisReshard(t *testing.T) {
	w := newWorld(t, "2")
	seq := w.put(t, "0")
	w.k.KCLLeases(t, w.m.Endpoint, w.table, true, []testenv.KCLLease{
		{Key: "shardId-000000000000", Owner: "worker-1", Counter: 1, Checkpoint: seq, Layout: "2.x"},
		{Key: "shardId-000000000001", Owner: "worker-1", Counter: 1, Checkpoint: brokerkinesis.CheckpointTrimHorizon, Layout: "2.x"},
	})
	w.k.AWS(t, "kinesis", "update-shard-count", "--stream-name", w.stream, "--target-shard-count", "4", "--scaling-type", "UNIFORM_SCALING")
	w.k.AWS(t, "kinesis", "wait", "stream-exists", "--stream-name", w.stream)

	s := w.poll(t)
	a := s.KinesisApps[0]
	if a.Err != "" || a.Leases[0].Open || a.Leases[1].Open || len(a.Unleased) != 0 {
		t.Fatalf("after the reshard: leases %+v, unleased %v; want both parents closed and no child reported", a.Leases, a.Unleased)
	}
	if st := s.KinesisStreams[0]; st.OpenShards() != 4 || len(st.Shards) != 6 {
		t.Fatalf("stream %+v, want 4 open of 6", st)
	}
	w.k.KCLLeases(t, w.m.Endpoint, w.table, false, []testenv.KCLLease{
		{Key: "shardId-000000000000", Owner: "worker-1", Counter: 2, Checkpoint: brokerkinesis.CheckpointShardEnd, Layout: "2.x"},
		{Key: "shardId-000000000001", Owner: "worker-1", Counter: 2, Checkpoint: brokerkinesis.CheckpointShardEnd, Layout: "2.x"},
	})
	s = w.poll(t)
	a = s.KinesisApps[0]
	if len(a.Unleased) != 4 {
		t.Errorf("parents at SHARD_END, no child lease: unleased %v, want the four children", a.Unleased)
	}
	st, why := alerts.KinesisStatus(nil, time.Time{}, &a, s.Time)
	if st != queue.StatusWarn || !strings.Contains(why, "no lease") {
		t.Errorf("status %s %q, want warn for open shards without lease", st, why)
	}
}

// TestKinesisMissingLeaseTable is one application's error, not the poll's.
func TestKinesisMissingLeaseTable(t *testing.T) {
	w := newWorld(t, "1")
	s := w.poll(t)
	if a := s.KinesisApps[0]; a.Err == "" || !strings.Contains(a.Err, w.table) || a.Reader().Status != queue.StatusError {
		t.Errorf("application without a lease table: %+v", a)
	}
	if len(s.KinesisStreams) != 1 || s.KinesisStreams[0].Err != "" {
		t.Errorf("streams %+v", s.KinesisStreams)
	}
}
