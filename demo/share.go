package demo

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// GroupFulfilmentShare is the demo's Kafka share group (KIP-932): workers
// sharing the orders topic record by record, as a queue.
const GroupFulfilmentShare = "fulfilment-workers"

const (
	// shareMembers is how many workers share the orders topic.
	shareMembers = 2
	// shareSlowRate and shareFastRate are each worker's rate in records per
	// simulated second in the two halves of shareCycle: together below the
	// orders produce rate (30 ± 15) in the first, so a backlog builds,
	// and well above it in the second, so it drains.
	shareSlowRate, shareFastRate = 8, 40
	shareCycle                   = 2 * time.Minute
	// shareReleaseRate is the share of good orders a worker gives back
	// (a transient failure): the broker redelivers them.
	shareReleaseRate = 0.05
)

// runShareWorkers runs the share group's workers until ctx ends.
func (d *Demo) runShareWorkers(ctx context.Context, log *slog.Logger) error {
	start := time.Now()
	errs := make(chan error, shareMembers)
	for i := range shareMembers {
		go func() {
			errs <- d.runShareWorker(ctx, log.With("member", i), fmt.Sprintf("fulfilment-worker-%d", i+1), start)
		}()
	}
	var first error
	for range shareMembers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// runShareWorker is one member: it accepts the orders it processes,
// rejects the poison ones (the broker archives them and keeps no copy)
// and releases a few good ones for redelivery, at the rate of the
// cycle's phase.
func (d *Demo) runShareWorker(ctx context.Context, log *slog.Logger, clientID string, start time.Time) error {
	cl, err := d.newClient(log, kgo.ShareGroup(GroupFulfilmentShare), kgo.ConsumeTopics(TopicOrders),
		kgo.ShareMaxRecords(50), kgo.ClientID(clientID))
	if err != nil {
		return err
	}
	defer cl.Close()
	for ctx.Err() == nil {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			log.Warn("share fetch failed", "topic", errs[0].Topic, "partition", errs[0].Partition, "err", errs[0].Err)
			if !d.sleep(ctx, time.Second) {
				break
			}
		}
		for _, r := range fetches.Records() {
			switch {
			case checkOrder(r.Value) != nil:
				r.Ack(kgo.AckReject)
			case rand.Float64() < shareReleaseRate:
				r.Ack(kgo.AckRelease)
			default:
				r.Ack(kgo.AckAccept)
			}
		}
		rate := shareFastRate
		if d.sinceScaled(start)%shareCycle < shareCycle/2 {
			rate = shareSlowRate
		}
		if !d.sleep(ctx, time.Duration(fetches.NumRecords())*time.Second/time.Duration(rate)) {
			break
		}
	}
	return ctx.Err()
}

// sinceScaled is the simulated time since start.
func (d *Demo) sinceScaled(start time.Time) time.Duration {
	return time.Duration(float64(time.Since(start)) * d.speed)
}
