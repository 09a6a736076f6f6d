package realkafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	collector "github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/collectors/kafka/kafkatest"
	"github.com/queuewatch/queuewatch/dlqreplay"
	replaykafka "github.com/queuewatch/queuewatch/dlqreplay/kafka"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// TestBrowseAndReplayAll is dlqreplay/kafka's test of the same name on the
// real broker, through its SASL_SSL listener (SCRAM-SHA-512 over TLS):
// Spring Kafka dead letters are browsed and decoded, then replayed to
// their original topic in transactions that also commit the cursor group,
// and the collector, sharing the cluster access, then counts the DLQ
// empty.
func TestBrowseAndReplayAll(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	orders, dlt := b.deadLetters(40)
	access := secureAccess(t, b.node, testenv.KafkaSCRAMPassword)
	cursor := access.CursorGroup()
	svc := replayService(t, access)
	id := dlqreplay.Ref{Broker: queue.Kafka, Cluster: access.Name(), Name: dlt}.ID()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	page, err := svc.Browse(ctx, id, dlqreplay.BrowseOptions{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Messages) != 40 {
		t.Fatalf("browsed %d messages, want 40", len(page.Messages))
	}
	if d := page.Messages[1].Death; d.OriginalTopic != orders || d.OriginalPartition != 2 || d.OriginalOffset != 1002 ||
		d.ExceptionClass != "java.lang.IllegalStateException" || d.Framework != "spring-kafka" {
		t.Errorf("decoded %+v", d)
	}

	r, err := svc.Run(ctx, dlqreplay.Request{DLQ: id, Selection: dlqreplay.Selection{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.State != dlqreplay.StateSucceeded || r.Job.Progress.Moved != 40 {
		t.Fatalf("job %+v", r.Job)
	}
	fetched, err := b.adm.FetchOffsets(ctx, cursor)
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		if o, _ := fetched.Lookup(dlt, p); o.At != 20 {
			t.Errorf("cursor on p%d at %d, want 20", p, o.At)
		}
	}
	if n := countCommitted(t, b.node.Addr(), orders); n != 40 {
		t.Errorf("%s holds %d committed copies, want 40", orders, n)
	}

	s, err := collector.New(collector.Options{
		Cluster: access, IncludeGroup: func(string) bool { return false },
		DLQTopic: func(topic string) (queue.DLQDetection, bool) { return queue.DetectedName, topic == dlt },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if d := kafkatest.FindDLQ(t, poll(t, s), dlt); d.Messages != 0 || d.Source() != orders {
		t.Errorf("after the replay: %+v; want 0 messages from %s", d, orders)
	}
}

// deadLetters creates a topic and its .DLT (3 and 2 partitions) and writes
// n dead letters as Spring Kafka's DeadLetterPublishingRecoverer does,
// alternating over the DLT's partitions.
func (b *broker) deadLetters(n int) (orders, dlt string) {
	t := b.t
	t.Helper()
	orders = testenv.Unique("orders")
	dlt = orders + ".DLT"
	for name, parts := range map[string]int32{orders: 3, dlt: 2} {
		if _, err := b.adm.CreateTopic(context.Background(), parts, 1, nil, name); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.node.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{
			Topic: dlt, Partition: int32(i % 2), Key: fmt.Appendf(nil, "k%d", i),
			Value: fmt.Appendf(nil, `{"order":%d}`, i), Timestamp: time.Unix(1_700_000_000+int64(i), 0),
			Headers: []kgo.RecordHeader{
				{Key: "kafka_dlt-original-topic", Value: []byte(orders)},
				{Key: "kafka_dlt-original-partition", Value: binary.BigEndian.AppendUint32(nil, 2)},
				{Key: "kafka_dlt-original-offset", Value: binary.BigEndian.AppendUint64(nil, uint64(1000+i))},
				{Key: "kafka_dlt-exception-fqcn", Value: []byte("java.lang.IllegalStateException")},
				{Key: "kafka_dlt-exception-message", Value: []byte("bad order")},
			},
		})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	return orders, dlt
}

// replayService is one queuewatch instance's replay service for the
// cluster: its own backend and audit store.
func replayService(t *testing.T, access *brokerkafka.Cluster) *dlqreplay.Service {
	t.Helper()
	be, err := replaykafka.New(replaykafka.Options{Cluster: access, BatchSize: 15, TransactionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Close)
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc, err := dlqreplay.New(dlqreplay.Options{Store: st, Backends: []dlqreplay.Backend{be}, FlushInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc
}

// TestReplayFencesSecondInstance is the conflict half of dlqreplay/kafka's
// TestMoveDeleteRestoreConflict on the real broker: a slow job keeps its
// transaction open, so a second instance sharing nothing with the first
// but the broker is refused, and the cancelled job's receipt counts
// exactly the copies that were committed.
func TestReplayFencesSecondInstance(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	orders, dlt := b.deadLetters(20)
	access := secureAccess(t, b.node, testenv.KafkaSCRAMPassword)
	svc := replayService(t, access)
	id := dlqreplay.Ref{Broker: queue.Kafka, Cluster: access.Name(), Name: dlt}.ID()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	j, err := svc.Start(ctx, dlqreplay.Request{DLQ: id, Selection: dlqreplay.Selection{All: true}, Rate: 5})
	if err != nil {
		t.Fatal(err)
	}
	// Wait for the job to be under way, its first copies committed: at 5
	// messages a second it then runs for seconds more. A fixed sleep was
	// too short on a loaded machine, where the job had not yet begun.
	for {
		got, err := svc.Job(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Progress.Moved > 0 {
			break
		}
		if got.State != dlqreplay.StateRunning {
			t.Fatalf("job %s before the second instance started", got.State)
		}
		select {
		case <-ctx.Done():
			t.Fatal("the job moved nothing in 2 minutes")
		case <-time.After(20 * time.Millisecond):
		}
	}
	other := replayService(t, access)
	// The job's ID reaches other instances with its first cursor commit;
	// before that the open transaction alone refuses them.
	if _, err := other.Start(ctx, dlqreplay.Request{DLQ: id, Selection: dlqreplay.Selection{All: true}}); !errors.Is(err, dlqreplay.ErrJobRunning) {
		t.Errorf("second instance: %v; want %v", err, dlqreplay.ErrJobRunning)
	}
	if err := svc.Cancel(j.ID); err != nil {
		t.Fatal(err)
	}
	r, _ := svc.Wait(ctx, j.ID)
	if r.Job.State != dlqreplay.StateCancelled || r.Job.Progress.Moved == 0 {
		t.Fatalf("cancelled job %+v", r.Job)
	}
	if n := countCommitted(t, b.node.Addr(), orders); int64(n) != r.Job.Progress.Moved {
		t.Errorf("%s has %d committed copies, the receipt says %d moved", orders, n, r.Job.Progress.Moved)
	}
}

// countCommitted reads topic with read_committed and counts its records.
func countCommitted(t *testing.T, addr, topic string) int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	n := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		if fs.NumRecords() == 0 {
			return n
		}
		n += fs.NumRecords()
	}
}
