package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

const dlt = "orders.DLT"

// world is a kfake cluster with topics orders (3 partitions) and
// orders.DLT (2 partitions), and a Service over a fresh audit store.
type world struct {
	t     testing.TB
	c     *kfake.Cluster
	cl    *kgo.Client
	adm   *kadm.Client
	store *store.Store
	svc   *dlqreplay.Service
	be    *Backend
	dlq   string
}

func newWorld(t testing.TB, maxReplays int) *world {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, c: c, cl: cl, adm: kadm.NewClient(cl)}
	t.Cleanup(func() { cl.Close(); c.Close() })
	for name, parts := range map[string]int32{"orders": 3, dlt: 2, "moved": 1} {
		if _, err := w.adm.CreateTopic(context.Background(), parts, 1, nil, name); err != nil {
			t.Fatal(err)
		}
	}
	w.store, err = store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.store.Close() })
	w.svc, w.be = w.service(maxReplays)
	w.dlq = dlqreplay.Ref{Broker: queue.Kafka, Cluster: "k", Name: dlt}.ID()
	return w
}

func (w *world) service(maxReplays int) (*dlqreplay.Service, *Backend) {
	be, err := New(Options{
		Cluster:   testenv.KafkaCluster(w.t, "k", w.c.ListenAddrs(), kgo.MetadataMinAge(10*time.Millisecond)),
		BatchSize: 500, TransactionTimeout: 5 * time.Second,
	})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(be.Close)
	svc, err := dlqreplay.New(dlqreplay.Options{
		Store: w.store, Backends: []dlqreplay.Backend{be}, MaxReplays: maxReplays,
		FlushInterval: 50 * time.Millisecond,
	})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(svc.Close)
	return svc, be
}

// springDLT is a record as Spring Kafka's DeadLetterPublishingRecoverer
// writes it: binary big-endian partition and offset headers.
func springDLT(partition int32, key string, i int, class string) *kgo.Record {
	return &kgo.Record{
		Topic: dlt, Partition: partition, Key: []byte(key), Value: []byte(fmt.Sprintf(`{"order":%d}`, i)),
		Timestamp: time.Unix(1_700_000_000+int64(i), 0),
		Headers: []kgo.RecordHeader{
			{Key: "kafka_dlt-original-topic", Value: []byte("orders")},
			{Key: "kafka_dlt-original-partition", Value: binary.BigEndian.AppendUint32(nil, 2)},
			{Key: "kafka_dlt-original-offset", Value: binary.BigEndian.AppendUint64(nil, uint64(1000+i))},
			{Key: "kafka_dlt-exception-fqcn", Value: []byte(class)},
			{Key: "kafka_dlt-exception-message", Value: []byte("bad order")},
			{Key: "tenant", Value: []byte{'t', byte('a' + i%3)}},
			{Key: "raw", Value: []byte{0xff, 0x00, byte(i)}},
		},
	}
}

// fill writes n dead letters alternating over both DLT partitions and
// returns their ids in (partition, offset) order.
func (w *world) fill(n int) []string {
	w.t.Helper()
	var recs []*kgo.Record
	classes := []string{"java.lang.IllegalStateException", "com.fasterxml.jackson.core.JsonParseException"}
	for i := range n {
		recs = append(recs, springDLT(int32(i%2), "k"+strconv.Itoa(i), i, classes[i%5/4]))
	}
	if err := w.cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		w.t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, fmt.Sprintf("%d@%d", r.Partition, r.Offset))
	}
	slices.SortFunc(ids, func(a, b string) int {
		pa, oa := parseID(a)
		pb, ob := parseID(b)
		if pa != pb {
			return int(pa - pb)
		}
		return int(oa - ob)
	})
	return ids
}

func parseID(id string) (int32, int64) {
	var p int32
	var o int64
	if _, err := fmt.Sscanf(id, "%d@%d", &p, &o); err != nil {
		panic("bad test id " + id)
	}
	return p, o
}

// readCommitted returns every committed record of topic.
func (w *world) readCommitted(topic string) []*kgo.Record {
	w.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.c.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		w.t.Fatal(err)
	}
	defer cl.Close()
	ends, err := w.adm.ListEndOffsets(context.Background(), topic)
	if err != nil {
		w.t.Fatal(err)
	}
	empty := true
	ends.Each(func(o kadm.ListedOffset) { empty = empty && o.Offset == 0 })
	if empty {
		return nil
	}
	return pollAll(cl)
}

// pollAll reads what cl's assignment holds until a poll brings nothing.
// The first poll may wait, on a loaded machine, for metadata and offsets;
// later ones only for more. Callers skip topics they know are empty, so
// this wait is paid only when something is there.
func pollAll(cl *kgo.Client) []*kgo.Record {
	var out []*kgo.Record
	wait := 5 * time.Second
	for {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		fs := cl.PollFetches(ctx)
		cancel()
		if fs.NumRecords() == 0 {
			return slices.Clip(out)
		}
		out = append(out, fs.Records()...)
		// Once records flow, a quiet poll means the end; under load on a
		// 2-core machine half a second of quiet was not (one flaky read).
		wait = 1500 * time.Millisecond
	}
}

// cursor returns the cursor group's commits on the DLT.
func (w *world) cursor() map[int32]int64 {
	w.t.Helper()
	resp, err := w.adm.FetchOffsets(context.Background(), config.DefaultKafkaCursorGroup)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return map[int32]int64{}
	}
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[int32]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Topic == dlt {
			out[o.Partition] = o.At
		}
	})
	return out
}

func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

func TestBrowseAndReplayAll(t *testing.T) {
	w := newWorld(t, 0)
	all := w.fill(40)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var got []string
	var next string
	for {
		p, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{Limit: 15, After: next})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range p.Messages {
			got = append(got, m.ID)
		}
		if next == "" {
			m := p.Messages[1]
			d := m.Death
			if d.OriginalTopic != "orders" || d.OriginalPartition != 2 || !d.HasOriginalOffset || d.OriginalOffset != 1002 ||
				d.ExceptionClass != "java.lang.IllegalStateException" || d.Framework != "spring-kafka" || m.Partition != 0 {
				t.Errorf("decoded %+v", d)
			}
			if v, _ := m.Header("raw"); !bytes.Equal(v, []byte{0xff, 0x00, 2}) {
				t.Errorf("raw header = %x", v)
			}
			if len(p.Groups) != 2 || p.Groups[0].Signature.Source != "orders" {
				t.Errorf("groups = %+v", p.Groups)
			}
		}
		if p.Next == "" {
			break
		}
		next = p.Next
	}
	if !slices.Equal(got, all) {
		t.Fatalf("browsed %v\nwant %v", got, all)
	}
	if c := w.cursor(); len(c) != 0 {
		t.Fatalf("browsing moved the cursor: %v", c)
	}

	r, err := w.svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.State != dlqreplay.StateSucceeded || r.Job.Progress.Moved != 40 || r.Job.Progress.Depth != 40 {
		t.Fatalf("job = %+v", r.Job)
	}
	if c := w.cursor(); c[0] != 20 || c[1] != 20 {
		t.Fatalf("cursor = %v, want 20 and 20", c)
	}
	out := w.readCommitted("orders")
	if len(out) != 40 {
		t.Fatalf("orders got %d records", len(out))
	}
	keys := map[string]bool{}
	for _, rec := range out {
		keys[string(rec.Key)] = true
		if header(rec, HeaderReplayCount) != "1" || header(rec, "kafka_dlt-original-topic") != "orders" {
			t.Fatalf("replayed headers = %+v", rec.Headers)
		}
	}
	if len(keys) != 40 {
		t.Fatalf("keys = %d", len(keys))
	}
}

func TestConservationAndPartialSelections(t *testing.T) {
	w := newWorld(t, 0)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 9))
	all := w.fill(200)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sent := map[string]int{}
	for i := range 6 {
		sel := dlqreplay.Selection{All: true}
		if i < 5 {
			sel = dlqreplay.Selection{Headers: map[string]string{"tenant": "t" + string(rune('a'+rng.IntN(3)))}, Limit: rng.IntN(40)}
		}
		r, err := w.svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: sel})
		if err != nil || r.Job.State != dlqreplay.StateSucceeded {
			t.Fatalf("%+v: %+v %v", sel, r.Job, err)
		}
		for _, o := range r.Outcomes {
			if o.Result == dlqreplay.ResultMoved {
				sent[o.MessageID]++
			}
		}
	}
	got := map[string]int{}
	for _, rec := range w.readCommitted("orders") {
		got[header(rec, "kafka_dlt-original-offset")]++
	}
	if len(got) != 200 {
		t.Fatalf("orders has %d distinct records, want 200", len(got))
	}
	for k, n := range got {
		if n != 1 {
			t.Errorf("record %x replayed %d times", k, n)
		}
	}
	for _, id := range all {
		if sent[id] != 1 {
			t.Errorf("%s reported moved %d times", id, sent[id])
		}
	}
	if c := w.cursor(); c[0] != 100 || c[1] != 100 {
		t.Fatalf("cursor = %v after replaying everything", c)
	}
}

func TestTransactionFailureMovesNothing(t *testing.T) {
	w := newWorld(t, 0)
	w.fill(30)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.TxnOffsetCommit}, Err: kerr.GroupAuthorizationFailed, Count: -1})
	r, err := w.svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.State != dlqreplay.StateFailed || r.Job.Progress.Moved != 0 || r.Job.Progress.Failed != 30 {
		t.Fatalf("job = %+v", r.Job)
	}
	if n := len(w.readCommitted("orders")); n != 0 {
		t.Fatalf("an aborted replay left %d committed copies", n)
	}
	// The job's lease commits the cursor where it stood: at the log start.
	if c := w.cursor(); c[0] != 0 || c[1] != 0 {
		t.Fatalf("cursor moved: %v", c)
	}
}

func TestMoveDeleteRestoreConflict(t *testing.T) {
	w := newWorld(t, 2)
	w.fill(20)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	if _, err := w.svc.Run(ctx, dlqreplay.Request{
		DLQ: w.dlq, Action: dlqreplay.ActionMove, Target: dlqreplay.Target{Name: "nope"},
		Selection: dlqreplay.Selection{All: true},
	}); !errors.Is(err, dlqreplay.ErrTargetMissing) {
		t.Fatalf("move to a missing topic: %v", err)
	}
	for _, bad := range []string{"a b", "..", strings.Repeat("t", 250), "ü"} {
		if _, err := w.svc.Run(ctx, dlqreplay.Request{
			DLQ: w.dlq, Action: dlqreplay.ActionMove, Target: dlqreplay.Target{Name: bad},
			Selection: dlqreplay.Selection{All: true},
		}); !errors.Is(err, dlqreplay.ErrInvalidRequest) {
			t.Fatalf("move to topic %q Kafka cannot name: %v", bad, err)
		}
	}
	mv, err := w.svc.Run(ctx, dlqreplay.Request{
		DLQ: w.dlq, Action: dlqreplay.ActionMove, Target: dlqreplay.Target{Name: "moved"},
		Selection: dlqreplay.Selection{IDs: []string{"0@0", "1@0"}},
	})
	if err != nil || mv.Job.Progress.Moved != 2 {
		t.Fatalf("move = %+v, %v", mv, err)
	}
	del, err := w.svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{IDs: []string{"0@1"}}})
	if err != nil || del.Job.Progress.Moved != 1 {
		t.Fatalf("delete = %+v, %v", del, err)
	}
	if c := w.cursor(); c[0] != 2 || c[1] != 1 {
		t.Fatalf("cursor = %v", c)
	}
	target := dlqreplay.Ref{Broker: queue.Kafka, Cluster: "k", Name: "moved"}.ID()
	if _, err := w.svc.Restore(ctx, dlqreplay.RestoreRequest{JobID: del.Job.ID, Target: target}); err != nil {
		t.Fatal(err)
	}
	moved := w.readCommitted("moved")
	if len(moved) != 3 || header(moved[2], "raw") != string([]byte{0xff, 0x00, 2}) {
		t.Fatalf("moved topic = %d records", len(moved))
	}

	// A slow job keeps its transaction open; a second job, here or on
	// another instance, is refused.
	j, err := w.svc.Start(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}, Rate: 5})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.svc.Start(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}})
	var ce *dlqreplay.ConflictError
	if !errors.As(err, &ce) || ce.JobID != j.ID {
		t.Fatalf("second job here: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	other, _ := w.service(2)
	if _, err := other.Start(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}}); !errors.Is(err, dlqreplay.ErrJobRunning) {
		t.Fatalf("second job on another instance: %v", err)
	}
	if err := w.svc.Cancel(j.ID); err != nil {
		t.Fatal(err)
	}
	r, _ := w.svc.Wait(ctx, j.ID)
	if r.Job.State != dlqreplay.StateCancelled || r.Job.Progress.Moved == 0 {
		t.Fatalf("cancelled job = %+v", r.Job)
	}
	if n := len(w.readCommitted("orders")); int64(n) != r.Job.Progress.Moved {
		t.Fatalf("orders has %d, receipt says %d moved", n, r.Job.Progress.Moved)
	}
}

// TestLeaseHoldsBetweenTransactions: a slow job with small batches has no
// transaction open most of the time; its lease still refuses a second
// instance, and is released when the job ends.
func TestLeaseHoldsBetweenTransactions(t *testing.T) {
	w := newWorld(t, 0)
	w.fill(40)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	be, err := New(Options{Cluster: testenv.KafkaCluster(t, "k", w.c.ListenAddrs()), BatchSize: 2, TransactionTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Close)
	slow, err := dlqreplay.New(dlqreplay.Options{Store: w.store, Backends: []dlqreplay.Backend{be}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(slow.Close)
	j, err := slow.Start(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}, Rate: 10})
	if err != nil {
		t.Fatal(err)
	}
	// Ask many times: most asks fall between two transactions.
	for range 10 {
		_, err := w.svc.Start(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}})
		var ce *dlqreplay.ConflictError
		if !errors.As(err, &ce) || ce.JobID != j.ID {
			t.Fatalf("second instance during the job: %v, want a conflict naming %s", err, j.ID)
		}
		time.Sleep(70 * time.Millisecond)
	}
	if err := slow.Cancel(j.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := slow.Wait(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}}); err != nil {
		t.Fatalf("after the job ended its lease is released, yet: %v", err)
	}
}

// TestBrowseMissingTopic: a DLQ whose topic is not there is an unknown
// DLQ (a 404 on the page and the API, where a stale alert link lands),
// not a broker failure carrying UNKNOWN_TOPIC_OR_PARTITION.
func TestBrowseMissingTopic(t *testing.T) {
	w := newWorld(t, 2)
	missing := dlqreplay.Ref{Broker: queue.Kafka, Cluster: "k", Name: "nope.DLT"}.ID()
	_, err := w.svc.Browse(context.Background(), missing, dlqreplay.BrowseOptions{Limit: 10})
	if !errors.Is(err, dlqreplay.ErrUnknownDLQ) {
		t.Fatalf("browse of a missing topic = %v, want ErrUnknownDLQ", err)
	}
}
