package sqs

import (
	"context"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	dlqsqs "github.com/queuewatch/queuewatch/dlqreplay/sqs"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestSQSOldestAgeFromBrowse sends to a DLQ with the aws CLI on a real
// ElasticMQ, waits, browses one message through the replay backend over
// the same access, and polls: the DLQ's oldest age is at least the wait,
// an estimate (browse basis, the reader's lag age), and its source queue,
// never browsed, has none. Emptied, the queue forgets it: a message sent
// afterwards is not dated by the one browsed before.
func TestSQSOldestAgeFromBrowse(t *testing.T) {
	s := testenv.ElasticMQ(t)
	p := testenv.Unique("age")
	src, dlq := p+"-orders", p+"-orders-dlq"
	createQueue(t, s, dlq, nil)
	createQueue(t, s, src, redrive(s, dlq, "3"))
	for _, body := range []string{"first", "second"} {
		s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(dlq), "--message-body", body)
	}
	const wait = 2 * time.Second
	time.Sleep(wait)

	cl := account(t, s, config.SQS{Queues: config.SQSQueues{Prefix: p}})
	poller, err := New(Options{Cluster: cl})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	before := pollQueue(ctx, t, poller, dlq)
	if before.OldestAgeBasis != queue.SQSAgeUnknown {
		t.Fatalf("before any browse: oldest age %v (%q), want unknown", before.OldestAge, before.OldestAgeBasis)
	}

	backend, err := dlqsqs.New(dlqsqs.Options{Cluster: cl})
	if err != nil {
		t.Fatal(err)
	}
	ref := dlqreplay.Ref{Broker: queue.SQS, Cluster: cl.Name(), Name: dlq}
	page, err := backend.Browse(ctx, ref, dlqreplay.BrowseOptions{Limit: 1})
	if err != nil || len(page.Messages) != 1 {
		t.Fatalf("browse: %d messages, %v", len(page.Messages), err)
	}

	q := pollQueue(ctx, t, poller, dlq)
	if q.OldestAgeBasis != queue.SQSAgeBrowse || q.OldestAge < wait || q.OldestAge > time.Minute {
		t.Errorf("after a browse: oldest age %v (%q), want at least %v, basis browse", q.OldestAge, q.OldestAgeBasis, wait)
	}
	if r := q.Reader(); r.LagBasis != queue.LagEstimate || r.LagSeconds != q.OldestAge.Seconds() || r.LagNote == "" {
		t.Errorf("reader lag %v s, basis %q, note %q; want the oldest age as an estimate with a note", r.LagSeconds, r.LagBasis, r.LagNote)
	}
	if sq := pollQueue(ctx, t, poller, src); sq.OldestAgeBasis != queue.SQSAgeUnknown {
		t.Errorf("the unbrowsed source queue has an oldest age: %v (%q)", sq.OldestAge, sq.OldestAgeBasis)
	}

	s.AWS(t, "sqs", "purge-queue", "--queue-url", s.QueueURL(dlq))
	if q := pollQueue(ctx, t, poller, dlq); q.Messages() != 0 || q.OldestAgeBasis != queue.SQSAgeUnknown {
		t.Errorf("emptied: %d messages, oldest age %v (%q); want none", q.Messages(), q.OldestAge, q.OldestAgeBasis)
	}
	s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(dlq), "--message-body", "later")
	if q := pollQueue(ctx, t, poller, dlq); q.Messages() != 1 || q.OldestAgeBasis != queue.SQSAgeUnknown {
		t.Errorf("a new message after the queue was empty: oldest age %v (%q), want unknown until browsed", q.OldestAge, q.OldestAgeBasis)
	}
}

// pollQueue polls src and returns the queue named name.
func pollQueue(ctx context.Context, t *testing.T, src *Source, name string) *queue.SQSQueue {
	t.Helper()
	snap, err := src.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q, ok := snap.SQSQueue(name)
	if !ok {
		t.Fatalf("poll lacks queue %s", name)
	}
	return q
}

// TestSQSOldestAgeFromCloudWatch reads ApproximateAgeOfOldestMessage,
// seeded with the aws CLI into moto's CloudWatch, with
// cloudwatch.oldest_age on: the queue's age is CloudWatch's latest
// datapoint (and wins over a browse estimate), a queue without one has
// none, and the read asks with one counted GetMetricData call.
func TestSQSOldestAgeFromCloudWatch(t *testing.T) {
	m := testenv.Moto(t)
	p := testenv.Unique("cwage")
	orders, quiet := p+"-orders", p+"-quiet"
	createQueue(t, m, orders, nil)
	createQueue(t, m, quiet, nil)
	for _, q := range []string{orders, quiet} {
		m.AWS(t, "sqs", "send-message", "--queue-url", m.QueueURL(q), "--message-body", "x")
	}
	m.AWS(t, "cloudwatch", "put-metric-data", "--namespace", "AWS/SQS", "--metric-name", "ApproximateAgeOfOldestMessage",
		"--dimensions", "QueueName="+orders, "--value", "754", "--unit", "Seconds",
		"--timestamp", time.Now().Add(-time.Minute).UTC().Format(time.RFC3339))

	cl := account(t, m, config.SQS{Queues: config.SQSQueues{Prefix: p}, CloudWatch: config.SQSCloudWatch{OldestAge: true}})
	cl.SawSent(orders, time.Now().Add(-time.Hour))
	src, err := New(Options{Cluster: cl})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := src.Poll(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Partial) != 0 {
		t.Errorf("partial: %v", snap.Partial)
	}
	if q, _ := snap.SQSQueue(orders); q == nil || q.OldestAgeBasis != queue.SQSAgeCloudWatch || q.OldestAge != 754*time.Second {
		t.Errorf("orders: %+v, want 754s from cloudwatch", q)
	} else if r := q.Reader(); r.LagBasis != queue.LagExact || r.LagSeconds != 754 {
		t.Errorf("orders reader lag %v s (%q), want 754 exact", r.LagSeconds, r.LagBasis)
	}
	if q, _ := snap.SQSQueue(quiet); q == nil || q.OldestAgeBasis != queue.SQSAgeUnknown {
		t.Errorf("quiet: %+v, want no oldest age", q)
	}
	if snap.SQS.OldestAgeMetrics != 2 {
		t.Errorf("OldestAgeMetrics = %d, want 2", snap.SQS.OldestAgeMetrics)
	}
	var calls int64
	for _, r := range snap.SQS.Requests {
		if r.Action == "GetMetricData" {
			calls = r.Count
		}
	}
	if calls != 1 {
		t.Errorf("requests %v, want one GetMetricData", snap.SQS.Requests)
	}
}
