package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// history is how far back the seeded backlog's timestamps reach.
const history = time.Hour

// backlog is how many records Start seeds per topic, and every how many
// records one is poison. 600 orders with every 30th poison and 300 payments
// with every 15th poison give SeededDeadLetters dead letters each.
var backlog = []struct {
	topic       string
	records     int
	poisonEvery int
}{
	{TopicOrders, 600, 30},
	{TopicPayments, 300, 15},
	{TopicEvents, 3000, 0},
	{TopicInventory, inventoryBacklog, 0},
}

// inventoryBacklog is the seeded inventory record count, half of which
// billing-stopped reads before leaving its group.
const inventoryBacklog = 600

// seed writes an hour of history: a backlog on every traffic topic with
// timestamps spread over the last hour, the dead letters the failing
// consumers produced from its poison records, and commits placing
// orders-processor and payments-sink at the end of the backlog they already
// processed. Lag, lag seconds and DLQ depth are therefore visible as soon as
// Start returns.
func (d *Demo) seed(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	log := d.log.With("service", "seed")
	cl, err := d.newClient(log)
	if err != nil {
		return err
	}
	defer cl.Close()

	d.traffic = &traffic{}
	now := time.Now()
	var records, poison []*kgo.Record
	for _, b := range backlog {
		for i := range b.records {
			bad := b.poisonEvery > 0 && i%b.poisonEvery == b.poisonEvery-1
			r := d.traffic.record(b.topic, bad)
			r.Timestamp = now.Add(-history + time.Duration(i)*history/time.Duration(b.records))
			records = append(records, r)
			if bad {
				poison = append(poison, r)
			}
		}
	}
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		return fmt.Errorf("produce backlog: %w", err)
	}
	// ProduceSync filled in each poison record's partition and offset, which
	// the dead letters must point at.
	if err := cl.ProduceSync(ctx, seedDeadLetters(poison)...).FirstErr(); err != nil {
		return fmt.Errorf("produce seeded dead letters: %w", err)
	}
	return d.commitProcessed(ctx, cl)
}

// seedDeadLetters builds the dead letters for the backlog's poison records,
// each published a few seconds (the consumer's retries) after its original.
func seedDeadLetters(poison []*kgo.Record) []*kgo.Record {
	out := make([]*kgo.Record, 0, len(poison))
	for _, r := range poison {
		at := r.Timestamp.Add(time.Duration(2+rand.IntN(28)) * time.Second)
		switch r.Topic {
		case TopicOrders:
			out = append(out, springDeadLetter(r, GroupOrdersProcessor, checkOrder(r.Value), at))
		case TopicPayments:
			out = append(out, connectDeadLetter(r, checkPayment(r.Value), at))
		}
	}
	return out
}

// commitProcessed commits orders-processor and payments-sink at the end of
// their topics, as though they had processed the backlog before the demo
// started.
func (d *Demo) commitProcessed(ctx context.Context, cl *kgo.Client) error {
	adm := kadm.NewClient(cl)
	for group, topic := range map[string]string{
		GroupOrdersProcessor: TopicOrders,
		GroupPaymentsSink:    TopicPayments,
	} {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return fmt.Errorf("list end offsets of %s: %w", topic, err)
		}
		if err := ends.Error(); err != nil {
			return fmt.Errorf("list end offsets of %s: %w", topic, err)
		}
		if err := adm.CommitAllOffsets(ctx, group, ends.Offsets()); err != nil {
			return fmt.Errorf("commit seeded offsets of %s: %w", group, err)
		}
	}
	return d.commitAnalyticsBehind(ctx, adm)
}

// analyticsStartBehind is how far behind the end of each events partition
// analytics-slow starts. Starting near the end, rather than at the seeded
// backlog's large batches, lets its slow progress spread over every
// partition, so it shows as slow (warn) rather than stuck on some.
const analyticsStartBehind = 40

func (d *Demo) commitAnalyticsBehind(ctx context.Context, adm *kadm.Client) error {
	ends, err := adm.ListEndOffsets(ctx, TopicEvents)
	if err != nil {
		return fmt.Errorf("list end offsets of %s: %w", TopicEvents, err)
	}
	offsets := kadm.Offsets{}
	ends.Each(func(o kadm.ListedOffset) {
		offsets.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: max(o.Offset-analyticsStartBehind, 0), LeaderEpoch: -1})
	})
	if err := adm.CommitAllOffsets(ctx, GroupAnalyticsSlow, offsets); err != nil {
		return fmt.Errorf("commit seeded offsets of %s: %w", GroupAnalyticsSlow, err)
	}
	return nil
}
