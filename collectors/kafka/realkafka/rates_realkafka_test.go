package realkafka

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/queue"
)

// TestRatesOfARealProducerAndConsumer: a producer writes 50 records a
// second and a franz-go consumer group member reads and commits 20 a
// second; the group's consume and produce rates, from the offsets of six
// polls a second apart (no extra broker request), are those within 10 %.
func TestRatesOfARealProducerAndConsumer(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	topic, group := b.topic(1), "rates-"+fmt.Sprint(time.Now().UnixNano())
	const produceRate, consumeRate = 50.0, 20.0
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	prod, err := kgo.NewClient(kgo.SeedBrokers(b.node.Addr()), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	cons, err := kgo.NewClient(kgo.SeedBrokers(b.node.Addr()), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cons.Close)
	// Each loop keeps its count at rate × elapsed time, whatever the
	// scheduler's delays: the rates are known, not hoped for.
	start := time.Now()
	due := func(rate float64) int { return int(rate * time.Since(start).Seconds()) }
	wg.Go(func() {
		for n := 0; ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
			for ; n < due(produceRate); n++ {
				if err := prod.ProduceSync(ctx, kgo.StringRecord(fmt.Sprint(n))).FirstErr(); err != nil {
					return
				}
			}
		}
	})
	wg.Go(func() {
		for n := 0; ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
			if want := due(consumeRate) - n; want > 0 {
				recs := cons.PollRecords(ctx, want).Records()
				if err := cons.CommitRecords(ctx, recs...); err != nil {
					return
				}
				n += len(recs)
			}
		}
	})

	src := b.source(false, group)
	ev := alerts.NewEvaluator(alerts.StatusOptions{Window: 6})
	var g *queue.ConsumerGroup
	for polls := 0; polls < 6; {
		time.Sleep(time.Second) // the collector's interval: the rates are per poll apart
		snap := poll(t, src)
		ev.Evaluate(snap)
		if len(snap.Groups) == 1 && len(snap.Groups[0].Partitions) == 1 && snap.Groups[0].Partitions[0].HasCommit {
			polls++
			g = &snap.Groups[0]
		}
	}
	e := g.ETA
	within := func(got, want float64) bool { return math.Abs(got-want) <= want/10 }
	if !e.Rates || !within(e.ConsumeRate, consumeRate) || !within(e.ProduceRate, produceRate) {
		t.Errorf("rates known %v: consume %.1f/s (want %.0f), produce %.1f/s (want %.0f)", e.Rates, e.ConsumeRate, consumeRate, e.ProduceRate, produceRate)
	}
	t.Logf("consume %.2f/s, produce %.2f/s", e.ConsumeRate, e.ProduceRate)
	if !e.Known || !e.FallingBehind {
		t.Errorf("ETA %+v: consuming slower than producing is falling behind", e)
	}
}
