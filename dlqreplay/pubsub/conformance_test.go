package pubsub

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	gps "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/conformance"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopPubSub()
	os.Exit(code)
}

func TestConformance(t *testing.T) {
	conformance.Run(t, newWorld)
}

// The world's timings: a job's pulled messages come back 10 s after it
// stopped extending them, and its lease runs out 2 s later, so a second
// job opened once the lease is free finds them all.
const (
	worldAckDeadline = 10 * time.Second
	worldLeaseTTL    = 12 * time.Second
	maxAttempts      = 5 // the emulator's floor
)

// world is a source topic whose subscription dead-letters to a topic
// after five delivery attempts, the DLQ subscription on that topic, and a
// second topic (with a subscription) for moves, on the package's
// emulator. Services reach the emulator through a TCP proxy so a fault
// can cut them off; the world itself talks to it directly.
type world struct {
	e        *testenv.PubSubEmulator
	c        *gps.Client
	proxy    *toxiproxy.Proxy
	throttle atomic.Bool // while set, every call of a service is refused as over quota
	prefix   string
	source   string                           // the source topic; its subscription has the same id
	dlt, dlq string                           // the dead-letter topic and the DLQ subscription
	other    string                           // a topic for moves; its subscription has the same id
	saved    map[string][]conformance.Arrival // arrivals taken early
	maxHeld  int                              // Options.MaxHeld of the services (0: the default)
}

func newWorld(t *testing.T) conformance.World { return newTopics(t) }

func newTopics(t *testing.T) *world {
	e := testenv.PubSub(t)
	w := &world{e: e, prefix: testenv.Unique("cf"), saved: map[string][]conformance.Arrival{}}
	w.source, w.dlt, w.dlq, w.other = w.prefix+"-src", w.prefix+"-dlt", w.prefix+"-dlq", w.prefix+"-other"
	w.c = client(t, e.Host)
	for _, topic := range []string{w.dlt, w.other} {
		w.createTopic(t, topic)
	}
	w.createSource(t, w.source)
	w.createSub(t, &pubsubpb.Subscription{Name: w.sub(w.dlq), Topic: w.topic(w.dlt)})
	w.createSub(t, &pubsubpb.Subscription{Name: w.sub(w.other), Topic: w.topic(w.other)})
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	w.proxy = toxiproxy.NewProxy(srv, "pubsub", "127.0.0.1:0", e.Host)
	if err := w.proxy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.proxy.Stop)
	return w
}

// client is a Pub/Sub client of the emulator at host.
func client(t *testing.T, host string, dial ...grpc.DialOption) *gps.Client {
	conn, err := grpc.NewClient(host, append(dial, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	c, err := gps.NewClient(context.Background(), testenv.PubSubProject, option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func (w *world) topic(id string) string { return "projects/" + w.e.Project + "/topics/" + id }
func (w *world) sub(id string) string   { return "projects/" + w.e.Project + "/subscriptions/" + id }

func (w *world) createTopic(t *testing.T, id string) {
	t.Helper()
	if _, err := w.c.TopicAdminClient.CreateTopic(context.Background(), &pubsubpb.Topic{Name: w.topic(id)}); err != nil {
		t.Fatal(err)
	}
}

func (w *world) createSub(t *testing.T, s *pubsubpb.Subscription) {
	t.Helper()
	s.AckDeadlineSeconds = 10
	if _, err := w.c.SubscriptionAdminClient.CreateSubscription(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// createSource creates topic id and its subscription id, which
// dead-letters to the DLQ's topic.
func (w *world) createSource(t *testing.T, id string) {
	w.createTopic(t, id)
	w.createSub(t, &pubsubpb.Subscription{Name: w.sub(id), Topic: w.topic(id), DeadLetterPolicy: &pubsubpb.DeadLetterPolicy{
		DeadLetterTopic: w.topic(w.dlt), MaxDeliveryAttempts: maxAttempts,
	}})
}

// deleteSource deletes the subscription id and its topic.
func (w *world) deleteSource(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	if err := w.c.SubscriptionAdminClient.DeleteSubscription(ctx, &pubsubpb.DeleteSubscriptionRequest{Subscription: w.sub(id)}); err != nil {
		t.Fatal(err)
	}
	if err := w.c.TopicAdminClient.DeleteTopic(ctx, &pubsubpb.DeleteTopicRequest{Topic: w.topic(id)}); err != nil && !notFound(err) {
		t.Fatal(err)
	}
}

func (w *world) Service(t *testing.T, maxReplays int) *dlqreplay.Service {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return w.service(t, maxReplays, st, w.proxy.Listen)
}

// ServiceOn reaches the emulator through a proxy of its own: its crash
// stops that proxy for good, so the service's calls never arrive again,
// and what it held comes back after the ack deadline.
func (w *world) ServiceOn(t *testing.T, st dlqreplay.Store) (*dlqreplay.Service, func(t *testing.T)) {
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "pubsub-crash", "127.0.0.1:0", w.e.Host)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return w.service(t, 0, st, p.Listen), func(t *testing.T) { p.Stop() }
}

// backend is a Backend reaching the emulator at host. While w.throttle is
// set, its calls are answered RESOURCE_EXHAUSTED, as Pub/Sub answers a
// call over quota, without reaching the emulator.
func (w *world) backend(t *testing.T, host string) *Backend {
	throttle := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if w.throttle.Load() {
			return status.Error(codes.ResourceExhausted, "quota exceeded (the test's throttle)")
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	conn, err := grpc.NewClient(host, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithUnaryInterceptor(throttle))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(context.Background(), Options{
		Cluster: "local", Project: w.e.Project, ClientOptions: []option.ClientOption{option.WithGRPCConn(conn)},
		AckDeadline: worldAckDeadline, LeaseTTL: worldLeaseTTL, PullWait: 300 * time.Millisecond, MaxHeld: w.maxHeld,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func (w *world) service(t *testing.T, maxReplays int, st dlqreplay.Store, host string) *dlqreplay.Service {
	svc, err := dlqreplay.New(dlqreplay.Options{
		Store: st, Backends: []dlqreplay.Backend{w.backend(t, host)}, MaxReplays: maxReplays, FlushInterval: 20 * time.Millisecond,
		NativePoll: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc
}

func (w *world) ref() dlqreplay.Ref {
	return dlqreplay.Ref{Broker: queue.PubSub, Cluster: "local", Name: w.dlq}
}
func (w *world) DLQ() string    { return w.ref().ID() }
func (w *world) Source() string { return w.source }
func (w *world) Other() string  { return w.other }

// publishPy publishes messages with the Python client, in order, each
// with its ordering key; it prints nothing.
const publishPy = `
import json, sys
from google.cloud import pubsub_v1
project, topic, msgs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
pub = pubsub_v1.PublisherClient(publisher_options=pubsub_v1.types.PublisherOptions(enable_message_ordering=True))
path = pub.topic_path(project, topic)
for m in msgs:
    pub.publish(path, m["data"].encode(), ordering_key=m["key"], **m["attrs"]).result()
`

// DeadLetter publishes msgs with the Python client and nacks them in the
// subscription they were published for until the emulator dead-letters
// them, in runs of one origin. A message with an Origin dies in a topic
// and subscription of its own, deleted afterwards.
func (w *world) DeadLetter(t *testing.T, msgs ...conformance.Message) {
	t.Helper()
	// Copies a job replayed into the source would die too: take them first.
	w.saved[w.source] = append(w.saved[w.source], w.take(t, w.source)...)
	for len(msgs) > 0 {
		n := 1
		for n < len(msgs) && msgs[n].Origin == msgs[0].Origin {
			n++
		}
		w.deadLetterRun(t, msgs[0].Origin, msgs[:n])
		msgs = msgs[n:]
	}
}

type pyMessage struct {
	Data  string            `json:"data"`
	Key   string            `json:"key"`
	Attrs map[string]string `json:"attrs"`
}

func (w *world) deadLetterRun(t *testing.T, origin string, msgs []conformance.Message) {
	t.Helper()
	src := w.source
	if origin != "" {
		src = origin + "-" + w.prefix
		w.createSource(t, src)
	}
	before := len(w.InDLQ(t))
	in := make([]pyMessage, len(msgs))
	for i, m := range msgs {
		in[i] = pyMessage{Data: `{"id":"` + m.ID + `"}`, Key: m.Tenant, Attrs: map[string]string{conformance.TestIDHeader: m.ID, "tenant": m.Tenant}}
		if m.Tenant == "" {
			delete(in[i].Attrs, "tenant")
		}
		if m.ReplayCount > 0 {
			in[i].Attrs[queue.HeaderReplayCount] = strconv.Itoa(m.ReplayCount)
		}
	}
	b, _ := json.Marshal(in)
	w.e.Python(t, publishPy, w.e.Project, src, string(b))
	w.nackUntilDead(t, src, before+len(msgs))
	if origin != "" {
		w.deleteSource(t, src)
	}
}

// nackUntilDead nacks everything subscription sub delivers, as a failing
// consumer does, until the DLQ holds want messages.
func (w *world) nackUntilDead(t *testing.T, sub string, want int) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(60 * time.Second); ; {
		ms := w.pullAll(t, sub)
		if len(ms) > 0 {
			if err := w.c.SubscriptionAdminClient.ModifyAckDeadline(ctx, &pubsubpb.ModifyAckDeadlineRequest{Subscription: w.sub(sub), AckIds: ackIDs(ms)}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		n := len(w.InDLQ(t))
		if n >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dlq holds %d messages, want %d", n, want)
		}
	}
}

// pullAll pulls every message subscription id delivers now, hidden for
// its ack deadline.
func (w *world) pullAll(t *testing.T, id string) []*pubsubpb.ReceivedMessage {
	t.Helper()
	var out []*pubsubpb.ReceivedMessage
	for {
		// The emulator answers an immediate pull with everything it can
		// deliver: the test wants its state now, not after a wait.
		r, err := w.c.SubscriptionAdminClient.Pull(context.Background(), &pubsubpb.PullRequest{Subscription: w.sub(id), MaxMessages: 1000, ReturnImmediately: true}) //nolint:staticcheck // see above
		if err != nil {
			t.Fatal(err)
		}
		if len(r.GetReceivedMessages()) == 0 {
			return out
		}
		out = append(out, r.GetReceivedMessages()...)
	}
}

// InDLQ pulls the DLQ, orders it by publish time and gives it back.
func (w *world) InDLQ(t *testing.T) []string {
	t.Helper()
	ms := w.pullAll(t, w.dlq)
	if len(ms) > 0 {
		if err := w.c.SubscriptionAdminClient.ModifyAckDeadline(context.Background(), &pubsubpb.ModifyAckDeadlineRequest{Subscription: w.sub(w.dlq), AckIds: ackIDs(ms)}); err != nil {
			t.Fatal(err)
		}
	}
	sortByPublishTime(ms)
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.GetMessage().GetAttributes()[conformance.TestIDHeader]
	}
	return out
}

func (w *world) Arrived(t *testing.T, name string) []conformance.Arrival {
	out := w.saved[name]
	delete(w.saved, name)
	return append(out, w.take(t, name)...)
}

// take pulls and acknowledges what the subscription of topic name holds.
func (w *world) take(t *testing.T, name string) []conformance.Arrival {
	t.Helper()
	ms := w.pullAll(t, name)
	if len(ms) == 0 {
		return nil
	}
	if err := w.c.SubscriptionAdminClient.Acknowledge(context.Background(), &pubsubpb.AcknowledgeRequest{Subscription: w.sub(name), AckIds: ackIDs(ms)}); err != nil {
		t.Fatal(err)
	}
	sortByPublishTime(ms)
	out := make([]conformance.Arrival, len(ms))
	for i, m := range ms {
		a := m.GetMessage().GetAttributes()
		out[i] = conformance.Arrival{ID: a[conformance.TestIDHeader], ReplayCount: a[queue.HeaderReplayCount], ReplayID: a[queue.HeaderReplayID]}
	}
	return out
}

// Faults: the connection cut by the proxy, every call throttled, and the
// source topic deleted under the job (its arrivals taken first).
func (w *world) Faults() []conformance.Fault {
	return []conformance.Fault{
		{
			Name:   "connection cut by a TCP proxy",
			Inject: func(t *testing.T) { w.proxy.Stop() },
			Heal: func(t *testing.T) {
				if err := w.proxy.Start(); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			Name:   "throttled",
			Inject: func(t *testing.T) { w.throttle.Store(true) },
			Heal:   func(t *testing.T) { w.throttle.Store(false) },
		},
		{
			// Deleted while the proxy holds the job off, so that what it
			// sent can be counted before it goes. The source subscription
			// then names the deleted topic; healing makes both anew.
			Name: "target topic deleted",
			Inject: func(t *testing.T) {
				w.proxy.Stop()
				w.saved[w.source] = append(w.saved[w.source], w.take(t, w.source)...)
				if err := w.c.TopicAdminClient.DeleteTopic(context.Background(), &pubsubpb.DeleteTopicRequest{Topic: w.topic(w.source)}); err != nil {
					t.Fatal(err)
				}
				if err := w.proxy.Start(); err != nil {
					t.Fatal(err)
				}
			},
			Heal: func(t *testing.T) {
				w.deleteSource(t, w.source)
				w.createSource(t, w.source)
			},
		},
	}
}

func sortByPublishTime(ms []*pubsubpb.ReceivedMessage) { slices.SortStableFunc(ms, byPublishTime) }
