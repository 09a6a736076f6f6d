package pubsub

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/conformance"
	"github.com/queuewatch/queuewatch/queue"
)

// publishDLT publishes a message straight to the dead-letter topic (with
// the Go client), so it carries none of the attributes Pub/Sub adds.
func (w *world) publishDLT(t *testing.T, id string) {
	t.Helper()
	_, err := w.c.TopicAdminClient.Publish(context.Background(), &pubsubpb.PublishRequest{Topic: w.topic(w.dlt), Messages: []*pubsubpb.PubsubMessage{{
		Data: []byte{0, 1, 2}, Attributes: map[string]string{conformance.TestIDHeader: id},
	}}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBrowse: pages in publish order show each dead letter's attributes,
// ordering key and the facts Pub/Sub added (source subscription, delivery
// count, the source topic's publish time), and every pulled message is
// given back at once: the world's own pull, right after, sees them all in
// the same order.
func TestBrowse(t *testing.T) {
	w := newTopics(t)
	w.DeadLetter(t, conformance.Message{ID: "b-0", Tenant: "a"}, conformance.Message{ID: "b-1", Tenant: "b"}, conformance.Message{ID: "b-2", Tenant: "c"})
	w.publishDLT(t, "b-3")
	svc := w.Service(t, 0)
	var got []string
	after := ""
	for range 3 {
		p, err := svc.Browse(context.Background(), w.DLQ(), dlqreplay.BrowseOptions{Limit: 2, After: after})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range p.Messages {
			id, _ := m.Header(conformance.TestIDHeader)
			got = append(got, string(id))
			if m.Death.Source() != w.source || m.Death.Reason() != "max_delivery_attempts" || m.Timestamp.IsZero() || m.Properties["message_id"] != m.ID {
				t.Errorf("%s: source %q, reason %q, time %v, properties %v", id, m.Death.Source(), m.Death.Reason(), m.Timestamp, m.Properties)
			}
			if string(id) == "b-3" {
				if !slices.Equal(m.Body, []byte{0, 1, 2}) || m.Death.Deaths[0].Count != 0 {
					t.Errorf("b-3: body %x, death %+v", m.Body, m.Death)
				}
				continue
			}
			tenant, _ := m.Header("tenant")
			if d := m.Death.Deaths[0]; d.Count != maxAttempts || m.Death.OriginalTimestamp.IsZero() || m.Death.OriginalTimestamp.After(m.Timestamp) ||
				m.Properties["ordering_key"] != string(tenant) || m.Death.Framework != "pubsub" {
				t.Errorf("%s: death %+v, properties %v", id, m.Death, m.Properties)
			}
		}
		if after = p.Next; after == "" {
			break
		}
	}
	if !slices.Equal(got, []string{"b-0", "b-1", "b-2", "b-3"}) {
		t.Fatalf("browsed %v", got)
	}
	if in := w.InDLQ(t); !slices.Equal(in, got) {
		t.Fatalf("dlq holds %v right after browsing, want %v", in, got)
	}
	// The groups: the three dead letters of the source, and the one of
	// unknown origin published straight to the topic.
	p, err := svc.Browse(context.Background(), w.DLQ(), dlqreplay.BrowseOptions{Limit: 10})
	if err != nil || len(p.Groups) != 1 || p.Groups[0].Count != 4 || p.Groups[0].Signature.Source != w.source {
		t.Fatalf("groups %+v, %v", p.Groups, err)
	}
}

// TestChainedDLQRefused: a DLQ subscription with a dead-letter policy of
// its own is neither browsed nor opened for a job, and nothing is pulled
// from it.
func TestChainedDLQRefused(t *testing.T) {
	w := newTopics(t)
	w.DeadLetter(t, conformance.Message{ID: "c-0"})
	next := w.prefix + "-dlt2"
	w.createTopic(t, next)
	if _, err := w.c.SubscriptionAdminClient.UpdateSubscription(context.Background(), &pubsubpb.UpdateSubscriptionRequest{
		Subscription: &pubsubpb.Subscription{Name: w.sub(w.dlq), DeadLetterPolicy: &pubsubpb.DeadLetterPolicy{DeadLetterTopic: w.topic(next), MaxDeliveryAttempts: maxAttempts}},
		UpdateMask:   &fieldmaskpb.FieldMask{Paths: []string{"dead_letter_policy"}},
	}); err != nil {
		t.Fatal(err)
	}
	svc := w.Service(t, 0)
	if _, err := svc.Browse(context.Background(), w.DLQ(), dlqreplay.BrowseOptions{Limit: 10}); !errors.Is(err, dlqreplay.ErrDeliveryLimit) || !strings.Contains(err.Error(), "dead-letter policy of its own") {
		t.Errorf("browse = %v, want ErrDeliveryLimit saying why", err)
	}
	if _, err := svc.Run(context.Background(), dlqreplay.Request{DLQ: w.DLQ(), DryRun: true, Selection: dlqreplay.Selection{All: true}}); !errors.Is(err, dlqreplay.ErrDeliveryLimit) {
		t.Errorf("dry run = %v, want ErrDeliveryLimit", err)
	}
	// One look of the world's own (one delivery attempt of five): the
	// message is still there.
	if in := w.InDLQ(t); !slices.Equal(in, []string{"c-0"}) {
		t.Fatalf("dlq holds %v", in)
	}
}

// TestNotADLQ: a subscription whose topic no subscription dead-letters to
// is no DLQ.
func TestNotADLQ(t *testing.T) {
	w := newTopics(t)
	ref := w.ref()
	ref.Name = w.other
	_, err := w.Service(t, 0).Browse(context.Background(), ref.ID(), dlqreplay.BrowseOptions{Limit: 10})
	if !errors.Is(err, dlqreplay.ErrUnknownDLQ) || !strings.Contains(err.Error(), "no subscription's dead-letter topic") {
		t.Fatalf("browse = %v, want ErrUnknownDLQ saying why", err)
	}
}

// TestReplayedCopy: the copy in the source subscription keeps the dead
// letter's data, attributes and ordering key, carries the replay stamps
// and none of Pub/Sub's dead-letter attributes, and a message whose source
// cannot be told (published straight to a topic that two subscriptions
// dead-letter to) fails alone and stays, until moved to a named topic.
func TestReplayedCopy(t *testing.T) {
	w := newTopics(t)
	w.DeadLetter(t, conformance.Message{ID: "r-0", Tenant: "acme"})
	second := w.prefix + "-src2"
	w.createSource(t, second)
	w.publishDLT(t, "r-1")
	svc := w.Service(t, 0)
	r, err := svc.Run(context.Background(), dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.Progress.Moved != 1 || r.Job.Progress.Failed != 1 {
		t.Fatalf("receipt %+v %+v", r.Job.Progress, r.Outcomes)
	}
	for _, o := range r.Outcomes {
		if o.Result == dlqreplay.ResultFailed && !strings.Contains(o.Reason, "2 subscriptions dead-letter here") {
			t.Errorf("failure reason %q", o.Reason)
		}
	}
	ms := w.pullAll(t, w.source)
	if len(ms) != 1 {
		t.Fatalf("%d copies in the source", len(ms))
	}
	m := ms[0].GetMessage()
	a := m.GetAttributes()
	if string(m.GetData()) != `{"id":"r-0"}` || m.GetOrderingKey() != "acme" || a["tenant"] != "acme" || a[conformance.TestIDHeader] != "r-0" ||
		a[queue.HeaderReplayCount] != "1" || !strings.HasPrefix(a[queue.HeaderReplayID], r.Job.ID+".") || len(a) != 4 {
		t.Errorf("copy: data %q, ordering key %q, attributes %v", m.GetData(), m.GetOrderingKey(), a)
	}
	if in := w.InDLQ(t); !slices.Equal(in, []string{"r-1"}) {
		t.Fatalf("dlq holds %v", in)
	}
	mv, err := svc.Run(context.Background(), dlqreplay.Request{DLQ: w.DLQ(), Action: dlqreplay.ActionMove, Target: dlqreplay.Target{Name: w.other}, Selection: dlqreplay.Selection{All: true}})
	if err != nil || mv.Job.Progress.Moved != 1 {
		t.Fatalf("move: %v %+v", err, mv.Job.Progress)
	}
	if got := w.Arrived(t, w.other); len(got) != 1 || got[0].ID != "r-1" {
		t.Fatalf("moved %+v", got)
	}
}

// TestLeaseNames: a lease topic is named for its DLQ subscription within
// Pub/Sub's 255 characters, and a job id becomes a valid label value.
func TestLeaseNames(t *testing.T) {
	if got := leaseTopic("orders-dlq"); got != "queuewatch-lease-orders-dlq" {
		t.Errorf("leaseTopic = %q", got)
	}
	long := leaseTopic(strings.Repeat("s", 250))
	if len(long) != len("queuewatch-lease-")+32 || long == leaseTopic(strings.Repeat("s", 249)) {
		t.Errorf("leaseTopic(250 characters) = %q", long)
	}
	if got := labelValue("job-20261207T141933.123-ab12"); got != "job-20261207t141933_123-ab12" {
		t.Errorf("labelValue = %q", got)
	}
}

// TestMaxHeld: a job takes at most MaxHeld messages, the oldest it
// pulled, and leaves the rest in the DLQ for the next one.
func TestMaxHeld(t *testing.T) {
	w := newTopics(t)
	w.maxHeld = 2
	w.DeadLetter(t, conformance.Message{ID: "h-0"}, conformance.Message{ID: "h-1"}, conformance.Message{ID: "h-2"})
	svc := w.Service(t, 0)
	for _, want := range []int64{2, 1} {
		r, err := svc.Run(context.Background(), dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}})
		if err != nil || r.Job.Progress.Depth != want || r.Job.Progress.Moved != want {
			t.Fatalf("job: %v %+v, want %d moved", err, r.Job.Progress, want)
		}
	}
	if got := w.Arrived(t, w.source); len(got) != 3 {
		t.Fatalf("arrived %+v", got)
	}
}

// TestEndpoint: a backend given an emulator's host:port (what
// PUBSUB_EMULATOR_HOST names) reaches it without TLS or credentials.
func TestEndpoint(t *testing.T) {
	w := newTopics(t)
	w.DeadLetter(t, conformance.Message{ID: "e-0"})
	b, err := New(context.Background(), Options{Cluster: "local", Project: w.e.Project, Endpoint: w.e.Host})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	p, err := b.Browse(context.Background(), w.ref(), dlqreplay.BrowseOptions{Limit: 10})
	if err != nil || len(p.Messages) != 1 {
		t.Fatalf("browse: %v, %d messages", err, len(p.Messages))
	}
}
