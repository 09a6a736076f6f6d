package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/prometheus/client_golang/prometheus"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/audit"
	dlqrabbit "github.com/queuewatch/queuewatch/dlqreplay/rabbitmq"
)

// dlqService opens the audit store in data_dir and builds the DLQ browse and
// replay service over every configured cluster; kafkas is the access to
// each of cfg.Kafka, in order. The returned func stops running jobs (they
// settle: nothing in flight is lost) and closes the store.
func dlqService(ctx context.Context, cfg *config.Config, kafkas []*brokerkafka.Cluster, log *slog.Logger) (*dlqreplay.Service, func(), error) {
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
	for _, kc := range kafkas {
		b, err := kafkaBackend(kc, log)
		if err != nil {
			closeStore()
			return nil, nil, err
		}
		backends = append(backends, b)
	}
	for _, r := range cfg.RabbitMQ {
		b, err := dlqrabbit.New(dlqrabbit.Options{
			Cluster: r.Name, URL: r.URL, ManagementURL: managementURLWithCredentials(r), Logger: log,
		})
		if err != nil {
			closeStore()
			return nil, nil, fmt.Errorf("rabbitmq %s: %w", r.Name, err)
		}
		backends = append(backends, b)
	}
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

// managementURLWithCredentials puts the management credentials into the
// URL, the form the replay backend takes.
func managementURLWithCredentials(r config.RabbitMQ) string {
	if r.ManagementURL == "" {
		return ""
	}
	u, err := url.Parse(r.ManagementURL)
	if err != nil {
		return ""
	}
	user, pass := r.ManagementCredentials()
	u.User = url.UserPassword(user, pass)
	return u.String()
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
