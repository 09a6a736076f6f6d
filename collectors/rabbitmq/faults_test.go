package rabbitmq

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/rs/zerolog"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// newProxy starts a TCP proxy to upstream; Stop refuses connections and
// cuts the open ones, Start listens again on the same port.
func newProxy(t *testing.T, name, upstream string) *toxiproxy.Proxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, name, "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

func TestFaults(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("faults")
	ch := channel(t, vh)
	a.queue(vh, "src", map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "sink"})
	a.queue(vh, "sink", nil)
	deadLetter := func(n int) {
		publish(t, ch, "", "src", text("m"))
		a.rejectOne(vh, "src")
		waitDepth(t, ch, "sink", n)
	}
	deadLetter(1)

	amqpProxy := newProxy(t, "amqp", "127.0.0.1:5672")
	mgmtProxy := newProxy(t, "management", "127.0.0.1:15672")
	s := newSource(t, config.RabbitMQ{
		URL: "amqp://guest:guest@" + amqpProxy.Listen + "/", ManagementURL: "http://" + mgmtProxy.Listen,
		PrometheusURL: config.PrometheusNone, // the management API alone: every poll needs it
	}, Options{
		VHosts: []string{vh},
	})
	depth := func(t *testing.T, snap *queue.Snapshot, want int64) {
		t.Helper()
		d := mustDLQ(t, snap, vh, "sink")
		if d.Messages != want || d.Err != "" {
			t.Fatalf("sink: %d messages, err %q; want %d", d.Messages, d.Err, want)
		}
		if d.Detection != queue.DetectedTopology || !slices.Equal(d.Sources, []string{"src"}) {
			t.Errorf("sink: %s from %v, want topology from src", d.Detection, d.Sources)
		}
	}
	partial := func(t *testing.T, snap *queue.Snapshot, want string) {
		t.Helper()
		if !slices.ContainsFunc(snap.Partial, func(p string) bool { return strings.Contains(p, want) }) {
			t.Errorf("partial %q, want one containing %q", snap.Partial, want)
		}
	}

	snap := poll(t, s)
	depth(t, snap, 1)
	if len(snap.Partial) != 0 {
		t.Fatalf("partial %v", snap.Partial)
	}

	t.Run("management down", func(t *testing.T) {
		mgmtProxy.Stop()
		defer func() { _ = mgmtProxy.Start() }()
		deadLetter(2)
		snap := poll(t, s)
		depth(t, snap, 2)
		partial(t, snap, "management API unavailable")
		if q, ok := findQueue(snap, vh, "sink"); !ok || q.Ready != 2 {
			t.Errorf("sink queue %+v (found %v), want ready 2 from AMQP", q, ok)
		}
	})

	t.Run("management back", func(t *testing.T) {
		snap := poll(t, s)
		depth(t, snap, 2)
		if len(snap.Partial) != 0 {
			t.Errorf("partial %v", snap.Partial)
		}
	})

	t.Run("amqp cut", func(t *testing.T) {
		dials := s.amqp.dials.Load()
		amqpProxy.Stop() // cuts the open connection and refuses new ones
		snap := poll(t, s)
		d := mustDLQ(t, snap, vh, "sink")
		if !strings.Contains(d.Err, "exact depth unavailable") {
			t.Errorf("sink err %q, want exact depth unavailable", d.Err)
		}
		partial(t, snap, "amqp")
		if err := amqpProxy.Start(); err != nil {
			t.Fatal(err)
		}
		deadLetter(3)
		depth(t, poll(t, s), 3)
		if s.amqp.dials.Load() <= dials {
			t.Errorf("no new AMQP connection after the cut")
		}
	})

	t.Run("broker restart", func(t *testing.T) {
		amqpProxy.Stop()
		mgmtProxy.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := s.Poll(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "rabbitmq main:") {
			t.Errorf("poll with the broker down: %v, want an error", err)
		}
		if err := amqpProxy.Start(); err != nil {
			t.Fatal(err)
		}
		if err := mgmtProxy.Start(); err != nil {
			t.Fatal(err)
		}
		snap := poll(t, s)
		depth(t, snap, 3)
		if len(snap.Partial) != 0 {
			t.Errorf("partial after restart %v", snap.Partial)
		}
	})

	t.Run("amqp black hole", func(t *testing.T) {
		if _, err := amqpProxy.Toxics.AddToxicJson(strings.NewReader(
			`{"name":"hole","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		start := time.Now()
		snap, err := s.Poll(ctx)
		cancel()
		if elapsed := time.Since(start); elapsed > 3*time.Second {
			t.Errorf("poll took %v with a 1s deadline", elapsed)
		}
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		if d := mustDLQ(t, snap, vh, "sink"); !strings.Contains(d.Err, "deadline exceeded") {
			t.Errorf("sink err %q, want deadline exceeded", d.Err)
		}
		if err := amqpProxy.Toxics.RemoveToxic(context.Background(), "hole"); err != nil {
			t.Fatal(err)
		}
		depth(t, poll(t, s), 3)
	})
}

func TestWrongCredentials(t *testing.T) {
	requireRabbit(t)
	s := newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL, ManagementUsername: "guest", ManagementPassword: "wrong"}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.Poll(ctx)
	want := "rabbitmq main: management API " + testenv.ManagementURL + "/api/vhosts: 401 unauthorized: check management_username/password"
	if err == nil || err.Error() != want || !errors.Is(err, rabbit.ErrUnauthorized) {
		t.Errorf("poll error %v, want %q", err, want)
	}
	if err := s.Check(ctx); err == nil || !strings.Contains(err.Error(), "401 unauthorized") {
		t.Errorf("check error %v, want 401", err)
	}

	s = newSource(t, config.RabbitMQ{URL: "amqp://guest:wrong@127.0.0.1:5672/", ManagementURL: testenv.ManagementURL, ManagementUsername: "guest", ManagementPassword: "guest"}, Options{})
	err = s.Check(ctx)
	if err == nil || !strings.Contains(err.Error(), "check the credentials in url") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("check error %v, want a credentials hint without the password", err)
	}
	if err := newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL}, Options{}).Check(ctx); err != nil {
		t.Errorf("check with good credentials: %v", err)
	}
}

func TestAMQPOnly(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("amqp only/%")
	ch := channel(t, vh)
	a.queue(vh, "work", nil)
	a.queue(vh, "work.dlq", nil)
	a.queue(vh, "held", nil)
	for range 2 {
		publish(t, ch, "", "work.dlq", amqp.Publishing{Body: []byte("x"), Timestamp: time.Now()})
	}
	publish(t, ch, "", "work", text("x"))

	ref, err := ParseQueueRef(QueueRef{VHost: vh, Name: "work.dlq"}.String())
	if err != nil {
		t.Fatal(err)
	}
	s := newSource(t, config.RabbitMQ{}, Options{
		DLQNamePattern: testNamePattern,
		ExplicitDLQ:    func(_, q string) bool { return q == "held" },
		ExplicitQueues: []QueueRef{ref, {vh, "work"}, {vh, "held"}, {vh, "gone"}},
	})
	snap := poll(t, s)
	var names []string
	for _, q := range snap.Queues {
		names = append(names, q.Name)
	}
	if want := []string{"held", "work", "work.dlq"}; !slices.Equal(names, want) {
		t.Errorf("queues %v, want %v (a missing queue is left out)", names, want)
	}
	if q, _ := findQueue(snap, vh, "work"); q.Ready != 1 {
		t.Errorf("work ready %d, want 1", q.Ready)
	}
	// Without the management API there is no head_message_timestamp, and
	// the head is never read: the age is estimated from the backlog.
	if d := mustDLQ(t, snap, vh, "work.dlq"); d.Messages != 2 || d.Detection != queue.DetectedName ||
		!d.HasOldestAge || d.OldestAgeBasis != queue.AgeBacklog || d.OldestAge > time.Second {
		t.Errorf("work.dlq %+v", d)
	}
	if d := mustDLQ(t, snap, vh, "held"); d.Messages != 0 || d.Detection != queue.DetectedConfig {
		t.Errorf("held %+v", d)
	}
	if _, ok := findDLQ(snap, vh, "work"); ok {
		t.Error("work labelled DLQ")
	}
	if s.HTTPRequests() != 0 {
		t.Errorf("%d HTTP requests in AMQP-only mode", s.HTTPRequests())
	}
}
