package kafka

import (
	"context"
	"encoding/binary"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/demo"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

var testDLQPattern = regexp.MustCompile(`(?i)[._-](dlq|dlt)$`)

func dlqByName(topic string) (queue.DLQDetection, bool) {
	return queue.DetectedName, testDLQPattern.MatchString(topic)
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

func TestDLQDepthAndCursor(t *testing.T) {
	tc := newCluster(t)
	tc.topic("orders.DLT", 2)
	tc.topic("payments-dlq", 1)
	tc.topic("orders", 1)
	oldest := time.Now().Add(-2 * time.Hour).Truncate(time.Millisecond)
	offset := make([]byte, 8)
	binary.BigEndian.PutUint64(offset, 42)
	cl, err := kgo.NewClient(kgo.SeedBrokers(tc.c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := range 5 {
		recs = append(recs, &kgo.Record{
			Topic: "orders.DLT", Partition: int32(i % 2), Value: []byte("{}"),
			Timestamp: oldest.Add(time.Duration(i) * time.Minute),
			Headers: []kgo.RecordHeader{
				{Key: "kafka_dlt-original-topic", Value: []byte("orders-v2")},
				{Key: "kafka_dlt-original-offset", Value: offset},
			},
		})
	}
	recs = append(recs, &kgo.Record{
		Topic: "payments-dlq", Value: []byte("x"), Timestamp: oldest,
		Headers: []kgo.RecordHeader{{Key: "__connect.errors.topic", Value: []byte("payments")}},
	})
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	s := tc.source(Options{DLQTopic: dlqByName})
	snap := poll(t, s)
	if len(snap.DLQs) != 2 {
		t.Fatalf("DLQs %+v; want orders.DLT and payments-dlq only", snap.DLQs)
	}
	d := findDLQ(t, snap, "orders.DLT")
	if d.Messages != 5 || d.Source() != "orders-v2" || d.Detection != queue.DetectedName || d.VHost != "" {
		t.Errorf("orders.DLT: %+v; want 5 messages from orders-v2 (Spring header)", d)
	}
	if age := time.Since(oldest); !d.HasOldestAge || d.OldestAge < age-5*time.Second || d.OldestAge > age+5*time.Second {
		t.Errorf("oldest age %v (known %v), want ≈%v", d.OldestAge, d.HasOldestAge, age)
	}
	if p := findDLQ(t, snap, "payments-dlq"); p.Messages != 1 || p.Source() != "payments" {
		t.Errorf("payments-dlq: %+v; want 1 message from payments (Connect header)", p)
	}
	if _, ok := snap.Group(config.DefaultKafkaCursorGroup); ok {
		t.Error("the cursor group is reported as a consumer group")
	}

	// Replaying advances the cursor: partition 0 held offsets 0..2 (3
	// records), partition 1 held 2; committing 2 on p0 and 2 on p1 leaves
	// one record, the one at p0 offset 2, produced at oldest+4m.
	tc.commit(config.DefaultKafkaCursorGroup, "orders.DLT", map[int32]int64{0: 2, 1: 2})
	d = findDLQ(t, poll(t, s), "orders.DLT")
	if d.Messages != 1 || d.Source() != "orders-v2" {
		t.Errorf("after cursor: %+v; want 1 message, source kept", d)
	}
	if age := time.Since(oldest.Add(4 * time.Minute)); d.OldestAge < age-5*time.Second || d.OldestAge > age+5*time.Second {
		t.Errorf("after cursor: oldest age %v, want ≈%v", d.OldestAge, age)
	}
	tc.commit(config.DefaultKafkaCursorGroup, "orders.DLT", map[int32]int64{0: 3})
	if d = findDLQ(t, poll(t, s), "orders.DLT"); d.Messages != 0 || d.HasOldestAge || d.Source() != "orders-v2" {
		t.Errorf("fully replayed: %+v; want 0 messages, no age, source remembered", d)
	}
}

// TestDemoDLQs reads the demo's Spring and Connect dead-letter topics.
func TestDemoDLQs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := demo.Start(ctx, demo.Options{Speed: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := New(Options{Cluster: testenv.KafkaCluster(t, "demo", d.Brokers()), DLQTopic: dlqByName})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	snap := poll(t, s)
	for name, source := range map[string]string{demo.TopicOrdersDLT: demo.TopicOrders, demo.TopicPaymentsDLQ: demo.TopicPayments} {
		dlq := findDLQ(t, snap, name)
		if dlq.Messages < demo.SeededDeadLetters || dlq.Source() != source || !dlq.HasOldestAge || dlq.OldestAge < 30*time.Minute {
			t.Errorf("%s: %d messages from %q, oldest %v; want ≥ %d from %s, seeded up to an hour ago",
				name, dlq.Messages, dlq.Source(), dlq.OldestAge, demo.SeededDeadLetters, source)
		}
	}

	// With the cursor at the end as of a listing, depth is at most what was
	// dead-lettered since.
	adm := kadm.NewClient(s.Client())
	ends, err := adm.ListEndOffsets(ctx, demo.TopicOrdersDLT)
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.CommitAllOffsets(ctx, config.DefaultKafkaCursorGroup, ends.Offsets()); err != nil {
		t.Fatal(err)
	}
	after := findDLQ(t, poll(t, s), demo.TopicOrdersDLT)
	if after.Messages >= demo.SeededDeadLetters {
		t.Errorf("after moving the cursor to the end: %d messages", after.Messages)
	}
}
