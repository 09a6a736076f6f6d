package nats

import (
	"context"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
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
