package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/standby"
	"github.com/queuewatch/queuewatch/config"
)

// pollLeaseTTL is how long a replica's poll lease on a source stays good
// unrenewed. The holder renews it with every poll, once per poll interval
// (±10% jitter, and a poll may run up to the timeout): three intervals
// ride out a slow poll or two before a standby takes over.
func pollLeaseTTL(cfg *config.Config) time.Duration { return 3 * cfg.PollInterval }

// shareSources makes replicas on one PostgreSQL audit store poll each
// source one at a time (collectors/standby): the lease holder polls the
// broker, the others serve its snapshot. With SQLite, whose store is this
// process's alone, sources are returned as they are. The returned func
// gives the leases up (a standby then takes over at once) and closes the
// store's handle.
func shareSources(ctx context.Context, cfg *config.Config, sources []collectors.Source, log *slog.Logger) ([]collectors.Source, func(), error) {
	if cfg.Audit.Driver != config.AuditPostgres {
		return sources, func() {}, nil
	}
	store, err := openAudit(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	shared := make([]*standby.Source, len(sources))
	out := make([]collectors.Source, len(sources))
	for i, src := range sources {
		shared[i] = standby.Wrap(src, store, store.Replica(), pollLeaseTTL(cfg), log.With("broker", src.Broker(), "cluster", src.Cluster()))
		out[i] = shared[i]
	}
	release := func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		for _, s := range shared {
			if err := s.Release(ctx); err != nil {
				log.Warn("release the poll lease", "broker", s.Broker(), "cluster", s.Cluster(), "err", err)
			}
		}
		_ = store.Close()
	}
	return out, release, nil
}
