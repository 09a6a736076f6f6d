package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// deadLetterCluster starts a kfake cluster with topic orders and
// orders.DLT holding n dead letters of orders.
func deadLetterCluster(t *testing.T, n int) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.Ports(testenv.FreePorts(t, 1)...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := t.Context()
	for _, topic := range []string{"orders", "orders.DLT"} {
		if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{
			Topic: "orders.DLT", Value: fmt.Appendf(nil, "dead-%d", i),
			Headers: []kgo.RecordHeader{{Key: "kafka_dlt-original-topic", Value: []byte("orders")}},
		})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return c
}

// captureNATS starts an embedded JetStream server and returns the config
// of a cluster on it with dead-letter capture on.
func captureNATS(t *testing.T) config.NATS {
	t.Helper()
	s, err := server.NewServer(&server.Options{Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(s.Shutdown)
	return config.NATS{Name: "n", URL: s.ClientURL(), DeadLetters: config.NATSDeadLetters{Capture: true}}
}

// TestRunStopsInOrder cancels Run while a replay runs, with polling and
// NATS capture going. Run returns; the job was cancelled and settled
// before the audit store closed (a store closed first would keep it as
// running, and the next start would call it interrupted); the port is
// closed and every goroutine Run started is gone.
func TestRunStopsInOrder(t *testing.T) {
	k := deadLetterCluster(t, 30)
	cfg := testConfig(t, config.Kafka{Name: "prod", Brokers: k.ListenAddrs()})
	cfg.NATS = []config.NATS{captureNATS(t)}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	before := len(runGoroutines())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Config: cfg, Listen: "127.0.0.1:0", Listening: func(a string) { addr <- a }})
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("Run returned before listening: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not start listening")
	}

	id := queue.DLQRef{Broker: queue.Kafka, Cluster: "prod", Name: "orders.DLT"}.ID()
	resp, err := client.Post(base+"/api/v1/dlqs/"+url.PathEscape(id)+"/replay", "application/json",
		strings.NewReader(`{"selection":{"all":true},"rate":5}`))
	if err != nil {
		t.Fatal(err)
	}
	var accepted struct{ Job dlqreplay.Job }
	err = json.NewDecoder(resp.Body).Decode(&accepted)
	resp.Body.Close()
	job := accepted.Job
	if resp.StatusCode != http.StatusAccepted || err != nil {
		t.Fatalf("replay: %s %v", resp.Status, err)
	}
	eventually(t, "the replay under way", func() bool {
		resp, err := client.Get(base + "/api/v1/replays/" + job.ID + "?outcomes=false")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var got struct{ Job dlqreplay.Job }
		return json.NewDecoder(resp.Body).Decode(&got) == nil && got.Job.State == dlqreplay.StateRunning && got.Job.Progress.ToMove == 30
	})
	// At 5 a second, about 5 copies are published (in the job's open
	// transaction) when Run's context ends; the rest are still to go.
	time.Sleep(time.Second)

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if c, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), time.Second); err == nil {
		_ = c.Close()
		t.Error("the port still accepts connections after Run returned")
	}

	st, err := store.Open(t.Context(), cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Interrupted) > 0 {
		t.Fatalf("jobs %v were still running when the audit store closed", st.Interrupted)
	}
	got, err := st.Job(t.Context(), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != dlqreplay.StateCancelled || got.Progress.Moved >= 30 {
		t.Errorf("the replay ended %s having moved %d of 30; want cancelled part-way", got.State, got.Progress.Moved)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// What Run started must be gone; the test's servers (kfake, nats)
	// keep goroutines for what queuewatch created on them.
	deadline := time.Now().Add(10 * time.Second)
	for len(runGoroutines()) > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if g := runGoroutines(); len(g) > before {
		t.Errorf("%d goroutines after Run returned, %d before:\n%s", len(g), before, strings.Join(g, "\n\n"))
	}
}

// runGoroutines are the stacks of the goroutines that are not the test's
// embedded servers'.
func runGoroutines() []string {
	buf := make([]byte, 4<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if !strings.Contains(g, "nats-server/v2/server") && !strings.Contains(g, "franz-go/pkg/kfake.") {
			out = append(out, g)
		}
	}
	return out
}

// TestRunStopsWhatStartedWhenStartFails: when the listener cannot be had,
// after polling, background work and the DLQ service started, Run says so
// and stops them all (the same stop as on cancel).
func TestRunStopsWhatStartedWhenStartFails(t *testing.T) {
	k := deadLetterCluster(t, 1)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg := testConfig(t, config.Kafka{Name: "prod", Brokers: k.ListenAddrs()})
	cfg.NATS = []config.NATS{captureNATS(t)}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	before := len(runGoroutines())
	err = Run(t.Context(), Options{Config: cfg, Listen: busy.Addr().String()})
	if err == nil || !strings.Contains(err.Error(), "listen on") {
		t.Fatalf("Run on a busy port: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(runGoroutines()) > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if g := runGoroutines(); len(g) > before {
		t.Errorf("%d goroutines after Run failed, %d before:\n%s", len(g), before, strings.Join(g, "\n\n"))
	}
}
