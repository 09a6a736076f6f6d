package nats

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/conformance"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// TestLeaseErrNotBlockedBySlowRenew checks that a job asking whether its
// lease is still held is answered at once while a renewal waits on a slow
// server: the renewal's network call holds no lock.
func TestLeaseErrNotBlockedBySlowRenew(t *testing.T) {
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(s.Shutdown)
	p := toxiproxy.NewProxy(toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop()),
		"nats", "127.0.0.1:0", strings.TrimPrefix(s.ClientURL(), "nats://"))
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	cl, err := brokernats.New(config.NATS{Name: "n", URL: "nats://" + p.Listen, DeadLetters: config.NATSDeadLetters{Capture: true, Stream: dlStream}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Options{Cluster: cl, LeaseTTL: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	nc, js, err := cl.Connect(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	l, err := b.acquire(ctx, js, dlqreplay.JobSpec{ID: "job-1", DLQ: dlqreplay.Ref{Broker: queue.NATS, Cluster: "n", Name: "billing"}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.abandon()
	// Every answer from now on takes 2s: the renewal due after 1s waits
	// out its own 1s deadline.
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(
		`{"name":"slow","type":"latency","stream":"downstream","attributes":{"latency":2000}}`)); err != nil {
		t.Fatal(err)
	}
	var slowest time.Duration
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		start := time.Now()
		_ = l.err()
		slowest = max(slowest, time.Since(start))
	}
	if slowest > 200*time.Millisecond {
		t.Fatalf("err() waited %v behind a renewal", slowest)
	}
	if l.err() == nil {
		t.Fatal("a renewal that timed out left the lease held")
	}
}

// faultyCloseBackend opens real sessions whose Close first applies fault:
// the server fails after the job's work is done and before its lease is
// released.
type faultyCloseBackend struct {
	*Backend
	fault func()
}

func (b faultyCloseBackend) Open(ctx context.Context, job dlqreplay.JobSpec) (dlqreplay.Session, error) {
	s, err := b.Backend.Open(ctx, job)
	if err != nil {
		return nil, err
	}
	return faultyCloseSession{Session: s, fault: b.fault}, nil
}

type faultyCloseSession struct {
	dlqreplay.Session
	fault func()
}

func (s faultyCloseSession) Close(ctx context.Context) error {
	s.fault()
	return s.Session.Close(ctx)
}

// TestReleaseFailureKeepsJobSucceeded checks that a job whose messages
// were all replayed stays succeeded when its lease cannot be released
// (JetStream is gone by then): the lease runs out with the bucket's TTL,
// and the failure is logged as a warning.
func TestReleaseFailureKeepsJobSucceeded(t *testing.T) {
	w := newWorld(t).(*world)
	w.DeadLetter(t, conformance.Message{ID: "a"}, conformance.Message{ID: "b"})
	var logged strings.Builder
	var mu sync.Mutex
	be, err := New(Options{Cluster: w.cl, LeaseTTL: 2 * time.Second, Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logged}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc, err := dlqreplay.New(dlqreplay.Options{
		Store: st, FlushInterval: 20 * time.Millisecond,
		Backends: []dlqreplay.Backend{faultyCloseBackend{Backend: be, fault: func() {
			if err := w.server().DisableJetStream(); err != nil {
				t.Error(err)
			}
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := svc.Run(ctx, dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.State != dlqreplay.StateSucceeded || r.Job.Progress.Moved != 2 {
		t.Fatalf("job %+v (error %q), want succeeded with 2 moved", r.Job, r.Job.Error)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "lease") {
		t.Fatalf("no warning about the lease in %q", logged.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
