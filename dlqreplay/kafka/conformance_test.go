package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/conformance"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, newConformanceWorld)
}

// conformanceWorld is the suite's view of a kfake cluster: orders.DLT
// (one partition, so the DLQ has one order) dead-letters from orders, and
// "moved" is the other topic. Small transactions make progress visible
// while a job runs.
type conformanceWorld struct {
	t      *testing.T
	c      *kfake.Cluster
	cl     *kgo.Client
	adm    *kadm.Client
	dlq    string
	stores []dlqreplay.Store
	read   map[string]int64 // next offset to take from a target topic
}

func newConformanceWorld(t *testing.T) conformance.World {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic(dlt))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close(); c.Close() })
	w := &conformanceWorld{
		t: t, c: c, cl: cl, adm: kadm.NewClient(cl), read: map[string]int64{},
		dlq: dlqreplay.Ref{Broker: queue.Kafka, Cluster: "k", Name: dlt}.ID(),
	}
	for _, name := range []string{"orders", dlt, "moved"} {
		if _, err := w.adm.CreateTopic(context.Background(), 1, 1, nil, name); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *conformanceWorld) Service(t *testing.T, maxReplays int) *dlqreplay.Service {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Open until the world ends: InDLQ asks every instance's store.
	w.t.Cleanup(func() { _ = st.Close() })
	w.stores = append(w.stores, st)
	return w.service(t, maxReplays, st)
}

// ServiceOn's crash refuses every transaction commit from then on and
// waits for the service to stop: nothing the dead job had not committed
// commits, as when a producer dies and its transaction is aborted. The
// store is also asked by InDLQ.
func (w *conformanceWorld) ServiceOn(t *testing.T, st dlqreplay.Store) (*dlqreplay.Service, func(t *testing.T)) {
	w.stores = append(w.stores, st)
	svc := w.service(t, 0, st)
	return svc, func(t *testing.T) {
		h := w.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.EndTxn}, Err: kerr.TransactionalIDAuthorizationFailed, Count: -1})
		svc.Close()
		h.Remove()
	}
}

func (w *conformanceWorld) service(t *testing.T, maxReplays int, st dlqreplay.Store) *dlqreplay.Service {
	be, err := New(Options{
		Cluster:   testenv.KafkaCluster(t, "k", w.c.ListenAddrs(), kgo.MetadataMinAge(10*time.Millisecond)),
		BatchSize: 10, TransactionTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Close)
	svc, err := dlqreplay.New(dlqreplay.Options{
		Store: st, Backends: []dlqreplay.Backend{be}, MaxReplays: maxReplays,
		FlushInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc
}

func (w *conformanceWorld) DLQ() string    { return w.dlq }
func (w *conformanceWorld) Source() string { return "orders" }
func (w *conformanceWorld) Other() string  { return "moved" }

func (w *conformanceWorld) DeadLetter(t *testing.T, msgs ...conformance.Message) {
	recs := make([]*kgo.Record, len(msgs))
	for i, m := range msgs {
		origin := m.Origin
		if origin == "" {
			origin = "orders"
		}
		r := &kgo.Record{Key: []byte(m.ID), Value: []byte(`{"id":"` + m.ID + `"}`), Headers: []kgo.RecordHeader{
			{Key: "kafka_dlt-original-topic", Value: []byte(origin)},
			{Key: "kafka_dlt-exception-fqcn", Value: []byte("java.lang.IllegalStateException")},
			{Key: conformance.TestIDHeader, Value: []byte(m.ID)},
			{Key: "tenant", Value: []byte(m.Tenant)},
		}}
		if m.ReplayCount > 0 {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: queue.HeaderReplayCount, Value: []byte{byte('0' + m.ReplayCount)}})
		}
		recs[i] = r
	}
	if err := w.cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// InDLQ lists the records past the cursor that no job has sent yet: a
// record a job moved past a kept one stays behind the cursor until a later
// job skips it.
func (w *conformanceWorld) InDLQ(t *testing.T) []string {
	from := int64(0)
	resp, err := w.adm.FetchOffsets(context.Background(), "queuewatch-dlq")
	if err == nil {
		if o, ok := resp.Lookup(dlt, 0); ok && o.Err == nil {
			from = o.At
		}
	}
	var out []string
	for _, r := range w.records(t, dlt, from) {
		id := "0@" + itoa(r.Offset)
		handled := false
		for _, st := range w.stores {
			done, err := st.Done(context.Background(), w.dlq, []string{id}, dlqreplay.ResultMoved, dlqreplay.ResultDeleted)
			if err != nil {
				t.Fatal(err)
			}
			handled = handled || done[id]
		}
		if !handled {
			out = append(out, header(r, conformance.TestIDHeader))
		}
	}
	return out
}

func (w *conformanceWorld) Arrived(t *testing.T, name string) []conformance.Arrival {
	recs := w.records(t, name, w.read[name])
	var out []conformance.Arrival
	for _, r := range recs {
		w.read[name] = r.Offset + 1
		out = append(out, conformance.Arrival{
			ID:          header(r, conformance.TestIDHeader),
			ReplayCount: header(r, queue.HeaderReplayCount), ReplayID: header(r, queue.HeaderReplayID),
		})
	}
	return out
}

// Copies counts the records produced to topic past what Arrived took,
// committed or not (and the transaction markers among them): the crash
// case's sign that a job is half done, since Arrived waits for a quiet
// topic.
func (w *conformanceWorld) Copies(t *testing.T, topic string) int {
	ends, err := w.adm.ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	return int(end.Offset - w.read[topic])
}

// records reads the committed records of a one-partition topic from an
// offset.
func (w *conformanceWorld) records(t *testing.T, topic string, from int64) []*kgo.Record {
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.c.ListenAddrs()...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(from)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := w.adm.ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	if end, ok := ends.Lookup(topic, 0); !ok || end.Offset <= from {
		return nil
	}
	return pollAll(cl)
}

// Faults: the coordinator refusing cursor commits (every later batch
// aborts), a commit whose outcome is unknown (its copies are possible
// duplicates), and a commit refused outright.
func (w *conformanceWorld) Faults() []conformance.Fault {
	var h *kfake.FaultHandle
	remove := func(t *testing.T) { h.Remove() }
	return []conformance.Fault{
		{
			Name: "cursor commit refused",
			Inject: func(t *testing.T) {
				h = w.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.TxnOffsetCommit}, Err: kerr.GroupAuthorizationFailed, Count: -1})
			},
			Heal: remove,
		},
		{
			Name: "transaction commit outcome unknown",
			Inject: func(t *testing.T) {
				h = w.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.EndTxn}, Err: kerr.UnknownServerError, Count: 1})
			},
			Heal: remove,
		},
		{
			Name: "transaction commit refused",
			Inject: func(t *testing.T) {
				h = w.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.EndTxn}, Err: kerr.TransactionalIDAuthorizationFailed, Count: 1})
			},
			Heal: remove,
		},
	}
}

func itoa(n int64) string { return fmt.Sprint(n) }
