package realkafka

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	collector "github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/audit"
	replaykafka "github.com/queuewatch/queuewatch/dlqreplay/kafka"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestBrowseAndReplayAll is dlqreplay/kafka's test of the same name on the
// real broker, through its SASL_SSL listener (SCRAM-SHA-512 over TLS):
// Spring Kafka dead letters are browsed and decoded, then replayed to
// their original topic in transactions that also commit the cursor group,
// and the collector, sharing the cluster access, then counts the DLQ
// empty.
func TestBrowseAndReplayAll(t *testing.T) {
	b := realBroker(t)
	orders := testenv.Unique("orders")
	dlt := orders + ".DLT"
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
	for i := range 40 {
		recs = append(recs, &kgo.Record{Topic: dlt, Partition: int32(i % 2), Key: fmt.Appendf(nil, "k%d", i),
			Value: fmt.Appendf(nil, `{"order":%d}`, i), Timestamp: time.Unix(1_700_000_000+int64(i), 0),
			Headers: []kgo.RecordHeader{
				{Key: "kafka_dlt-original-topic", Value: []byte(orders)},
				{Key: "kafka_dlt-original-partition", Value: binary.BigEndian.AppendUint32(nil, 2)},
				{Key: "kafka_dlt-original-offset", Value: binary.BigEndian.AppendUint64(nil, uint64(1000+i))},
				{Key: "kafka_dlt-exception-fqcn", Value: []byte("java.lang.IllegalStateException")},
				{Key: "kafka_dlt-exception-message", Value: []byte("bad order")},
			}})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	access := secureAccess(t, b.node, testenv.KafkaSCRAMPassword)
	cursor := access.CursorGroup()
	be, err := replaykafka.New(replaykafka.Options{Cluster: access, BatchSize: 15, TransactionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	store, err := audit.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	svc, err := dlqreplay.New(dlqreplay.Options{Store: store, Backends: []dlqreplay.Backend{be}, FlushInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
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

	s, err := collector.New(collector.Options{Cluster: access, IncludeGroup: func(string) bool { return false },
		DLQTopic: func(topic string) (queue.DLQDetection, bool) { return queue.DetectedName, topic == dlt }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if d := findDLQ(t, poll(t, s), dlt); d.Messages != 0 || d.Source() != orders {
		t.Errorf("after the replay: %+v; want 0 messages from %s", d, orders)
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
