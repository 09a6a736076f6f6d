package app

import (
	"log/slog"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/collectors/nats"
	"github.com/queuewatch/queuewatch/config"
)

// natsSource is the collector of cluster nc, configured by n.
func natsSource(nc *brokernats.Cluster, n config.NATS, log *slog.Logger) (*nats.Source, error) {
	return nats.New(nats.Options{Cluster: nc, IncludeStream: n.Streams.Match, Logger: log})
}
