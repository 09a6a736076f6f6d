package app

import (
	"context"
	"errors"
	"log/slog"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/nats"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/offsets"
	offsetsnats "github.com/queuewatch/queuewatch/offsets/nats"
	"github.com/queuewatch/queuewatch/queue"
)

// natsSource is the collector of cluster nc, configured by n.
func natsSource(nc *brokernats.Cluster, n config.NATS, log *slog.Logger) (*nats.Source, error) {
	return nats.New(nats.Options{Cluster: nc, IncludeStream: n.Streams.Match, Logger: log})
}

// natsBroker registers NATS JetStream: the clusters of config nats, each
// reached through one brokers/nats.Cluster, which also runs the
// dead-letter capture and counts what it lost.
var natsBroker = broker{
	name: queue.NATS,
	section: func(cfg *config.Config) []string {
		return names(cfg.NATS, func(n config.NATS) string { return n.Name })
	},
	open: func(cfg *config.Config) (wired, error) {
		clusters, err := eachCluster(cfg.NATS, func(_ int, n config.NATS) (*brokernats.Cluster, error) {
			return brokernats.New(n)
		})
		if err != nil {
			return wired{}, err
		}
		return wired{
			sources: func(log *slog.Logger) ([]collectors.Source, func(), error) {
				return eachSource(cfg.NATS, func(i int, n config.NATS) (*nats.Source, error) {
					return natsSource(clusters[i], n, log)
				})
			},
			backends: func(log *slog.Logger) ([]dlqreplay.Backend, error) { return natsBackends(clusters, log) },
			background: func(ctx context.Context, log *slog.Logger) func() {
				return startNATSCapture(ctx, clusters, log)
			},
			metrics: natsLostCollector{clusters},
			resets: func() ([]offsets.Broker, func(), error) {
				return eachReset(clusters, func(nc *brokernats.Cluster) (*offsetsnats.Resets, error) {
					return offsetsnats.New(nc), nil
				})
			},
		}, nil
	},
	check: checking{
		summary: func(snap *queue.Snapshot) string {
			return counts(len(snap.Streams), "stream", "streams") + ", " + counts(len(snap.Consumers), "consumer", "consumers") + ", " + counts(len(snap.DLQs), "DLQ", "DLQs")
		},
		failures: natsCaptureDown,
	},
}

// natsCaptureDown fails check for dead-letter capture that cannot do its
// work: serve keeps polling and marks it partial, but dead letters are
// being lost unseen, which a check must not pass.
func natsCaptureDown(snap *queue.Snapshot) error {
	for _, p := range snap.Partial {
		if brokernats.IsCaptureDown(p) {
			return errors.New(p)
		}
	}
	return nil
}
