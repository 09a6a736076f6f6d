package collectors

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// scriptedSource replays a fixed list of poll results; it stands in for a
// broker so the scheduler's own behaviour can be tested exactly.
type scriptedSource struct {
	broker  queue.Broker
	cluster string
	results []func() (*queue.Snapshot, error)
	calls   atomic.Int64
	active  atomic.Int64
	overlap atomic.Bool
	delay   time.Duration
}

func (s *scriptedSource) Broker() queue.Broker { return s.broker }
func (s *scriptedSource) Cluster() string      { return s.cluster }
func (s *scriptedSource) Poll(ctx context.Context) (*queue.Snapshot, error) {
	if s.active.Add(1) > 1 {
		s.overlap.Store(true)
	}
	defer s.active.Add(-1)
	if s.delay > 0 {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	i := int(s.calls.Add(1)) - 1
	return s.results[min(i, len(s.results)-1)]()
}

var fixedTime = time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)

func kafkaSnapshot() *queue.Snapshot {
	return &queue.Snapshot{
		Broker: queue.Kafka, Cluster: "prod", Time: fixedTime,
		Partitions: []queue.PartitionOffsets{
			{Topic: "orders", Partition: 0, LogStart: 10, End: 120, LastStable: 118},
			{Topic: "orders", Partition: 1, LogStart: 0, End: 80, LastStable: 80},
		},
		Groups: []queue.ConsumerGroup{{
			Cluster: "prod", Name: "billing", State: "Stable", Protocol: "range", Type: queue.GroupClassic, Members: 2,
			Status: queue.StatusWarn, ETA: queue.ETA{Known: true, In: 90 * time.Second},
			Headroom: queue.Headroom{Seconds: 3547.5, Known: true, Limit: "retention.ms 1h", Where: "orders/1"},
			Partitions: []queue.PartitionLag{
				{Topic: "orders", Partition: 0, Committed: 100, HasCommit: true, End: 120, LogStart: 10, Lag: 20, LagSeconds: 12.5},
				{Topic: "orders", Partition: 1, End: 80, Lag: 80, LagSeconds: 40, Member: "consumer-2"},
			},
		}, {
			Cluster: "prod", Name: "secret", Type: queue.GroupClassic, Err: "fetch offsets: GROUP_AUTHORIZATION_FAILED",
		}},
		DLQs: []queue.DLQ{{Broker: queue.Kafka, Cluster: "prod", Name: "orders.DLT", Sources: []string{"orders"}, Messages: 7, OldestAge: time.Hour, HasOldestAge: true}},
	}
}

func rabbitSnapshot() *queue.Snapshot {
	return &queue.Snapshot{
		Broker: queue.RabbitMQ, Cluster: "main", Time: fixedTime,
		Queues: []queue.Queue{{Cluster: "main", VHost: "/", Name: "orders", Type: "quorum", Ready: 5, Unacked: 2, Consumers: 3, HeadMessageAge: 30 * time.Second, HasHeadAge: true, MessageTTL: time.Minute}},
		DLQs:   []queue.DLQ{{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "orders.dlq", Sources: []string{"orders"}, Messages: 4}},
	}
}

func ok(s *queue.Snapshot) func() (*queue.Snapshot, error) {
	return func() (*queue.Snapshot, error) { return s, nil }
}

func failing(msg string) func() (*queue.Snapshot, error) {
	return func() (*queue.Snapshot, error) { return nil, errors.New(msg) }
}

// everyFamily is the partition granularity with every opt-in family: all
// that the collector can export.
var everyFamily = config.Metrics{
	Granularity: config.GranularityPartition, CommittedOffsets: true, PartitionOffsets: true,
	PartitionLagSeconds: true, CommitGaps: true,
}

// TestMetricsGolden compares /metrics for a fixed scenario with a golden
// file, every family on (TestGranularityFamilies checks which each setting
// leaves out). Regenerate it with QUEUEWATCH_UPDATE_GOLDEN=1 go test ./collectors/.
func TestMetricsGolden(t *testing.T) {
	c := New([]Source{
		&scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(kafkaSnapshot())}},
		&scriptedSource{broker: queue.RabbitMQ, cluster: "main", results: []func() (*queue.Snapshot, error){ok(rabbitSnapshot())}},
	}, Options{Metrics: everyFamily})
	c.PollOnce(context.Background())

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	// Durations and timestamps vary run to run; the golden file pins the
	// snapshot-derived series.
	names := []string{
		"queuewatch_kafka_consumergroup_lag", "queuewatch_kafka_consumergroup_lag_seconds",
		"queuewatch_kafka_consumergroup_committed_offset", "queuewatch_kafka_consumergroup_topic_lag",
		"queuewatch_kafka_consumergroup_topic_lag_seconds",
		"queuewatch_kafka_consumergroup_uncommitted_partitions", "queuewatch_kafka_consumergroup_lost_messages",
		"queuewatch_kafka_consumergroup_max_lag_seconds", "queuewatch_kafka_consumergroup_members",
		"queuewatch_kafka_consumergroup_info", "queuewatch_kafka_consumergroup_status",
		"queuewatch_kafka_consumergroup_catchup_eta_seconds", "queuewatch_kafka_partition_high_watermark",
		"queuewatch_kafka_partition_log_start_offset", "queuewatch_kafka_partition_last_stable_offset",
		"queuewatch_rabbitmq_queue_messages", "queuewatch_rabbitmq_queue_consumers",
		"queuewatch_rabbitmq_queue_head_message_age_seconds", "queuewatch_rabbitmq_queue_info",
		"queuewatch_rabbitmq_queue_status", "queuewatch_dlq_messages", "queuewatch_dlq_oldest_message_age_seconds",
		"queuewatch_collector_up", "queuewatch_collector_errors_total", "queuewatch_collector_partial_errors",
		"queuewatch_reader_retention_headroom_seconds",
	}
	const golden = "testdata/metrics.golden"
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

func TestFailingSourceKeepsOthers(t *testing.T) {
	bad := &scriptedSource{broker: queue.Kafka, cluster: "eu", results: []func() (*queue.Snapshot, error){
		ok(&queue.Snapshot{Broker: queue.Kafka, Cluster: "eu", Time: fixedTime, Groups: []queue.ConsumerGroup{{Name: "g"}}}),
		failing("dial tcp: connection refused"),
	}}
	good := &scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(kafkaSnapshot())}}
	c := New([]Source{bad, good}, Options{})
	if c.Ready() {
		t.Fatal("ready before any poll")
	}
	c.PollOnce(context.Background())
	c.PollOnce(context.Background())
	if !c.Ready() {
		t.Fatal("not ready after polls")
	}
	st := c.Statuses()
	if st[0].Up || st[0].LastError != "dial tcp: connection refused" || st[0].LastSuccess != fixedTime {
		t.Errorf("failing source status %+v", st[0])
	}
	if !st[1].Up {
		t.Errorf("healthy source down: %+v", st[1])
	}
	if got := testutil.ToFloat64(c.metrics.errors.WithLabelValues("kafka", "eu")); got != 1 {
		t.Errorf("errors_total for the failing source %v, want 1", got)
	}
	if got := testutil.ToFloat64(c.metrics.errors.WithLabelValues("kafka", "prod")); got != 0 {
		t.Errorf("errors_total for the healthy source %v, want 0", got)
	}
	// The failing source's last good data stays visible, marked by up=0.
	if n := len(c.Snapshots()); n != 2 {
		t.Errorf("%d snapshots, want 2", n)
	}
}

func TestPanickingSourceFailsPoll(t *testing.T) {
	s := &scriptedSource{broker: queue.Kafka, cluster: "x", results: []func() (*queue.Snapshot, error){
		func() (*queue.Snapshot, error) { panic("boom") },
	}}
	c := New([]Source{s}, Options{})
	c.PollOnce(context.Background())
	if st := c.Statuses()[0]; st.Up || !strings.Contains(st.LastError, "boom") {
		t.Errorf("status %+v", st)
	}
}

func TestPollsNeverOverlap(t *testing.T) {
	s := &scriptedSource{
		broker: queue.Kafka, cluster: "x", delay: 20 * time.Millisecond,
		results: []func() (*queue.Snapshot, error){ok(kafkaSnapshot())},
	}
	c := New([]Source{s}, Options{Interval: time.Second})
	done := make(chan struct{})
	for range 4 {
		go func() { c.PollOnce(context.Background()); done <- struct{}{} }()
	}
	for range 4 {
		<-done
	}
	if s.overlap.Load() {
		t.Error("two polls of one source ran at once")
	}
}

func TestRunPollsOnInterval(t *testing.T) {
	// Each poll takes half the interval: the interval runs start to start,
	// so 1s still holds about 20 polls (not 13, as end-to-start would).
	s := &scriptedSource{
		broker: queue.Kafka, cluster: "x", delay: 25 * time.Millisecond,
		results: []func() (*queue.Snapshot, error){ok(kafkaSnapshot())},
	}
	c := New([]Source{s}, Options{Interval: 50 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c.Run(ctx)
	if n := s.calls.Load(); n < 17 || n > 23 {
		t.Errorf("%d polls in 1s at a 50ms interval", n)
	}
}

func TestEvaluateSeesEverySnapshotBeforeItIsPublished(t *testing.T) {
	s := &scriptedSource{broker: queue.Kafka, cluster: "x", results: []func() (*queue.Snapshot, error){
		ok(kafkaSnapshot()), failing("down"), ok(kafkaSnapshot()), failing("down"), ok(kafkaSnapshot()),
	}}
	ev := &recordingEvaluator{}
	c := New([]Source{s}, Options{Evaluator: ev})
	ev.published = c.Snapshots
	for range 5 {
		c.PollOnce(context.Background())
	}
	if want := "evaluate evaluate evaluate"; ev.calls() != want { // the failed polls are not evaluated
		t.Errorf("evaluator calls %q, want %q", ev.calls(), want)
	}
	if got := c.Snapshots()[0].Groups[0].Status; got != queue.StatusStall {
		t.Errorf("published status %q", got)
	}
}

func TestHistoryBoundedAndForgetsGone(t *testing.T) {
	i := 0
	s := &scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){
		func() (*queue.Snapshot, error) {
			i++
			snap := kafkaSnapshot()
			snap.Time = fixedTime.Add(time.Duration(i) * time.Second)
			if i > 8 {
				snap.Groups = snap.Groups[1:] // billing disappears
			}
			return snap, nil
		},
	}}
	c := New([]Source{s}, Options{Interval: time.Second, History: 4 * time.Second})
	for range 7 {
		c.PollOnce(context.Background())
	}
	h := c.ReaderHistory(billingKey)
	if len(h) != 5 || h[0].At != fixedTime.Add(3*time.Second) || h[4].Backlog != 100 || h[4].LagSeconds != 40 {
		t.Errorf("history %+v", h)
	}
	if d := c.DLQHistory("kafka:prod::orders.DLT"); len(d) != 5 || d[4].Messages != 7 {
		t.Errorf("dlq history %+v", d)
	}
	c.PollOnce(context.Background())
	c.PollOnce(context.Background())
	if h := c.ReaderHistory(billingKey); len(h) != 0 {
		t.Errorf("vanished group still has history: %d points", len(h))
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		failures int
		want     time.Duration
	}{{0, 15 * time.Second}, {1, 15 * time.Second}, {2, 30 * time.Second}, {3, time.Minute}, {10, 5 * time.Minute}}
	for _, tt := range tests {
		if got := backoff(15*time.Second, tt.failures); got != tt.want {
			t.Errorf("backoff(15s, %d) = %v, want %v", tt.failures, got, tt.want)
		}
	}
	if got := backoff(10*time.Minute, 5); got != 10*time.Minute {
		t.Errorf("backoff never shortens a long interval: got %v", got)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGranularityFamilies checks which Kafka families each metrics setting
// exports, and that RabbitMQ, DLQ and self families do not depend on it.
func TestGranularityFamilies(t *testing.T) {
	always := []string{
		"queuewatch_collector_errors_total", "queuewatch_collector_partial_errors", "queuewatch_collector_up",
		"queuewatch_dlq_messages", "queuewatch_dlq_oldest_message_age_seconds",
		"queuewatch_kafka_consumergroup_status",
		"queuewatch_rabbitmq_queue_consumers", "queuewatch_rabbitmq_queue_head_message_age_seconds",
		"queuewatch_rabbitmq_queue_info", "queuewatch_rabbitmq_queue_messages", "queuewatch_rabbitmq_queue_status",
		"queuewatch_reader_retention_headroom_seconds",
	}
	group := []string{
		"queuewatch_kafka_consumergroup_catchup_eta_seconds", "queuewatch_kafka_consumergroup_info",
		"queuewatch_kafka_consumergroup_max_lag_seconds", "queuewatch_kafka_consumergroup_members",
	}
	topic := []string{"queuewatch_kafka_consumergroup_topic_lag", "queuewatch_kafka_consumergroup_topic_lag_seconds"}
	for _, tt := range []struct {
		metrics config.Metrics
		want    [][]string
	}{
		{config.Metrics{}, [][]string{always, group, topic, {"queuewatch_kafka_consumergroup_lag"}}},
		{config.Metrics{Granularity: config.GranularityTopic}, [][]string{always, topic}},
		{config.Metrics{Granularity: config.GranularityGroup}, [][]string{always, group, {"queuewatch_kafka_consumergroup_total_lag"}}},
		{config.Metrics{Granularity: config.GranularityGroup, CommittedOffsets: true, PartitionLagSeconds: true}, [][]string{
			always, group, {"queuewatch_kafka_consumergroup_total_lag", "queuewatch_kafka_consumergroup_committed_offset", "queuewatch_kafka_consumergroup_lag_seconds"},
		}},
		{config.Metrics{Granularity: config.GranularityTopic, PartitionOffsets: true, CommitGaps: true}, [][]string{always, topic, {
			"queuewatch_kafka_partition_high_watermark", "queuewatch_kafka_partition_log_start_offset", "queuewatch_kafka_partition_last_stable_offset",
			"queuewatch_kafka_consumergroup_uncommitted_partitions", "queuewatch_kafka_consumergroup_lost_messages",
		}}},
	} {
		c := New([]Source{
			&scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(kafkaSnapshot())}},
			&scriptedSource{broker: queue.RabbitMQ, cluster: "main", results: []func() (*queue.Snapshot, error){ok(rabbitSnapshot())}},
		}, Options{Metrics: tt.metrics})
		c.PollOnce(context.Background())
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, mf := range mfs {
			if !strings.HasPrefix(mf.GetName(), "queuewatch_collector_duration") && !strings.HasSuffix(mf.GetName(), "last_success_timestamp_seconds") {
				got = append(got, mf.GetName())
			}
		}
		want := slices.Concat(tt.want...)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%+v exports\n%v\nwant\n%v", tt.metrics, got, want)
		}
	}
	// The group granularity's total lag is the sum over every partition.
	c := New([]Source{&scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(kafkaSnapshot())}}},
		Options{Metrics: config.Metrics{Granularity: config.GranularityGroup}})
	c.PollOnce(context.Background())
	want := "# HELP queuewatch_kafka_consumergroup_total_lag " + descTotalLag.help + "\n# TYPE queuewatch_kafka_consumergroup_total_lag gauge\n" +
		`queuewatch_kafka_consumergroup_total_lag{cluster="prod",group="billing"} 100` + "\n"
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "queuewatch_kafka_consumergroup_total_lag"); err != nil {
		t.Error(err)
	}
}

func outboxSnapshot(i int) *queue.Snapshot {
	snap := &queue.Snapshot{
		Broker: queue.Outbox, Cluster: "orders-db", Time: fixedTime.Add(time.Duration(i) * time.Second),
		OutboxTables: []queue.OutboxTable{
			{Source: "orders-db", Table: "outbox", Pending: int64(10 * i), OldestPendingAge: time.Duration(i) * time.Second},
			{Source: "orders-db", Table: "audit_outbox", Pending: 1},
		},
		Slots: []queue.ReplicationSlot{{Source: "orders-db", Slot: "debezium", LagBytes: int64(1000 * i), Active: i%2 == 0}},
	}
	switch {
	case i == 5:
		// The table could not be read: no point, but the history stays.
		snap.OutboxTables[0] = queue.OutboxTable{Source: "orders-db", Table: "outbox", Err: "relation does not exist"}
	case i == 6:
		// The slot's lag is unknown: no point, rather than a false 0.
		snap.Slots[0].LagBytes, snap.Slots[0].LagUnknown = 0, "physical slot that reserves no WAL yet"
	case i > 7:
		snap.OutboxTables = snap.OutboxTables[:1] // audit_outbox dropped
		snap.Slots = nil
	}
	return snap
}

func TestOutboxHistoryBoundedAndForgetsGone(t *testing.T) {
	i := 0
	s := &scriptedSource{broker: queue.Outbox, cluster: "orders-db", results: []func() (*queue.Snapshot, error){
		func() (*queue.Snapshot, error) { i++; return outboxSnapshot(i), nil },
	}}
	// A Kafka cluster of the same name must not answer for the outbox.
	k := &scriptedSource{broker: queue.Kafka, cluster: "orders-db", results: []func() (*queue.Snapshot, error){
		func() (*queue.Snapshot, error) { return kafkaSnapshot(), nil },
	}}
	c := New([]Source{k, s}, Options{Interval: time.Second, History: 4 * time.Second})
	for range 7 {
		c.PollOnce(context.Background())
	}
	h := c.OutboxHistory("orders-db", "outbox")
	var at []int
	for _, p := range h {
		at = append(at, int(p.At.Sub(fixedTime)/time.Second))
	}
	// Polls 1–7, five points kept, poll 5 (the read error) has none.
	if !equal(at, []int{2, 3, 4, 6, 7}) || h[4].Pending != 70 || h[4].OldestPendingAge != 7*time.Second {
		t.Errorf("outbox history at %v: %+v", at, h)
	}
	sl := c.SlotHistory("orders-db", "debezium")
	var slotAt []int
	for _, p := range sl {
		slotAt = append(slotAt, int(p.At.Sub(fixedTime)/time.Second))
	}
	// Poll 6, of unknown lag, has no point.
	if !equal(slotAt, []int{2, 3, 4, 5, 7}) || sl[4].LagBytes != 7000 || sl[4].Active || !sl[2].Active {
		t.Errorf("slot history at %v: %+v", slotAt, sl)
	}
	if h := c.OutboxHistory("nope", "outbox"); h != nil {
		t.Errorf("unknown source has history %+v", h)
	}
	c.PollOnce(context.Background())
	if h := c.OutboxHistory("orders-db", "audit_outbox"); len(h) != 0 {
		t.Errorf("dropped table still has %d points", len(h))
	}
	if h := c.SlotHistory("orders-db", "debezium"); len(h) != 0 {
		t.Errorf("dropped slot still has %d points", len(h))
	}
	if h := c.OutboxHistory("orders-db", "outbox"); len(h) != 5 || h[4].Pending != 80 {
		t.Errorf("outbox history after drop %+v", h)
	}
}

func TestWhenReadyClosesOnceEverySourceWasPolled(t *testing.T) {
	release := make(chan struct{})
	slow := &scriptedSource{broker: queue.RabbitMQ, cluster: "main", results: []func() (*queue.Snapshot, error){
		func() (*queue.Snapshot, error) { <-release; return nil, errors.New("refused") },
	}}
	fast := &scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(kafkaSnapshot())}}
	c := New([]Source{fast, slow}, Options{})
	go c.PollOnce(context.Background())
	for deadline := time.Now().Add(5 * time.Second); fast.calls.Load() == 0 || c.Snapshots() == nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the fast source was not polled")
		}
	}
	select {
	case <-c.WhenReady():
		t.Fatal("ready before the slow source was polled")
	default:
	}
	close(release)
	select {
	case <-c.WhenReady(): // a failed poll counts: its error is the data
	case <-time.After(5 * time.Second):
		t.Fatal("not ready after every source was polled")
	}
}

// recordingEvaluator records its calls and marks each group stalled, failing
// a snapshot evaluated after it was published.
type recordingEvaluator struct {
	mu        sync.Mutex
	log       []string
	published func() []*queue.Snapshot
}

func (e *recordingEvaluator) Evaluate(s *queue.Snapshot) { e.record("evaluate", s) }
func (e *recordingEvaluator) Complete(s *queue.Snapshot) { e.record("complete", s) }

func (e *recordingEvaluator) record(call string, s *queue.Snapshot) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.published != nil {
		for _, p := range e.published() {
			if p == s {
				e.log = append(e.log, "after-publish")
			}
		}
	}
	e.log = append(e.log, call)
	for i := range s.Groups {
		s.Groups[i].Status = queue.StatusStall
	}
}

func (e *recordingEvaluator) calls() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.log, " ")
}

// TestHistoryOfSameNamedClusters: a Kafka and a NATS cluster of the same
// name each answer for their own readers, whichever is listed first.
func TestHistoryOfSameNamedClusters(t *testing.T) {
	for _, natsFirst := range []bool{true, false} {
		k := &scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(kafkaSnapshot())}}
		n := &scriptedSource{broker: queue.NATS, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(natsSnapshot())}}
		srcs := []Source{k, n}
		if natsFirst {
			srcs = []Source{n, k}
		}
		c := New(srcs, Options{})
		c.PollOnce(context.Background())
		if h := c.ReaderHistory(billingKey); len(h) != 1 {
			t.Errorf("nats first %v: group history %+v", natsFirst, h)
		}
		if h := c.ConsumerHistory("prod", "ORDERS", "billing"); len(h) != 1 || h[0].Pending != 6 {
			t.Errorf("nats first %v: consumer history %+v", natsFirst, h)
		}
	}
}
