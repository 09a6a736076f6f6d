package rabbitmq

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/queue"
)

// The shared test broker (DESIGN.md §4).
const (
	testMgmtURL = "http://127.0.0.1:15672"
	testAMQPURL = "amqp://guest:guest@127.0.0.1:5672/"
)

// testNamePattern is config.DefaultDLQNamePattern, copied so that these
// tests do not depend on the config package.
var testNamePattern = regexp.MustCompile(`(?i).*([._-]dlq|[._-]dlt|dead-?letters?|deadletter|[._]error|parking-?lot)$`)

// requireRabbit is the one place integration tests may skip: when the
// broker is unreachable outside CI. In CI a missing broker fails the test.
func requireRabbit(t testing.TB) *admin {
	t.Helper()
	a := &admin{t: t, hc: &http.Client{Timeout: 10 * time.Second}}
	err := a.reachable()
	if err == nil {
		return a
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("rabbitmq is required in CI: %v", err)
	}
	t.Skipf("rabbitmq not reachable on 127.0.0.1 (set CI=true to fail instead): %v", err)
	return nil
}

// admin drives the broker's management API for test setup.
type admin struct {
	t  testing.TB
	hc *http.Client
}

func (a *admin) reachable() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, testMgmtURL+"/api/overview", nil)
	req.SetBasicAuth("guest", "guest")
	resp, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("management API: %s", resp.Status)
	}
	conn, err := amqp.DialConfig(testAMQPURL, amqp.Config{Dial: amqp.DefaultDial(2 * time.Second)})
	if err != nil {
		return err
	}
	return conn.Close()
}

// do sends one management request; path segments must already be escaped.
func (a *admin) do(method, path string, body any) []byte {
	a.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, testMgmtURL+path, r)
	if err != nil {
		a.t.Fatal(err)
	}
	req.SetBasicAuth("guest", "guest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 && (method != http.MethodDelete || resp.StatusCode != http.StatusNotFound) {
		a.t.Fatalf("%s %s: %s: %s", method, path, resp.Status, out)
	}
	return out
}

// unique returns a name no earlier run used.
func unique(prefix string) string {
	return fmt.Sprintf("qw-%s-%d-%04d", prefix, time.Now().UnixNano()%1e9, rand.IntN(10000))
}

// vhost creates a vhost named name, grants guest everything on it and
// deletes it (with its queues) when the test ends.
func (a *admin) vhost(name string) string {
	a.t.Helper()
	a.do(http.MethodPut, apiPath("vhosts", name), map[string]any{})
	a.do(http.MethodPut, apiPath("permissions", name, "guest"), map[string]string{"configure": ".*", "write": ".*", "read": ".*"})
	a.t.Cleanup(func() { a.do(http.MethodDelete, apiPath("vhosts", name), nil) })
	return name
}

func (a *admin) queue(vh, name string, args map[string]any) {
	a.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	a.do(http.MethodPut, apiPath("queues", vh, name), map[string]any{"durable": true, "arguments": args})
}

func (a *admin) exchange(vh, name, typ string, args map[string]any) {
	a.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	a.do(http.MethodPut, apiPath("exchanges", vh, name), map[string]any{"type": typ, "durable": true, "arguments": args})
}

func (a *admin) bind(vh, exchange, q, key string) {
	a.t.Helper()
	a.do(http.MethodPost, apiPath("bindings", vh, "e", exchange, "q", q), map[string]any{"routing_key": key})
}

func (a *admin) policy(vh, name, pattern string, def map[string]any) {
	a.t.Helper()
	a.do(http.MethodPut, apiPath("policies", vh, name), map[string]any{"pattern": pattern, "definition": def, "apply-to": "queues"})
}

// waitPolicy waits until the management API shows policy on queue q:
// policies reach queue objects with the statistics, about five seconds
// after they are set.
func (a *admin) waitPolicy(vh, q, policy string) {
	a.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var got struct{ Policy string }
		if err := json.Unmarshal(a.do(http.MethodGet, apiPath("queues", vh, q)+"?disable_stats=false", nil), &got); err != nil {
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
	a.do(http.MethodPost, apiPath("queues", vh, q, "get"), map[string]any{"count": 1, "ackmode": "reject_requeue_false", "encoding": "auto"})
}

// channel opens an AMQP channel on vh, closed when the test ends.
func channel(t testing.TB, vh string) *amqp.Channel {
	t.Helper()
	conn, err := amqp.DialConfig(testAMQPURL, amqp.Config{Vhost: vh})
	if err != nil {
		t.Fatalf("dial vhost %q: %v", vh, err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
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

// newSource builds a source on the shared broker with opts' gaps filled in.
func newSource(t testing.TB, opts Options) *Source {
	t.Helper()
	if opts.Name == "" {
		opts.Name = "main"
	}
	if opts.URL == "" {
		opts.URL = testAMQPURL
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
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
