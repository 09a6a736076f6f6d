package demo

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// commitInterval is how often, in simulated time, healthy groups commit.
	commitInterval = time.Second
	// analyticsRate is analytics-slow's processing rate in records per
	// simulated second, below the events produce rate at every point of its
	// sine wave (40 ± 20), so its lag only ever grows.
	analyticsRate = 15
)

// groupClient builds a client consuming topic as a member of group. Offsets
// are committed explicitly by each service so that its commit behaviour is
// the point of the simulation, not kgo's autocommit.
func (d *Demo) groupClient(log *slog.Logger, group, topic string, opts ...kgo.Opt) (*kgo.Client, error) {
	base := []kgo.Opt{
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}
	return d.newClient(log, append(base, opts...)...)
}

// consume polls cl until ctx ends, hands every batch to handle and commits
// what was polled every commitInterval. A failing batch is logged and
// skipped, as a consumer with a dead-letter topic would.
func (d *Demo) consume(ctx context.Context, log *slog.Logger, cl *kgo.Client, handle func(context.Context, []*kgo.Record) error) error {
	lastCommit := time.Now()
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			log.Warn("fetch failed", "topic", errs[0].Topic, "partition", errs[0].Partition, "err", errs[0].Err)
			if !d.sleep(ctx, time.Second) {
				return ctx.Err()
			}
		}
		if records := fetches.Records(); len(records) > 0 && handle != nil {
			if err := handle(ctx, records); err != nil && ctx.Err() == nil {
				log.Warn("process batch", "err", err)
			}
		}
		if time.Since(lastCommit) >= d.scale(commitInterval) {
			if err := cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
				log.Warn("commit offsets", "err", err)
			}
			lastCommit = time.Now()
		}
	}
}

// runOrdersProcessor is the healthy, keeping-up orders consumer that
// dead-letters the orders it cannot process, as Spring Kafka would.
func (d *Demo) runOrdersProcessor(ctx context.Context, log *slog.Logger) error {
	cl, err := d.groupClient(log, GroupOrdersProcessor, TopicOrders)
	if err != nil {
		return err
	}
	defer cl.Close()
	return d.consume(ctx, log, cl, func(ctx context.Context, records []*kgo.Record) error {
		var dead []*kgo.Record
		for _, r := range records {
			if f := checkOrder(r.Value); f != nil {
				dead = append(dead, springDeadLetter(r, GroupOrdersProcessor, f, time.Now()))
			}
		}
		return produceDeadLetters(ctx, cl, dead)
	})
}

// runPaymentsSink is the Connect-like payments sink that sends records its
// converter rejects to payments.DLQ.
func (d *Demo) runPaymentsSink(ctx context.Context, log *slog.Logger) error {
	cl, err := d.groupClient(log, GroupPaymentsSink, TopicPayments)
	if err != nil {
		return err
	}
	defer cl.Close()
	return d.consume(ctx, log, cl, func(ctx context.Context, records []*kgo.Record) error {
		var dead []*kgo.Record
		for _, r := range records {
			if f := checkPayment(r.Value); f != nil {
				dead = append(dead, connectDeadLetter(r, f, time.Now()))
			}
		}
		return produceDeadLetters(ctx, cl, dead)
	})
}

// produceDeadLetters waits for the dead letters to be acknowledged before the
// batch counts as processed, so a dead letter is never lost behind a commit.
func produceDeadLetters(ctx context.Context, cl *kgo.Client, dead []*kgo.Record) error {
	if len(dead) == 0 {
		return nil
	}
	if err := cl.ProduceSync(ctx, dead...).FirstErr(); err != nil {
		return fmt.Errorf("produce %d dead letters: %w", len(dead), err)
	}
	return nil
}

// runShipping848 is a healthy consumer of orders in a KIP-848 group. kgo
// uses the next-gen protocol only with ServerSideBalancer; GroupProtocol
// merely names the classic protocol type.
func (d *Demo) runShipping848(ctx context.Context, log *slog.Logger) error {
	cl, err := d.groupClient(log, GroupShipping848, TopicOrders, kgo.ServerSideBalancer())
	if err != nil {
		return err
	}
	defer cl.Close()
	return d.consume(ctx, log, cl, nil)
}

// runLedgerReader keeps up with the ledger, seeing only committed
// transactions.
func (d *Demo) runLedgerReader(ctx context.Context, log *slog.Logger) error {
	cl, err := d.groupClient(log, GroupLedgerReader, TopicLedger, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return err
	}
	defer cl.Close()
	return d.consume(ctx, log, cl, nil)
}

// runAnalyticsSlow processes events slower than they are produced, spending
// a fixed time per record, and commits its progress: lag grows steadily.
// It takes whole fetches, which hold records of every partition, so every
// partition progresses, as a real slow consumer's would.
func (d *Demo) runAnalyticsSlow(ctx context.Context, log *slog.Logger) error {
	cl, err := d.groupClient(log, GroupAnalyticsSlow, TopicEvents, kgo.FetchMaxPartitionBytes(64<<10))
	if err != nil {
		return err
	}
	defer cl.Close()
	perRecord := time.Second / analyticsRate
	lastCommit := time.Now()
	for ctx.Err() == nil {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			log.Warn("fetch failed", "topic", errs[0].Topic, "partition", errs[0].Partition, "err", errs[0].Err)
		}
		if !d.sleep(ctx, time.Duration(fetches.NumRecords())*perRecord) {
			break
		}
		if time.Since(lastCommit) >= d.scale(commitInterval) {
			if err := cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
				log.Warn("commit offsets", "err", err)
			}
			lastCommit = time.Now()
		}
	}
	return ctx.Err()
}

// runBillingStopped reads half of the inventory backlog, commits and leaves
// the group for good, leaving an Empty group whose lag grows.
func (d *Demo) runBillingStopped(ctx context.Context, log *slog.Logger) error {
	cl, err := d.groupClient(log, GroupBillingStopped, TopicInventory)
	if err != nil {
		return err
	}
	err = readAndCommit(ctx, cl, inventoryBacklog/2)
	// Closing a classic group member sends LeaveGroup, so the group turns
	// Empty at once instead of after a session timeout.
	cl.Close()
	if err != nil {
		return err
	}
	log.Info("consumer stopped for good; group left empty")
	return nil
}

// readAndCommit polls n records and commits them.
func readAndCommit(ctx context.Context, cl *kgo.Client, n int) error {
	for read := 0; read < n; {
		fetches := cl.PollRecords(ctx, n-read)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		read += fetches.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		return fmt.Errorf("commit before stopping: %w", err)
	}
	return nil
}

// runInventoryStalled commits its first batch of inventory and then stops
// making progress while staying in the group: kgo keeps heartbeating in the
// background, so the group shows a live member whose committed offsets
// never move.
func (d *Demo) runInventoryStalled(ctx context.Context, log *slog.Logger) error {
	cl, err := d.groupClient(log, GroupInventoryStalled, TopicInventory)
	if err != nil {
		return err
	}
	defer cl.Close()
	// Read until every partition has been seen, so that each has a commit
	// that then freezes.
	seen := make(map[int32]bool)
	for read := 0; len(seen) < int(Partitions()[TopicInventory]) && read < inventoryBacklog; {
		fetches := cl.PollRecords(ctx, 50)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fetches.EachRecord(func(r *kgo.Record) { seen[r.Partition] = true })
		read += fetches.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		return fmt.Errorf("first commit: %w", err)
	}
	// Pausing stops kgo from buffering fetches nobody will ever poll.
	cl.PauseFetchTopics(TopicInventory)
	log.Info("consumer stalled after first commit")
	<-ctx.Done()
	return ctx.Err()
}
