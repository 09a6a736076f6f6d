package nats_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/queuewatch/queuewatch/alerts"
	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	collectnats "github.com/queuewatch/queuewatch/collectors/nats"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestRatesOfARealProducerAndConsumer: on a real nats-server, a nats.go
// producer stores 50 messages a second in a stream and a pull consumer
// fetches and acknowledges 20 a second; the consumer's consume and
// produce rates, from the stream's last sequence and the consumer's ack
// floor at ten polls a second apart (no extra request), are those within
// 10 %, and it falls behind. A consumer with a filter subject, whose
// stream sequences count other subjects too, has no rates.
func TestRatesOfARealProducerAndConsumer(t *testing.T) {
	srv := testenv.NATSProcess(t)
	nc, err := nats.Connect(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	const produceRate, consumeRate, polls = 50.0, 20.0, 10
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	worker, err := js.CreateOrUpdateConsumer(t.Context(), "ORDERS", jetstream.ConsumerConfig{Durable: "worker", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateOrUpdateConsumer(t.Context(), "ORDERS", jetstream.ConsumerConfig{Durable: "eu", AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: "orders.eu"}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	// Each loop keeps its count at rate × elapsed time, whatever the
	// scheduler's delays: the rates are known, not hoped for.
	start := time.Now()
	due := func(rate float64) int { return int(rate * time.Since(start).Seconds()) }
	wg.Go(func() {
		for n := 0; ctx.Err() == nil; time.Sleep(10 * time.Millisecond) {
			for ; n < due(produceRate); n++ {
				if _, err := js.Publish(ctx, "orders.us", fmt.Appendf(nil, "m%d", n)); err != nil {
					return
				}
			}
		}
	})
	wg.Go(func() {
		for n := 0; ctx.Err() == nil; time.Sleep(10 * time.Millisecond) {
			want := due(consumeRate) - n
			if want <= 0 {
				continue
			}
			batch, err := worker.FetchNoWait(want)
			if err != nil {
				return
			}
			for m := range batch.Messages() {
				if m.DoubleAck(ctx) != nil {
					return
				}
				n++
			}
		}
	})

	cl, err := brokernats.New(config.NATS{Name: "real", URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	src, err := collectnats.New(collectnats.Options{Cluster: cl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	ev := alerts.NewEvaluator(alerts.StatusOptions{Window: polls})
	var snap *queue.Snapshot
	for range polls {
		time.Sleep(time.Second) // the collector's interval: the rates are per poll apart
		snap = poll(t, src)
		ev.Evaluate(snap)
	}
	c, eu := consumerOf(t, snap, "ORDERS", "worker"), consumerOf(t, snap, "ORDERS", "eu")
	e := c.ETA
	within := func(got, want float64) bool { return math.Abs(got-want) <= want/10 }
	if !e.Rates || !within(e.ConsumeRate, consumeRate) || !within(e.ProduceRate, produceRate) {
		t.Errorf("rates known %v: consume %.1f/s (want %.0f), produce %.1f/s (want %.0f)", e.Rates, e.ConsumeRate, consumeRate, e.ProduceRate, produceRate)
	}
	t.Logf("consume %.2f/s, produce %.2f/s; %d pending", e.ConsumeRate, e.ProduceRate, c.Pending)
	if !e.Known || !e.FallingBehind {
		t.Errorf("ETA %+v: consuming slower than producing is falling behind", e)
	}
	if eu.ETA.Rates || eu.RatesUnknown() == "" {
		t.Errorf("filtered consumer: rates %+v, reason %q; want none, and why", eu.ETA, eu.RatesUnknown())
	}
}
