package pubsub

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	gpubsub "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/types/known/durationpb"

	brokerpubsub "github.com/queuewatch/queuewatch/brokers/pubsub"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// publishPy publishes argv[1] messages to topic argv[2] with the Python
// client.
const publishPy = `
import sys
from google.cloud import pubsub_v1
pub = pubsub_v1.PublisherClient()
topic = pub.topic_path("` + testenv.PubSubProject + `", sys.argv[2])
for f in [pub.publish(topic, b"order %d" % i, n=str(i)) for i in range(int(sys.argv[1]))]:
    f.result()
`

// TestPubSubPollOnTheEmulator polls a project on the emulator: a source
// whose dead letters a nacking subscriber sends to a DLQ subscription
// (its depth counted, "≥ N", and left in place), a subscription whose
// dead-letter topic nobody subscribes to (a lint), include/exclude, and a
// DLQ that stays listed at 0 once its subscription is deleted.
func TestPubSubPollOnTheEmulator(t *testing.T) {
	emu := testenv.PubSub(t)
	cluster, err := brokerpubsub.New(config.PubSub{Name: "emu", Project: emu.Project, Endpoint: emu.Host})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	client, err := cluster.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.ReplaceAll(testenv.Unique("ps"), "_", "-")
	w := world{t: t, client: client, project: emu.Project}
	for _, tp := range []string{id, id + "-dl", id + "-lost-dl"} {
		w.topic(tp)
	}
	policy := func(topic string) *pubsubpb.DeadLetterPolicy {
		return &pubsubpb.DeadLetterPolicy{DeadLetterTopic: w.top(topic), MaxDeliveryAttempts: 10}
	}
	w.subscription(&pubsubpb.Subscription{Name: w.sub(id), Topic: w.top(id), DeadLetterPolicy: policy(id + "-dl"), MessageRetentionDuration: durationpb.New(24 * time.Hour)})
	w.subscription(&pubsubpb.Subscription{Name: w.sub(id + "-dlq"), Topic: w.top(id + "-dl"), MessageRetentionDuration: durationpb.New(7 * 24 * time.Hour)})
	w.subscription(&pubsubpb.Subscription{Name: w.sub(id + "-lost"), Topic: w.top(id), DeadLetterPolicy: policy(id + "-lost-dl")})
	w.subscription(&pubsubpb.Subscription{Name: w.sub(id + "-test"), Topic: w.top(id)})

	src, err := New(Options{Cluster: cluster, Include: func(n string) bool {
		return strings.HasPrefix(n, id) && !strings.HasSuffix(n, "-test")
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)

	const n = 4
	emu.Python(t, publishPy, strconv.Itoa(n), id)
	nackUntil(t, client, id, func() bool {
		snap, err := src.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		d := dlq(snap, id+"-dlq")
		return d != nil && d.Messages == n
	})
	snap, err := src.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range snap.PubSubSubscriptions {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != id+","+id+"-dlq,"+id+"-lost" {
		t.Errorf("subscriptions %v: want the source, its DLQ and -lost (-test excluded)", names)
	}
	d := dlq(snap, id+"-dlq")
	if d == nil || d.Messages != n || !d.AtLeast || d.Err != "" || strings.Join(d.Sources, ",") != id || d.ID() != "pubsub:emu::"+id+"-dlq" {
		t.Errorf("DLQ = %+v, want %d counted (at least) from %s", d, n, id)
	}
	if s, _ := snap.PubSubSubscription(id + "-dlq"); s == nil || !s.DLQ {
		t.Errorf("%s-dlq not marked a DLQ: %+v", id, s)
	}
	lost, _ := snap.PubSubSubscription(id + "-lost")
	if lost == nil || len(lost.Lints) != 1 || lost.Lints[0].Kind != string(brokerpubsub.LintDeadLettersDropped) {
		t.Errorf("%s-lost lints = %+v, want dead_letters_dropped", id, lost)
	}
	if p := snap.PubSub; p == nil || p.Project != emu.Project || p.Monitoring {
		t.Errorf("project = %+v", p)
	}

	// Deleted, the DLQ stays listed at 0.
	if err := client.SubscriptionAdminClient.DeleteSubscription(ctx, &pubsubpb.DeleteSubscriptionRequest{Subscription: w.sub(id + "-dlq")}); err != nil {
		t.Fatal(err)
	}
	snap, err = src.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := dlq(snap, id+"-dlq"); d == nil || d.Messages != 0 {
		t.Errorf("deleted DLQ = %+v, want listed at 0", d)
	}
}

func dlq(snap *queue.Snapshot, name string) *queue.DLQ {
	for i := range snap.DLQs {
		if snap.DLQs[i].Name == name {
			return &snap.DLQs[i]
		}
	}
	return nil
}

// nackUntil nacks every message of subscription sub, as a failing
// consumer does, until done reports true (asked every 100 ms).
func nackUntil(t *testing.T, client *gpubsub.Client, sub string, done func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		// Receive returns when ctx ends; the nacks are its only effect.
		_ = client.Subscriber(sub).Receive(ctx, func(_ context.Context, m *gpubsub.Message) { m.Nack() })
	}()
	defer func() { cancel(); <-stopped }()
	deadline := time.Now().Add(90 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("nacking %s for 90s did not get there", sub)
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-t.Context().Done():
			return
		}
	}
}

type world struct {
	t       *testing.T
	client  *gpubsub.Client
	project string
}

func (w world) top(id string) string { return "projects/" + w.project + "/topics/" + id }
func (w world) sub(id string) string { return "projects/" + w.project + "/subscriptions/" + id }

func (w world) topic(id string) {
	w.t.Helper()
	if _, err := w.client.TopicAdminClient.CreateTopic(w.t.Context(), &pubsubpb.Topic{Name: w.top(id)}); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		_ = w.client.TopicAdminClient.DeleteTopic(context.Background(), &pubsubpb.DeleteTopicRequest{Topic: w.top(id)})
	})
}

func (w world) subscription(s *pubsubpb.Subscription) {
	w.t.Helper()
	if _, err := w.client.SubscriptionAdminClient.CreateSubscription(w.t.Context(), s); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		_ = w.client.SubscriptionAdminClient.DeleteSubscription(context.Background(), &pubsubpb.DeleteSubscriptionRequest{Subscription: s.Name})
	})
}
