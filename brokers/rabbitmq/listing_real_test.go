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
