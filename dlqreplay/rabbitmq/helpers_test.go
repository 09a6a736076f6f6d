package rabbitmq

import (
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// testCluster names the shared test broker in Refs and
// Options.
const testCluster = "main"

// world is one test's vhost with a source queue "work" and its DLQ
// "work.dlq", a Service over a fresh audit store, and a channel for setup.
type world struct {
	t     testing.TB
	a     *testenv.RabbitAdmin
	vh    string
	ch    *amqp.Channel
	conn  *amqp.Connection
	store *store.Store
	dir   string
	svc   *dlqreplay.Service
	be    *Backend
	dlq   string // DLQ ID
}

type worldOpts struct {
	dlqArgs    amqp.Table
	url        string
	maxReplays int
	window     int
	prefetch   int
	maxHeld    int
}

func newWorld(t testing.TB, o worldOpts) *world {
	t.Helper()
	a := testenv.Rabbit(t)
	w := &world{t: t, a: a, vh: a.VHost("dlq")}
	conn, err := amqp.DialConfig(testenv.DefaultAMQPURL, amqp.Config{Vhost: w.vh})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	w.conn = conn
	w.ch = w.channel()
	w.declare("work", nil)
	w.declare("work.dlq", o.dlqArgs)
	w.dlq = dlqreplay.Ref{Broker: queue.RabbitMQ, Cluster: testCluster, VHost: w.vh, Name: "work.dlq"}.ID()
	w.dir = t.TempDir()
	w.openService(o)
	return w
}

// access builds the access to a cluster named name the way app does, from
// its AMQP and management URLs (the latter may be empty).
func access(t testing.TB, name, amqpURL, managementURL string) *rabbit.Cluster {
	t.Helper()
	c, err := rabbit.New(config.RabbitMQ{Name: name, URL: amqpURL, ManagementURL: managementURL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (w *world) openService(o worldOpts) {
	w.t.Helper()
	st, err := store.Open(context.Background(), w.dir)
	if err != nil {
		w.t.Fatal(err)
	}
	w.store = st
	w.t.Cleanup(func() { _ = st.Close() })
	u := o.url
	if u == "" {
		u = testenv.DefaultAMQPURL
	}
	be, err := New(Options{Cluster: access(w.t, testCluster, u, testenv.ManagementURLWithAuth), ConfirmTimeout: 5 * time.Second, ConfirmWindow: o.window, Prefetch: o.prefetch, MaxHeld: o.maxHeld})
	if err != nil {
		w.t.Fatal(err)
	}
	w.be = be
	svc, err := dlqreplay.New(dlqreplay.Options{
		Store: st, Backends: []dlqreplay.Backend{be}, MaxReplays: o.maxReplays,
		FlushInterval: 50 * time.Millisecond,
	})
	if err != nil {
		w.t.Fatal(err)
	}
	w.svc = svc
	w.t.Cleanup(svc.Close)
}

func (w *world) channel() *amqp.Channel {
	w.t.Helper()
	ch, err := w.conn.Channel()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		w.t.Fatal(err)
	}
	return ch
}

func (w *world) exchange(name string) {
	w.t.Helper()
	if err := w.ch.ExchangeDeclare(name, "direct", true, false, false, false, nil); err != nil {
		w.t.Fatalf("declare exchange %s: %v", name, err)
	}
}

func (w *world) declare(name string, args amqp.Table) {
	w.t.Helper()
	if _, err := w.ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		w.t.Fatalf("declare %s: %v", name, err)
	}
}

// deadLetter is a message as RabbitMQ would have dead-lettered it from
// "work": x-death, x-first-death-* and an id.
func deadLetter(id string, body []byte, reason string, extra amqp.Table) amqp.Publishing {
	h := amqp.Table{
		"x-death": []any{amqp.Table{
			"count": int64(1), "reason": reason, "queue": "work", "exchange": "",
			"routing-keys": []any{"work"}, "time": time.Unix(1_700_000_000, 0),
		}},
		"x-first-death-queue": "work", "x-first-death-reason": reason, "x-first-death-exchange": "",
	}
	for k, v := range extra {
		h[k] = v
	}
	return amqp.Publishing{MessageId: id, Body: body, Headers: h, DeliveryMode: amqp.Persistent, ContentType: "application/json"}
}

// publish publishes messages with confirms, waiting for all of them.
func (w *world) publish(exchange, key string, msgs ...amqp.Publishing) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var dcs []*amqp.DeferredConfirmation
	for _, m := range msgs {
		dc, err := w.ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, false, false, m)
		if err != nil {
			w.t.Fatal(err)
		}
		dcs = append(dcs, dc)
		if len(dcs) >= 1000 {
			waitAll(ctx, w.t, dcs)
			dcs = nil
		}
	}
	waitAll(ctx, w.t, dcs)
}

func waitAll(ctx context.Context, t testing.TB, dcs []*amqp.DeferredConfirmation) {
	t.Helper()
	for _, dc := range dcs {
		if ok, err := dc.WaitContext(ctx); !ok || err != nil {
			t.Fatalf("publish not confirmed: %v", err)
		}
	}
}

// depth is a queue's exact ready count.
func (w *world) depth(q string) int {
	w.t.Helper()
	got, err := w.ch.QueueDeclarePassive(q, false, false, false, false, nil)
	if err != nil {
		w.t.Fatalf("passive declare %q: %v", q, err)
	}
	return got.Messages
}

// drain takes every message off q (acking) and returns them in order.
func (w *world) drain(q string) []amqp.Delivery {
	w.t.Helper()
	var out []amqp.Delivery
	for {
		d, ok, err := w.ch.Get(q, true)
		if err != nil {
			w.t.Fatalf("get %q: %v", q, err)
		}
		if !ok {
			return out
		}
		out = append(out, d)
	}
}

// peekIDs reads q's message ids in order and puts everything back.
func (w *world) peekIDs(q string) []string {
	w.t.Helper()
	ch, err := w.conn.Channel()
	if err != nil {
		w.t.Fatal(err)
	}
	defer ch.Close()
	var ids []string
	var last uint64
	for {
		d, ok, err := ch.Get(q, false)
		if err != nil {
			w.t.Fatalf("get %q: %v", q, err)
		}
		if !ok {
			break
		}
		ids = append(ids, d.MessageId)
		last = d.DeliveryTag
	}
	if last > 0 {
		if err := ch.Nack(last, true, true); err != nil {
			w.t.Fatal(err)
		}
	}
	return ids
}

func ids(ds []amqp.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.MessageId
	}
	return out
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
