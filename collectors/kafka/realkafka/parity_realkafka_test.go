package realkafka

import (
	"context"
	"encoding/binary"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	collector "github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// The tests in this file repeat collectors/kafka's kfake tests on the real
// broker, with the same setup (admin commits, timestamps set by the
// producer) and the same assertions.

func (b *broker) produceAt(topic string, partition int32, n int, last time.Time, headers ...kgo.RecordHeader) {
	b.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.node.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		b.t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{
			Topic: topic, Partition: partition, Value: []byte("v"), Headers: headers,
			Timestamp: last.Add(-time.Duration(n-1-i) * time.Second),
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		b.t.Fatal(err)
	}
}

func (b *broker) commit(group, topic string, offsets map[int32]int64) {
	b.t.Helper()
	os := kadm.Offsets{}
	for p, at := range offsets {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
	}
	if err := b.adm.CommitAllOffsets(context.Background(), group, os); err != nil {
		b.t.Fatal(err)
	}
}

func group(t *testing.T, snap *queue.Snapshot, name string) *queue.ConsumerGroup {
	t.Helper()
	g, ok := snap.Group(name)
	if !ok {
		t.Fatalf("group %q missing from snapshot (groups: %d)", name, len(snap.Groups))
	}
	return g
}

func partition(t *testing.T, g *queue.ConsumerGroup, topic string, p int32) queue.PartitionLag {
	t.Helper()
	for _, pl := range g.Partitions {
		if pl.Topic == topic && pl.Partition == p {
			return pl
		}
	}
	t.Fatalf("group %s has no %s/%d (partitions %+v)", g.Name, topic, p, g.Partitions)
	return queue.PartitionLag{}
}

// TestPollLag is collectors/kafka's TestPollLag on the real broker, plus a
// LogAppendTime topic, where the broker's append time replaces the
// producer's timestamp and lag seconds follow it.
func TestPollLag(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	orders := b.topic(3)
	now := time.Now().Truncate(time.Millisecond)
	for p := range int32(3) {
		b.produceAt(orders, p, 10, now.Add(-time.Minute))
	}
	billing := testenv.Unique("billing")
	b.commit(billing, orders, map[int32]int64{0: 4, 1: 10})

	appended := testenv.Unique("topic")
	logAppend := "LogAppendTime"
	if _, err := b.adm.CreateTopic(context.Background(), 1, 1,
		map[string]*string{"message.timestamp.type": &logAppend}, appended); err != nil {
		t.Fatal(err)
	}
	b.produceAt(appended, 0, 10, now.Add(-time.Hour))
	b.commit(billing, appended, map[int32]int64{0: 4})

	snap := poll(t, b.source(false, billing))
	g := group(t, snap, billing)
	tests := []struct {
		p          int32
		lag        int64
		hasCommit  bool
		lagSeconds float64 // age of the record at the committed offset
	}{
		{0, 6, true, time.Since(now.Add(-time.Minute - 5*time.Second)).Seconds()},
		{1, 0, true, 0},
		{2, 10, false, time.Since(now.Add(-time.Minute - 9*time.Second)).Seconds()},
	}
	for _, tt := range tests {
		pl := partition(t, g, orders, tt.p)
		if pl.Lag != tt.lag || pl.HasCommit != tt.hasCommit || pl.End != 10 {
			t.Errorf("p%d: lag %d commit %v end %d; want lag %d commit %v end 10", tt.p, pl.Lag, pl.HasCommit, pl.End, tt.lag, tt.hasCommit)
		}
		if d := pl.LagSeconds - tt.lagSeconds; d > 2 || d < -2 {
			t.Errorf("p%d: lag seconds %.1f, want ≈%.1f", tt.p, pl.LagSeconds, tt.lagSeconds)
		}
		if pl.LagSecondsEstimated {
			t.Errorf("p%d: lag seconds estimated, want fetched", tt.p)
		}
	}
	pl := partition(t, g, appended, 0)
	if age := time.Since(now).Seconds(); pl.Lag != 6 || pl.LagSecondsEstimated || pl.LagSeconds > age+2 {
		t.Errorf("LogAppendTime topic: lag %d, lag seconds %.1f (estimated %v); want 6 and at most %.1f (appended since the test began, not an hour ago)",
			pl.Lag, pl.LagSeconds, pl.LagSecondsEstimated, age)
	}
	if g.TotalLag() != 16+6 || g.State != "Empty" || g.Members != 0 {
		t.Errorf("group: total %d state %q members %d", g.TotalLag(), g.State, g.Members)
	}
}

func TestCommittedBelowLogStart(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	logs := b.topic(1)
	b.produceAt(logs, 0, 10, time.Now())
	slow := testenv.Unique("slow")
	b.commit(slow, logs, map[int32]int64{0: 2})
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: logs, Partition: 0, At: 5})
	if _, err := b.adm.DeleteRecords(context.Background(), os); err != nil {
		t.Fatal(err)
	}
	pl := partition(t, group(t, poll(t, b.source(false, slow)), slow), logs, 0)
	if pl.Lag != 5 || pl.Lost != 3 || pl.LogStart != 5 {
		t.Errorf("lag %d lost %d log start %d; want 5, 3, 5", pl.Lag, pl.Lost, pl.LogStart)
	}
}

func TestTopologyChanges(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	a, bt := b.topic(1), b.topic(1)
	b.produceAt(a, 0, 3, time.Now())
	b.produceAt(bt, 0, 3, time.Now())
	g, gone := testenv.Unique("g"), testenv.Unique("gone")
	b.commit(g, a, map[int32]int64{0: 1})
	b.commit(g, bt, map[int32]int64{0: 1})
	b.commit(gone, a, map[int32]int64{0: 0})
	s := b.source(false, g, gone)
	if got := group(t, poll(t, s), g); len(got.Partitions) != 2 {
		t.Fatalf("partitions %+v", got.Partitions)
	}
	ctx := context.Background()

	t.Run("partition added", func(t *testing.T) {
		if _, err := b.adm.CreatePartitions(ctx, 1, a); err != nil {
			t.Fatal(err)
		}
		b.produceAt(a, 1, 7, time.Now())
		pl := partition(t, group(t, poll(t, s), g), a, 1)
		if pl.HasCommit || pl.Lag != 7 {
			t.Errorf("new partition: commit %v lag %d; want uncommitted with lag 7", pl.HasCommit, pl.Lag)
		}
	})
	t.Run("topic deleted", func(t *testing.T) {
		if _, err := b.adm.DeleteTopics(ctx, bt); err != nil {
			t.Fatal(err)
		}
		got := group(t, poll(t, s), g)
		for _, pl := range got.Partitions {
			if pl.Topic == bt {
				t.Errorf("deleted topic still reported: %+v", pl)
			}
		}
	})
	t.Run("group deleted", func(t *testing.T) {
		if _, err := b.adm.DeleteGroup(ctx, gone); err != nil {
			t.Fatal(err)
		}
		if _, ok := poll(t, s).Group(gone); ok {
			t.Error("deleted group still reported")
		}
	})
}

// TestDLQDepthAndCursor is collectors/kafka's test of the same name: depth
// counted from the replay cursor group, the source from Spring's and
// Connect's headers, the oldest record's age.
func TestDLQDepthAndCursor(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	base := testenv.Unique("orders")
	dlt, dlq := base+".DLT", base+"-payments-dlq"
	for _, tp := range []struct {
		name string
		n    int32
	}{{dlt, 2}, {dlq, 1}} {
		if _, err := b.adm.CreateTopic(context.Background(), tp.n, 1, nil, tp.name); err != nil {
			t.Fatal(err)
		}
	}
	oldest := time.Now().Add(-2 * time.Hour).Truncate(time.Millisecond)
	offset := make([]byte, 8)
	binary.BigEndian.PutUint64(offset, 42)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.node.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := range 5 {
		recs = append(recs, &kgo.Record{
			Topic: dlt, Partition: int32(i % 2), Value: []byte("{}"),
			Timestamp: oldest.Add(time.Duration(i) * time.Minute),
			Headers: []kgo.RecordHeader{
				{Key: "kafka_dlt-original-topic", Value: []byte("orders-v2")},
				{Key: "kafka_dlt-original-offset", Value: offset},
			},
		})
	}
	recs = append(recs, &kgo.Record{
		Topic: dlq, Value: []byte("x"), Timestamp: oldest,
		Headers: []kgo.RecordHeader{{Key: "__connect.errors.topic", Value: []byte("payments")}},
	})
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// A cursor group of this test's own, so tests sharing the node never
	// see each other's replays.
	cursor := testenv.Unique("cursor")
	ours := regexp.MustCompile("^" + regexp.QuoteMeta(base) + `.*[._-](dlq|DLT)$`)
	c, err := brokerkafka.New(config.Kafka{Name: "real", Brokers: []string{b.node.Addr()}},
		config.DLQ{KafkaCursorGroup: cursor}, kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	s, err := collector.New(collector.Options{
		Cluster:      c,
		IncludeGroup: func(string) bool { return false },
		DLQTopic: func(topic string) (queue.DLQDetection, bool) {
			return queue.DetectedName, ours.MatchString(topic)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	snap := poll(t, s)
	if len(snap.DLQs) != 2 {
		t.Fatalf("DLQs %+v; want %s and %s only", snap.DLQs, dlt, dlq)
	}
	d := findDLQ(t, snap, dlt)
	if d.Messages != 5 || d.Source() != "orders-v2" || d.Detection != queue.DetectedName || d.VHost != "" {
		t.Errorf("%s: %+v; want 5 messages from orders-v2 (Spring header)", dlt, d)
	}
	if age := time.Since(oldest); !d.HasOldestAge || d.OldestAge < age-5*time.Second || d.OldestAge > age+5*time.Second {
		t.Errorf("oldest age %v (known %v), want ≈%v", d.OldestAge, d.HasOldestAge, age)
	}
	if p := findDLQ(t, snap, dlq); p.Messages != 1 || p.Source() != "payments" {
		t.Errorf("%s: %+v; want 1 message from payments (Connect header)", dlq, p)
	}

	b.commit(cursor, dlt, map[int32]int64{0: 2, 1: 2})
	d = findDLQ(t, poll(t, s), dlt)
	if d.Messages != 1 || d.Source() != "orders-v2" {
		t.Errorf("after cursor: %+v; want 1 message, source kept", d)
	}
	if age := time.Since(oldest.Add(4 * time.Minute)); d.OldestAge < age-5*time.Second || d.OldestAge > age+5*time.Second {
		t.Errorf("after cursor: oldest age %v, want ≈%v", d.OldestAge, age)
	}
	b.commit(cursor, dlt, map[int32]int64{0: 3})
	if d = findDLQ(t, poll(t, s), dlt); d.Messages != 0 || d.HasOldestAge || d.Source() != "orders-v2" {
		t.Errorf("fully replayed: %+v; want 0 messages, no age, source remembered", d)
	}
}

func findDLQ(t *testing.T, snap *queue.Snapshot, name string) queue.DLQ {
	t.Helper()
	for _, d := range snap.DLQs {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("DLQ %s missing; have %+v", name, snap.DLQs)
	return queue.DLQ{}
}
