package rabbitmq

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// testNamePattern is config.DefaultDLQNamePattern, copied so that these
// tests do not depend on the config package.
var testNamePattern = regexp.MustCompile(`(?i).*([._-]dlq|[._-]dlt|dead-?letters?|deadletter|[._]error|parking-?lot)$`)

// admin is the shared test broker's admin with this package's topology
// helpers on top.
type admin struct {
	*testenv.RabbitAdmin
	t testing.TB
}

// requireRabbit checks the broker through testenv.Rabbit, which owns the
// skip-or-fail policy.
func requireRabbit(t testing.TB) *admin {
	t.Helper()
	return &admin{RabbitAdmin: testenv.Rabbit(t), t: t}
}

func (a *admin) queue(vh, name string, args map[string]any) {
	a.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	a.Do(http.MethodPut, rabbit.APIPath("queues", vh, name), map[string]any{"durable": true, "arguments": args})
}

func (a *admin) exchange(vh, name, typ string, args map[string]any) {
	a.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	a.Do(http.MethodPut, rabbit.APIPath("exchanges", vh, name), map[string]any{"type": typ, "durable": true, "arguments": args})
}

func (a *admin) bind(vh, exchange, q, key string) {
	a.t.Helper()
	a.Do(http.MethodPost, rabbit.APIPath("bindings", vh, "e", exchange, "q", q), map[string]any{"routing_key": key})
}

func (a *admin) policy(vh, name, pattern string, def map[string]any) {
	a.t.Helper()
	a.Do(http.MethodPut, rabbit.APIPath("policies", vh, name), map[string]any{"pattern": pattern, "definition": def, "apply-to": "queues"})
}

// waitPolicy waits until the management API shows policy on queue q:
// policies reach queue objects with the statistics, about five seconds
// after they are set.
func (a *admin) waitPolicy(vh, q, policy string) {
	a.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var got struct{ Policy string }
		if err := json.Unmarshal(a.Do(http.MethodGet, rabbit.APIPath("queues", vh, q)+"?disable_stats=false", nil), &got); err != nil {
			a.t.Fatal(err)
		}
		if got.Policy == policy {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("queue %q never showed policy %q", q, policy)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// rejectOne dead-letters the head message of q (or does nothing when q is
// empty).
func (a *admin) rejectOne(vh, q string) {
	a.t.Helper()
	a.Do(http.MethodPost, rabbit.APIPath("queues", vh, q, "get"), map[string]any{"count": 1, "ackmode": "reject_requeue_false", "encoding": "auto"})
}

// channel opens an AMQP channel in confirm mode on vh, closed when the
// test ends.
func channel(t testing.TB, vh string) *amqp.Channel {
	t.Helper()
	ch := testenv.Channel(t, vh)
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	return ch
}

// publish publishes with confirms and waits for the broker's ack.
func publish(t testing.TB, ch *amqp.Channel, exchange, key string, msg amqp.Publishing) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, false, false, msg)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := c.WaitContext(ctx); !ok || err != nil {
		t.Fatalf("publish to %q %q not confirmed: %v", exchange, key, err)
	}
}

func text(s string) amqp.Publishing { return amqp.Publishing{Body: []byte(s)} }

// waitDepth waits until q holds n ready messages: dead-lettering is
// asynchronous, and a test must know the broker is done before polling.
func waitDepth(t testing.TB, ch *amqp.Channel, q string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := ch.QueueDeclarePassive(q, false, false, false, false, nil)
		if err != nil {
			t.Fatalf("passive declare %q: %v", q, err)
		}
		if got.Messages == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue %q has %d messages, want %d", q, got.Messages, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// newSource builds a source for cluster "main" the way app does: the
// access from cfg (the shared broker's URL when cfg has none), and opts.
func newSource(t testing.TB, cfg config.RabbitMQ, opts Options) *Source {
	t.Helper()
	if cfg.URL == "" {
		cfg.URL = testenv.DefaultAMQPURL
	}
	opts.Cluster = access(t, cfg)
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// access builds the access to cluster "main" from cfg.
func access(t testing.TB, cfg config.RabbitMQ) *rabbit.Cluster {
	t.Helper()
	cfg.Name = "main"
	c, err := rabbit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func poll(t testing.TB, s *Source) *queue.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	snap, err := s.Poll(ctx)
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	return snap
}

func findDLQ(snap *queue.Snapshot, vh, name string) (queue.DLQ, bool) {
	for _, d := range snap.DLQs {
		if d.VHost == vh && d.Name == name {
			return d, true
		}
	}
	return queue.DLQ{}, false
}

func findQueue(snap *queue.Snapshot, vh, name string) (queue.Queue, bool) {
	for _, q := range snap.Queues {
		if q.VHost == vh && q.Name == name {
			return q, true
		}
	}
	return queue.Queue{}, false
}

func mustDLQ(t testing.TB, snap *queue.Snapshot, vh, name string) queue.DLQ {
	t.Helper()
	d, ok := findDLQ(snap, vh, name)
	if !ok {
		var names []string
		for _, d := range snap.DLQs {
			names = append(names, d.VHost+"/"+d.Name)
		}
		t.Fatalf("DLQ %q/%q not found; DLQs: %s; partial: %v", vh, name, strings.Join(names, ", "), snap.Partial)
	}
	return d
}
