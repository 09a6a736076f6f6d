package rabbitmq_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestUnpagedListingOfARealBroker lists a vhost of 600 queues (classic
// and quorum, one in seven holding messages) on the real broker twice:
// in two pages while its size is unknown, then in one request, and both
// show the same queues with the same depths and consumers.
func TestUnpagedListingOfARealBroker(t *testing.T) {
	const n = 600
	vh := testenv.Rabbit(t).VHost("listing")
	ch := testenv.Channel(t, vh)
	for i := range n {
		name, args := fmt.Sprintf("q.%03d", i), amqp.Table{}
		if i%100 == 0 {
			args["x-queue-type"] = "quorum"
		}
		if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
			t.Fatal(err)
		}
		for range i % 7 {
			if err := ch.PublishWithContext(t.Context(), "", name, false, false, amqp.Publishing{Body: []byte("x")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := ch.Consume("q.001", "", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	paged, unpaged := settledListings(t, vh, n)
	for i := range paged {
		p, u := paged[i], unpaged[i]
		if p.Name != u.Name || p.Type != u.Type || *p.Ready != *u.Ready || *p.Unacked != *u.Unacked || *p.Consumers != *u.Consumers {
			t.Fatalf("paged %s %s %d/%d/%d, unpaged %s %s %d/%d/%d", p.Name, p.Type, *p.Ready, *p.Unacked, *p.Consumers,
				u.Name, u.Type, *u.Ready, *u.Unacked, *u.Consumers)
		}
	}
}

// settledListings lists vh with a new client (two pages) and again (one
// request) until the management statistics show every message published
// and the two listings agree on the total, so that what they compare did
// not move between them.
func settledListings(t *testing.T, vh string, n int) (paged, unpaged []rabbitmq.Queue) {
	t.Helper()
	want := int64(0)
	for i := range n {
		want += int64(i % 7)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for {
		c, err := rabbitmq.NewClient(testenv.ManagementURL, "guest", "guest", nil)
		if err != nil {
			t.Fatal(err)
		}
		paged, err = c.Queues(ctx, vh)
		if err != nil {
			t.Fatal(err)
		}
		pagedRequests := c.Requests()
		unpaged, err = c.Queues(ctx, vh)
		if err != nil {
			t.Fatal(err)
		}
		if pagedRequests != 2 || c.Requests()-pagedRequests != 1 {
			t.Fatalf("%d requests paged and %d unpaged, want 2 and 1", pagedRequests, c.Requests()-pagedRequests)
		}
		if len(paged) == n && len(unpaged) == n && total(paged) == want && total(unpaged) == want {
			return paged, unpaged
		}
		select {
		case <-ctx.Done():
			t.Fatalf("listings of %d and %d queues with %d and %d messages, want %d and %d", len(paged), len(unpaged), total(paged), total(unpaged), n, want)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// total is the messages of qs, ready and unacknowledged; a queue without
// statistics yet makes it -1.
func total(qs []rabbitmq.Queue) int64 {
	var sum int64
	for _, q := range qs {
		if q.Ready == nil || q.Unacked == nil || q.Consumers == nil {
			return -1
		}
		sum += *q.Ready + *q.Unacked
	}
	return sum
}

// TestExporterAgreesWithTheListing reads a vhost of 60 queues (classic and
// quorum, some holding messages, one with a consumer holding unacked
// messages) through rabbitmq_prometheus and the management API: once both
// show every message, they agree on every queue's ready, unacked and
// consumer counts, and the plugin answers for the node the listing names.
// .ci/run enables the plugin.
func TestExporterAgreesWithTheListing(t *testing.T) {
	const n = 60
	vh := testenv.Rabbit(t).VHost("exporter")
	ch := testenv.Channel(t, vh)
	var want int64
	for i := range n {
		name, args := fmt.Sprintf("q.%02d", i), amqp.Table{}
		if i%20 == 0 {
			args["x-queue-type"] = "quorum"
		}
		if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
			t.Fatal(err)
		}
		for range i % 4 {
			if err := ch.PublishWithContext(t.Context(), "", name, false, false, amqp.Publishing{Body: []byte("x")}); err != nil {
				t.Fatal(err)
			}
			want++
		}
	}
	if err := ch.Qos(2, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Consume("q.03", "", false, false, false, false, nil); err != nil { // 3 messages, 2 held
		t.Fatal(err)
	}
	base, err := rabbitmq.ExporterURL(testenv.ManagementURL)
	if err != nil {
		t.Fatal(err)
	}
	e, err := rabbitmq.NewExporter(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := rabbitmq.NewClient(testenv.ManagementURL, "guest", "guest", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for {
		d, err := e.QueueDepths(ctx, []string{vh})
		if err != nil {
			t.Fatalf("the plugin at %s: %v", base, err)
		}
		listed, err := c.Queues(ctx, vh)
		if err != nil {
			t.Fatal(err)
		}
		// Both are the queues' last emitted statistics: wait until both
		// show every message and the consumer's prefetch.
		if mismatch := compareDepths(d, listed, want); mismatch == "" {
			return
		} else if ctx.Err() != nil {
			t.Fatal(mismatch)
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// compareDepths says how the plugin's depths d differ from the listing,
// or that either does not show want messages yet; "" when they agree.
func compareDepths(d *rabbitmq.Depths, listed []rabbitmq.Queue, want int64) string {
	if total(listed) != want {
		return fmt.Sprintf("the listing shows %d messages, want %d", total(listed), want)
	}
	var sum int64
	for _, dq := range d.Queues {
		sum += dq.Ready + dq.Unacked
	}
	if sum != want || len(d.Queues) != len(listed) {
		return fmt.Sprintf("the plugin shows %d queues with %d messages, want %d with %d", len(d.Queues), sum, len(listed), want)
	}
	for _, q := range listed {
		got := d.Queues[rabbitmq.QueueKey{VHost: q.VHost, Name: q.Name}]
		if got.Ready != *q.Ready || got.Unacked != *q.Unacked || got.Consumers != *q.Consumers {
			return fmt.Sprintf("%s: plugin %+v, listing %d/%d/%d", q.Name, got, *q.Ready, *q.Unacked, *q.Consumers)
		}
		if q.Node != d.Node {
			return fmt.Sprintf("%s runs on %q, the plugin answered for %q", q.Name, q.Node, d.Node)
		}
		if q.Name == "q.03" && (got.Unacked != 2 || got.Consumers != 1) {
			return fmt.Sprintf("q.03: %+v, want 2 unacked and 1 consumer", got)
		}
	}
	return ""
}
