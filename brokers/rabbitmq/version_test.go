package rabbitmq_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

func TestEffectiveDeliveryLimit(t *testing.T) {
	none := map[string]any(nil)
	tests := []struct {
		name, version, qtype string
		args, policy         map[string]any
		want                 int64
		ok                   bool
	}{
		{"3.x quorum without limit", "3.10.8", rabbit.TypeQuorum, none, none, 0, false},
		{"3.13 quorum without limit", "3.13.7", rabbit.TypeQuorum, none, none, 0, false},
		{"4.x quorum without limit", "4.0.5", rabbit.TypeQuorum, none, none, 20, true},
		{"4.1 quorum without limit", "4.1.0-rc.1", rabbit.TypeQuorum, none, none, 20, true},
		{"unknown version is taken as 4.x", "", rabbit.TypeQuorum, none, none, 20, true},
		{"4.x explicit argument wins", "4.0.5", rabbit.TypeQuorum, map[string]any{"x-delivery-limit": float64(5)}, none, 5, true},
		{"4.x explicit policy above default", "4.0.5", rabbit.TypeQuorum, none, map[string]any{"delivery-limit": float64(50)}, 50, true},
		{"4.x -1 switches it off", "4.0.5", rabbit.TypeQuorum, map[string]any{"x-delivery-limit": float64(-1)}, none, 0, false},
		{"4.x classic has none", "4.0.5", rabbit.TypeClassic, none, none, 0, false},
		{"4.x stream has none", "4.0.5", rabbit.TypeStream, none, none, 0, false},
		{"3.x explicit", "3.10.8", rabbit.TypeQuorum, map[string]any{"x-delivery-limit": int32(3)}, none, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := rabbit.EffectiveDeliveryLimit(tt.version, tt.qtype, tt.args, tt.policy)
			if got != tt.want || ok != tt.ok {
				t.Errorf("EffectiveDeliveryLimit = %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// recordedAPI serves files of testdata by path: overview-<version>.json
// for /api/overview, and the recorded quorum queues (3.10.8) under any
// vhost.
func recordedAPI(t *testing.T, overview string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var overviews atomic.Int64
	files := map[string]string{
		"/api/overview":                  overview,
		"/api/queues/v/orders.dlq":       "queue-quorum.json",
		"/api/queues/v/limited.dlq":      "queue-quorum-limit5.json",
		"/api/queues/v/classic-not-here": "",
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := files[r.URL.EscapedPath()]
		if name == "" {
			http.Error(w, `{"error":"Object Not Found","reason":"Not Found"}`, http.StatusNotFound)
			return
		}
		if r.URL.Path == "/api/overview" {
			overviews.Add(1)
		}
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Error(err)
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, &overviews
}

// TestDeliveryLimitOnRabbitMQ4 reads recorded quorum queues from a
// management API that says it is RabbitMQ 4.0.5: a quorum queue without
// an x-delivery-limit argument or policy has the limit 20 all the same.
func TestDeliveryLimitOnRabbitMQ4(t *testing.T) {
	srv, overviews := recordedAPI(t, "overview-4.0.json")
	c, err := rabbit.New(config.RabbitMQ{Name: "c", URL: "amqp://guest:guest@127.0.0.1:1/", ManagementURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q, err := c.Management().Queue(ctx, "v", "orders.dlq")
	if err != nil {
		t.Fatal(err)
	}
	if limit, ok := q.DeliveryLimit(); !ok || limit != rabbit.DefaultQuorumDeliveryLimit {
		t.Errorf("4.0.5 quorum queue without a limit: DeliveryLimit %d, %v; want 20, true", limit, ok)
	}
	if q, _ := c.Management().Queue(ctx, "v", "limited.dlq"); !limitIs(q, 5) {
		t.Errorf("4.0.5 quorum queue with x-delivery-limit 5: %+v", q)
	}
	if v := c.Version(ctx); v != "4.0.5" {
		t.Errorf("Version %q, want 4.0.5", v)
	}
	if limit, ok := c.DeliveryLimit(ctx, rabbit.TypeQuorum, nil, nil); !ok || limit != 20 {
		t.Errorf("Cluster.DeliveryLimit %d, %v; want 20, true", limit, ok)
	}
	if n := overviews.Load(); n != 1 {
		t.Errorf("%d /api/overview requests, want 1 (the version is cached)", n)
	}
}

// TestDeliveryLimitOnRabbitMQ3Recorded is the same read from a 3.10.8
// management API: no default limit.
func TestDeliveryLimitOnRabbitMQ3Recorded(t *testing.T) {
	srv, _ := recordedAPI(t, "overview-3.10.json")
	c, err := rabbit.New(config.RabbitMQ{Name: "c", URL: "amqp://guest:guest@127.0.0.1:1/", ManagementURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.Management().Queue(context.Background(), "v", "orders.dlq")
	if err != nil {
		t.Fatal(err)
	}
	if limit, ok := q.DeliveryLimit(); ok {
		t.Errorf("3.10.8 quorum queue without a limit: DeliveryLimit %d, want none", limit)
	}
}

func limitIs(q rabbit.Queue, want int64) bool {
	limit, ok := q.DeliveryLimit()
	return ok && limit == want
}

// TestVersionOnRealBroker reads the version of the real 3.10 broker from
// the management API, and without one from an AMQP handshake, and checks
// that a quorum queue without a limit has none there.
func TestVersionOnRealBroker(t *testing.T) {
	a := testenv.Rabbit(t)
	vh := a.VHost("version")
	a.Do(http.MethodPut, rabbit.APIPath("queues", vh, "q.dlq"), map[string]any{"durable": true, "arguments": map[string]any{"x-queue-type": "quorum"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	withAPI, err := rabbit.New(config.RabbitMQ{Name: "c", URL: testenv.DefaultAMQPURL, ManagementURL: testenv.ManagementURLWithAuth})
	if err != nil {
		t.Fatal(err)
	}
	v := withAPI.Version(ctx)
	if v == "" || rabbit.DefaultsToDeliveryLimit(v) {
		t.Fatalf("version %q from the management API, want the 3.x broker's", v)
	}
	q, err := withAPI.Management().Queue(ctx, vh, "q.dlq")
	if err != nil {
		t.Fatal(err)
	}
	if limit, ok := q.DeliveryLimit(); q.Type != rabbit.TypeQuorum || ok {
		t.Errorf("quorum queue on %s: type %q, limit %d %v; want no limit", v, q.Type, limit, ok)
	}

	amqpOnly, err := rabbit.New(config.RabbitMQ{Name: "c", URL: testenv.DefaultAMQPURL})
	if err != nil {
		t.Fatal(err)
	}
	if got := amqpOnly.Version(ctx); got != "" {
		t.Errorf("version %q before any connection, want unknown", got)
	}
	conn, err := amqpOnly.Dial(ctx, vh, "version test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := amqpOnly.Version(ctx); got != v {
		t.Errorf("version %q from the AMQP handshake, want %q", got, v)
	}
}

// TestHeadSightings checks the per-cluster cache a browse fills and the
// collector reads.
func TestHeadSightings(t *testing.T) {
	c, err := rabbit.New(config.RabbitMQ{Name: "c", URL: "amqp://127.0.0.1/"})
	if err != nil {
		t.Fatal(err)
	}
	died := time.Now().Add(-time.Hour).Truncate(time.Second)
	c.SawHead("v", "q", 4, &amqp.Delivery{Headers: amqp.Table{"x-death": []any{amqp.Table{"time": died}}}})
	c.SawHead("v", "plain", 1, &amqp.Delivery{}) // nothing to date it by
	h, ok := c.HeadSeen("v", "q")
	if !ok || !h.At.Equal(died) || h.Ready != 4 || time.Since(h.Seen) > time.Minute {
		t.Errorf("sighting %+v %v, want the death time and 4 ready", h, ok)
	}
	if _, ok := c.HeadSeen("v", "plain"); ok {
		t.Error("a head without x-death or timestamp was recorded")
	}
	c.ForgetHead("v", "q", h.Seen) // not before its own time: kept
	if _, ok := c.HeadSeen("v", "q"); !ok {
		t.Error("ForgetHead dropped a sighting made at the given time")
	}
	c.ForgetHead("v", "q", time.Now().Add(time.Second))
	if _, ok := c.HeadSeen("v", "q"); ok {
		t.Error("ForgetHead kept an older sighting")
	}
}
