package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/audit"
	dlqrabbit "github.com/queuewatch/queuewatch/dlqreplay/rabbitmq"
)

// dlqService opens the audit store in data_dir and builds the DLQ browse and
// replay service over every configured cluster, through access. The
// returned func stops running jobs (they settle: nothing in flight is
// lost) and closes the store.
func dlqService(ctx context.Context, cfg *config.Config, access brokers, log *slog.Logger) (*dlqreplay.Service, func(), error) {
	store, err := audit.Open(ctx, cfg.DataDir)
	if err != nil {
		return nil, nil, fmt.Errorf("audit store in %s: %w", cfg.DataDir, err)
	}
	for _, id := range store.Interrupted {
		log.Warn("job was interrupted by a restart", "job", id)
	}
	// On a setup error nothing was written: closing the store can only
	// fail on data it never received.
	closeStore := func() { _ = store.Close() }
	var backends []dlqreplay.Backend
	for _, kc := range access.kafka {
		b, err := kafkaBackend(kc, log)
		if err != nil {
			closeStore()
			return nil, nil, err
		}
		backends = append(backends, b)
	}
	for i, r := range cfg.RabbitMQ {
		b, err := dlqrabbit.New(dlqrabbit.Options{Cluster: access.rabbit[i], Logger: log})
		if err != nil {
			closeStore()
			return nil, nil, fmt.Errorf("rabbitmq %s: %w", r.Name, err)
		}
		backends = append(backends, b)
	}
	natsB, err := natsBackends(access.nats, log)
	if err != nil {
		closeStore()
		return nil, nil, err
	}
	backends = append(backends, natsB...)
	svc, err := dlqreplay.New(dlqreplay.Options{
		Store: store, Backends: backends, MaxReplays: cfg.DLQ.MaxReplays, Rate: cfg.DLQ.ReplayRate, Logger: log,
	})
	if err != nil {
		closeStore()
		return nil, nil, err
	}
	return svc, func() {
		svc.Close()
		if err := store.Close(); err != nil {
			log.Error("close audit store", "err", err)
		}
	}, nil
}

// replayedCollector exports the DLQ service's replay totals.
type replayedCollector struct{ svc *dlqreplay.Service }

var descReplayed = prometheus.NewDesc("queuewatch_dlq_replayed_messages_total",
	"Dead-lettered messages processed by replay, move and delete jobs, by result (ok, failed, skipped as poison).",
	[]string{"broker", "cluster", "vhost", "dlq", "source", "result"}, nil)

func (c replayedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descReplayed }

func (c replayedCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range c.svc.Replayed() {
		ch <- prometheus.MustNewConstMetric(descReplayed, prometheus.CounterValue, float64(r.Value),
			string(r.Broker), r.Cluster, r.VHost, r.DLQ, r.Source, r.Result)
	}
}
