package pubsub

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// publishPy publishes argv[1] messages to topic argv[2] with the Python
// client, each with attribute n.
const publishPy = `
import sys
from google.cloud import pubsub_v1
pub = pubsub_v1.PublisherClient()
topic = pub.topic_path("` + testenv.PubSubProject + `", sys.argv[2])
for f in [pub.publish(topic, b"order %d" % i, n=str(i)) for i in range(int(sys.argv[1]))]:
    f.result()
print("published", sys.argv[1])
`

// TestTopologyAndCountOnTheEmulator builds orders → orders-dl →
// orders-dlq on the emulator, publishes with the Python client,
// dead-letters every message with a Go subscriber that nacks, and reads
// the topology, the dead letters' place and a count that leaves the DLQ
// as it was.
func TestTopologyAndCountOnTheEmulator(t *testing.T) {
	emu := testenv.PubSub(t)
	c, err := New(config.PubSub{Name: "emu", Project: emu.Project, Endpoint: emu.Host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx := t.Context()
	client, err := c.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.ReplaceAll(testenv.Unique("orders"), "_", "-")
	w := world{t: t, c: c, client: client}
	w.topic(id)
	w.topic(id + "-dl")
	w.subscription(&pubsubpb.Subscription{
		Name: w.sub(id), Topic: w.top(id), AckDeadlineSeconds: 10, MessageRetentionDuration: durationpb.New(2 * 24 * time.Hour),
		DeadLetterPolicy: &pubsubpb.DeadLetterPolicy{DeadLetterTopic: w.top(id + "-dl"), MaxDeliveryAttempts: 5},
		RetryPolicy:      &pubsubpb.RetryPolicy{MinimumBackoff: durationpb.New(time.Second), MaximumBackoff: durationpb.New(60 * time.Second)},
	})
	// A filter and ordering on a second subscription: the emulator
	// dead-lettered nothing from a subscription with both (not isolated).
	w.subscription(&pubsubpb.Subscription{Name: w.sub(id + "-audit"), Topic: w.top(id), Filter: "attributes:n", EnableMessageOrdering: true, EnableExactlyOnceDelivery: true})
	w.subscription(&pubsubpb.Subscription{
		Name: w.sub(id + "-dlq"), Topic: w.top(id + "-dl"), AckDeadlineSeconds: 60,
		MessageRetentionDuration: durationpb.New(24 * time.Hour),
	})

	topo, err := c.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	src, ok := topo.Subscription(id)
	if !ok {
		t.Fatalf("%s not listed: %+v", id, topo.Subscriptions)
	}
	if src.Topic != id || src.Delivery != Pull || src.DeadLetterTopic != id+"-dl" || src.MaxDeliveryAttempts != 5 ||
		src.AckDeadline != 10*time.Second || src.Retention != 48*time.Hour || src.RetryMin != time.Second ||
		src.RetryMax != time.Minute || src.Detached {
		t.Errorf("source subscription = %+v", src)
	}
	if a, _ := topo.Subscription(id + "-audit"); a == nil || a.Filter != "attributes:n" || !a.Ordering || !a.ExactlyOnce || a.DeadLetterTopic != "" {
		t.Errorf("audit subscription = %+v", a)
	}
	var dl []DeadLetter
	for _, d := range topo.DeadLetters() {
		if d.Source == id {
			dl = append(dl, d)
		}
	}
	if len(dl) != 1 || dl[0].Topic != id+"-dl" || len(dl[0].DLQs) != 1 || dl[0].DLQs[0] != id+"-dlq" {
		t.Errorf("dead letters of %s = %+v", id, dl)
	}
	var kinds []string
	for _, l := range topo.Lints() {
		if l.Subscription == id {
			kinds = append(kinds, string(l.Kind))
		}
	}
	if strings.Join(kinds, ",") != "dlq_retention_shorter,max_delivery_attempts_floor" {
		t.Errorf("lints of %s = %v", id, kinds)
	}

	const n = 6
	emu.Python(t, publishPy, strconv.Itoa(n), id)
	dlq, _ := topo.Subscription(id + "-dlq")
	// Nack until the DLQ holds them all (a message moves on its 5th nack),
	// then count again.
	NackUntil(t, client, id, func() bool {
		got, err := c.Count(ctx, dlq)
		if err != nil {
			t.Fatal(err)
		}
		return got == n
	})
	if got, err := c.Count(ctx, dlq); err != nil || got != n {
		t.Fatalf("count again = %d, %v; want %d (a count leaves every message)", got, err, n)
	}
	if _, err := c.Count(ctx, src); !errors.Is(err, ErrCountChained) {
		t.Errorf("count of a subscription with a dead-letter policy: %v, want ErrCountChained", err)
	}
}

// NackUntil nacks every message of subscription sub, as a failing
// consumer does, until done reports true (it is asked every 100 ms).
func NackUntil(t *testing.T, client *pubsub.Client, sub string, done func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		// Receive returns when ctx ends; the nacks are its only effect.
		_ = client.Subscriber(sub).Receive(ctx, func(_ context.Context, m *pubsub.Message) { m.Nack() })
	}()
	defer func() { cancel(); <-stopped }()
	deadline := time.Now().Add(60 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("nacking %s for 60s did not get there", sub)
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-t.Context().Done():
			return
		}
	}
}

type world struct {
	t      *testing.T
	c      *Cluster
	client *pubsub.Client
}

func (w world) top(id string) string { return "projects/" + w.c.Project() + "/topics/" + id }
func (w world) sub(id string) string { return "projects/" + w.c.Project() + "/subscriptions/" + id }

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
