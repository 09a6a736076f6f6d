package nats

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/queuewatch/queuewatch/config"
)

// TestClientListsAndLooksUp checks the raw listings past one page (the
// server answers 256 streams a page), a consumer listing, a next-message
// lookup by filter and its end, and that each request is counted.
func TestClientListsAndLooksUp(t *testing.T) {
	s := startServer(t, &server.Options{})
	c, err := New(config.NATS{Name: "n", URL: s.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int64
	cl, err := c.NewClient(context.Background(), "test", &requests)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, js := context.Background(), cl.JetStream()
	const streams = 300
	for i := range streams {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: fmt.Sprintf("S%03d", i), Subjects: []string{fmt.Sprintf("s%03d.>", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, subj := range []string{"s000.a", "s000.b", "s000.a"} {
		if _, err := js.Publish(ctx, subj, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"one", "two"} {
		if _, err := js.CreateOrUpdateConsumer(ctx, "S000", jetstream.ConsumerConfig{Durable: name}); err != nil {
			t.Fatal(err)
		}
	}
	infos, missing, err := cl.Streams(ctx)
	if err != nil || len(infos) != streams || len(missing) != 0 {
		t.Fatalf("streams: %d, missing %v, err %v; want %d", len(infos), missing, err, streams)
	}
	cons, _, err := cl.Consumers(ctx, "S000")
	if err != nil || len(cons) != 2 {
		t.Fatalf("consumers: %d, err %v; want 2", len(cons), err)
	}
	seq, at, err := cl.NextMsg(ctx, "S000", 2, "s000.a")
	if err != nil || seq != 3 || at.IsZero() {
		t.Fatalf("next s000.a from 2: %d %v %v, want 3", seq, at, err)
	}
	if _, _, err := cl.NextMsg(ctx, "S000", 4, ">"); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("next past the end: %v, want ErrNoMessage", err)
	}
	// Two pages of streams, one of consumers, two lookups.
	if got := requests.Load(); got != 5 {
		t.Errorf("%d requests counted, want 5", got)
	}
}
