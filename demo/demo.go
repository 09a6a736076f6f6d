package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Topic names the demo creates.
const (
	TopicOrders      = "orders"
	TopicPayments    = "payments"
	TopicEvents      = "events"
	TopicInventory   = "inventory"
	TopicLedger      = "ledger"
	TopicOrdersDLT   = "orders.DLT"
	TopicPaymentsDLQ = "payments.DLQ"
)

// Consumer group names the demo's simulated services use.
const (
	GroupOrdersProcessor  = "orders-processor"
	GroupPaymentsSink     = "payments-sink"
	GroupAnalyticsSlow    = "analytics-slow"
	GroupBillingStopped   = "billing-stopped"
	GroupInventoryStalled = "inventory-stalled"
	GroupShipping848      = "shipping-848"
	GroupLedgerReader     = "ledger-reader"
)

// LedgerTransactionalID is the transactional id of the ledger writer.
const LedgerTransactionalID = "ledger-writer"

// PaymentsConnectorName is the Kafka Connect connector name payments-sink
// writes into its dead letters' __connect.errors.connector.name header.
const PaymentsConnectorName = "payments-jdbc-sink"

// SeededDeadLetters is how many dead letters Start puts in each DLQ topic
// before the services start.
const SeededDeadLetters = 20

// Partitions maps each demo topic to its partition count.
func Partitions() map[string]int32 {
	return map[string]int32{
		TopicOrders:      6,
		TopicPayments:    3,
		TopicEvents:      12,
		TopicInventory:   3,
		TopicLedger:      3,
		TopicOrdersDLT:   3,
		TopicPaymentsDLQ: 1,
	}
}

// Groups lists every consumer group the demo creates.
func Groups() []string {
	return []string{
		GroupOrdersProcessor, GroupPaymentsSink, GroupAnalyticsSlow, GroupBillingStopped,
		GroupInventoryStalled, GroupShipping848, GroupLedgerReader,
	}
}

// Options configures Start.
type Options struct {
	// Ports are the three broker ports; nil or zeros pick free ports.
	Ports []int
	// Logger receives service errors and lifecycle events; nil discards them.
	Logger *slog.Logger
	// Speed multiplies the pace of the simulation (intervals shrink, rates
	// grow); tests use it to see minutes of behaviour in seconds. Values <= 0
	// mean 1.
	Speed float64
}

// Demo is a running embedded cluster with its simulated services.
type Demo struct {
	cluster *kfake.Cluster
	brokers []string
	log     *slog.Logger
	speed   float64
	// traffic is written by seed and then owned by the producer service.
	traffic *traffic

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// numBrokers is the size of the embedded cluster.
const numBrokers = 3

// Start starts the cluster, creates the topics, seeds an hour of history and
// starts every simulated service. It returns once the topics exist and the
// services are running; the services stop when ctx is cancelled or Close is
// called, whichever comes first. The caller must call Close.
func Start(ctx context.Context, opts Options) (*Demo, error) {
	if len(opts.Ports) != 0 && len(opts.Ports) != numBrokers {
		return nil, fmt.Errorf("demo needs %d ports, got %d", numBrokers, len(opts.Ports))
	}
	d := &Demo{log: opts.Logger, speed: opts.Speed}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.speed <= 0 {
		d.speed = 1
	}
	cluster, err := kfake.NewCluster(d.clusterOpts(opts.Ports)...)
	if err != nil {
		return nil, fmt.Errorf("start embedded kafka: %w", err)
	}
	d.cluster = cluster
	d.brokers = cluster.ListenAddrs()

	svcCtx, cancel := context.WithCancel(ctx)
	d.cancel = cancel
	if err := d.seed(ctx); err != nil {
		d.Close()
		return nil, fmt.Errorf("seed demo history: %w", err)
	}
	d.startServices(svcCtx)
	d.log.Info("demo kafka started", "brokers", d.brokers, "speed", d.speed)
	return d, nil
}

func (d *Demo) clusterOpts(ports []int) []kfake.Opt {
	opts := []kfake.Opt{
		kfake.NumBrokers(numBrokers),
		kfake.ClusterID("queuewatch-demo"),
		// KIP-848 members heartbeat at the broker-chosen interval; Kafka's 5 s
		// default would make shipping-848 slow to pick up assignments when the
		// demo runs sped up in tests.
		kfake.BrokerConfigs(map[string]string{
			"group.consumer.heartbeat.interval.ms": strconv.Itoa(int(d.scale(2*time.Second) / time.Millisecond)),
		}),
	}
	if len(ports) > 0 {
		opts = append(opts, kfake.Ports(ports...))
	}
	for topic, n := range Partitions() {
		opts = append(opts, kfake.SeedTopics(n, topic))
	}
	return opts
}

// Brokers returns the "127.0.0.1:port" address of every broker.
func (d *Demo) Brokers() []string {
	return append([]string(nil), d.brokers...)
}

// Close stops every service, waits for their goroutines to return and then
// closes the cluster. It is safe to call more than once.
func (d *Demo) Close() {
	d.closeOnce.Do(func() {
		if d.cancel != nil {
			d.cancel()
		}
		d.wg.Wait()
		d.cluster.Close()
		d.log.Info("demo kafka stopped")
	})
}

// scale shrinks a simulated duration by the speed factor, with a floor so a
// large speed never turns a loop into a busy spin.
func (d *Demo) scale(v time.Duration) time.Duration {
	s := time.Duration(float64(v) / d.speed)
	return max(s, 10*time.Millisecond)
}

// sleep waits for the scaled duration v and reports whether ctx is still live.
func (d *Demo) sleep(ctx context.Context, v time.Duration) bool {
	t := time.NewTimer(d.scale(v))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// goService runs one simulated service on its own goroutine, logging the
// error that ends it unless the demo is shutting down.
func (d *Demo) goService(ctx context.Context, name string, run func(ctx context.Context, log *slog.Logger) error) {
	log := d.log.With("service", name)
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		if err := run(ctx, log); err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
			log.Error("demo service stopped", "err", err)
		}
	}()
}

func (d *Demo) startServices(ctx context.Context) {
	d.goService(ctx, "producer", d.runProducer)
	d.goService(ctx, GroupOrdersProcessor, d.runOrdersProcessor)
	d.goService(ctx, GroupPaymentsSink, d.runPaymentsSink)
	d.goService(ctx, GroupAnalyticsSlow, d.runAnalyticsSlow)
	d.goService(ctx, GroupBillingStopped, d.runBillingStopped)
	d.goService(ctx, GroupInventoryStalled, d.runInventoryStalled)
	d.goService(ctx, GroupShipping848, d.runShipping848)
	d.goService(ctx, LedgerTransactionalID, d.runLedgerWriter)
	d.goService(ctx, GroupLedgerReader, d.runLedgerReader)
	d.goService(ctx, GroupFulfilmentShare, d.runShareWorkers)
}

// newClient builds a kgo client for one service, logging kgo's warnings and
// errors through the service logger.
func (d *Demo) newClient(log *slog.Logger, opts ...kgo.Opt) (*kgo.Client, error) {
	base := []kgo.Opt{
		kgo.SeedBrokers(d.brokers...),
		kgo.WithLogger(kgoLogger{log: log}),
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("new kafka client: %w", err)
	}
	return cl, nil
}
