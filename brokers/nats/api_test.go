package nats

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

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

// TestClientResetsAndPauses checks the consumer calls offsets/nats makes
// through the client on a real server: a time's first message, a reset
// and the server's refusal of one below the consumer's start (an
// *APIError, which offsets reports per partition), a pause and resume,
// and the refusal to pause a consumer that does not exist (err_code 10014,
// which offsets turns into "no consumer").
func TestClientResetsAndPauses(t *testing.T) {
	s := startServer(t, &server.Options{})
	c, err := New(config.NATS{Name: "n", URL: s.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := c.NewClient(context.Background(), "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, js := context.Background(), cl.JetStream()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	for range 5 {
		if _, err := js.Publish(ctx, "orders.new", nil); err != nil {
			t.Fatal(err)
		}
	}
	if seq, at, err := cl.MsgAt(ctx, "ORDERS", before.Add(-time.Hour), ">"); err != nil || seq != 1 || at.Before(before.Add(-time.Second)) {
		t.Errorf("first message after an hour ago: %d %v %v, want 1", seq, at, err)
	}
	if _, _, err := cl.MsgAt(ctx, "ORDERS", time.Now().Add(time.Hour), ">"); !errors.Is(err, ErrNoMessage) {
		t.Errorf("first message in an hour: %v, want ErrNoMessage", err)
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", jetstream.ConsumerConfig{
		Durable: "late", DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: 3,
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := cl.ResetConsumer(ctx, "ORDERS", "late", 4); err != nil || got != 4 {
		t.Errorf("reset to 4: %d %v", got, err)
	}
	var refused *APIError
	if _, err := cl.ResetConsumer(ctx, "ORDERS", "late", 1); !errors.As(err, &refused) {
		t.Errorf("reset below the start: %v, want an *APIError", err)
	}
	until := time.Now().Add(time.Hour).Truncate(time.Second)
	if paused, got, err := cl.PauseConsumer(ctx, "ORDERS", "late", &until); err != nil || !paused || !got.Equal(until) {
		t.Errorf("pause until %v: %v %v %v", until, paused, got, err)
	}
	if paused, _, err := cl.PauseConsumer(ctx, "ORDERS", "late", nil); err != nil || paused {
		t.Errorf("resume: paused %v, %v", paused, err)
	}
	if _, _, err := cl.PauseConsumer(ctx, "ORDERS", "nobody", &until); !errors.As(err, &refused) || refused.ErrCode != 10014 {
		t.Errorf("pause a consumer that does not exist: %v, want err_code 10014", err)
	}
}
