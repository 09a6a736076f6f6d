package rabbitmq

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestRatesOfARealProducerAndConsumer: an amqp091-go producer publishes 50
// messages a second to a queue and a consumer (prefetch 1) acknowledges
// 20 a second; the queue's consume and produce rates, from the
// message_stats counters of the polls' own /api/queues listing (no extra
// request), are those within 10 %, and with ready messages rising it
// falls behind and warns. Polls come every second for 30 s once a backlog
// shows: the broker refreshes the counters every 5 s, which the rates
// measure between the polls that first saw each refresh.
func TestRatesOfARealProducerAndConsumer(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("rates")
	const name, produceRate, consumeRate, polls = "orders", 50.0, 20.0, 31
	pub := testenv.Channel(t, vh)
	declare(t, pub, name, nil)
	sub := testenv.Channel(t, vh)
	if err := sub.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	deliveries, err := sub.Consume(name, "rates-consumer", false, false, false, false, nil)
	if err != nil {
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
				if err := pub.PublishWithContext(ctx, "", name, false, false, amqp.Publishing{Body: []byte(fmt.Sprint(n))}); err != nil {
					return
				}
			}
		}
	})
	wg.Go(func() {
		n := 0
		for ctx.Err() == nil {
			select {
			case d := <-deliveries:
				for n >= due(consumeRate) && ctx.Err() == nil {
					time.Sleep(5 * time.Millisecond)
				}
				if d.Ack(false) != nil {
					return
				}
				n++
			case <-ctx.Done():
			}
		}
	})

	// A listing every poll: a rate between listings is off by up to the
	// broker's 5 s counter refresh at each end, which a 30 s window of
	// listings 5 s apart would not hold within 10 % (it does over the
	// minutes a 15 s poll interval spans; alerts tests the arithmetic).
	// Depths still come from rabbitmq_prometheus.
	src := newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL, ManagementUsername: "guest", ManagementPassword: "guest"},
		Options{VHosts: []string{vh}, DLQNamePattern: testNamePattern, ListEvery: 1})
	// The window starts once the listing shows a backlog: a window in
	// which ready messages touched zero is healthy whatever the trend.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if q, ok := findQueue(poll(t, src), vh, name); ok && q.Ready > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the management API never showed ready messages")
		}
	}
	ev := alerts.NewEvaluator(alerts.StatusOptions{Window: polls, HysteresisPolls: 1}) // the judgement, not its hysteresis
	var q queue.Queue
	for i := 0; i < polls; i++ {
		time.Sleep(time.Second) // the collector's interval: the rates are per poll apart
		snap := poll(t, src)
		ev.Evaluate(snap)
		var ok bool
		if q, ok = findQueue(snap, vh, name); !ok {
			t.Fatalf("poll %d: no queue %s", i, name)
		}
	}
	e := q.ETA
	within := func(got, want float64) bool { return math.Abs(got-want) <= want/10 }
	if !e.Rates || !within(e.ConsumeRate, consumeRate) || !within(e.ProduceRate, produceRate) {
		t.Errorf("rates known %v: consume %.1f/s (want %.0f), produce %.1f/s (want %.0f)", e.Rates, e.ConsumeRate, consumeRate, e.ProduceRate, produceRate)
	}
	t.Logf("consume %.2f/s, produce %.2f/s; %d ready, %d consumers, status %s %q", e.ConsumeRate, e.ProduceRate, q.Ready, q.Consumers, q.Status, q.StatusReason)
	if !e.Known || !e.FallingBehind {
		t.Errorf("ETA %+v: consuming slower than producing is falling behind", e)
	}
	if q.Status != queue.StatusWarn || q.Consumers != 1 {
		t.Errorf("status %s %q with %d consumers; want warn: ready rising while one consumer keeps up with less than is published", q.Status, q.StatusReason, q.Consumers)
	}
}

// TestStallOfARealConsumerThatFinishesNothing: a consumer with prefetch 2
// takes two of twenty messages and never acknowledges them; once the
// listing shows them unacknowledged, a window of sixteen polls a second
// apart sees neither deliveries nor acknowledgements move while messages
// are ready, and the queue is stall with the sentence that says so. The
// polls between listings take depths from rabbitmq_prometheus and carry
// the last listing's counters: sixteen polls hold listings more than two
// statistics refreshes (10 s) apart, which stall needs.
func TestStallOfARealConsumerThatFinishesNothing(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("stall")
	ch := testenv.Channel(t, vh)
	declare(t, ch, "invoices", nil)
	for i := range 20 {
		if err := ch.PublishWithContext(t.Context(), "", "invoices", false, false, amqp.Publishing{Body: fmt.Appendf(nil, "%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	sub := testenv.Channel(t, vh)
	if err := sub.Qos(2, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Consume("invoices", "stuck", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	src := newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL, ManagementUsername: "guest", ManagementPassword: "guest"}, Options{VHosts: []string{vh}})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if q, ok := findQueue(poll(t, src), vh, "invoices"); ok && q.Unacked == 2 && q.HasCounters && q.Counters.Delivered == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the management API never showed the two deliveries")
		}
	}
	const window = 16
	ev := alerts.NewEvaluator(alerts.StatusOptions{Window: window, HysteresisPolls: 1}) // the judgement, not its hysteresis
	var q queue.Queue
	for range window {
		snap := poll(t, src)
		ev.Evaluate(snap)
		q, _ = findQueue(snap, vh, "invoices")
		time.Sleep(time.Second)
	}
	if q.Status != queue.StatusStall || !strings.HasPrefix(q.StatusReason, "1 consumer attached and nothing delivered or acknowledged") {
		t.Errorf("status %s %q; want stall", q.Status, q.StatusReason)
	}
	t.Logf("%s: %s", q.Status, q.StatusReason)
}
