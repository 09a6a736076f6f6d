package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/standby"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/store"
)

// pollLeaseTTL is how long a replica's poll lease on a source stays good
// unrenewed. The holder renews it every third of that: three intervals
// ride out a slow store before a standby takes over.
func pollLeaseTTL(cfg *config.Config) time.Duration { return 3 * cfg.PollInterval }

// sharedStore opens the PostgreSQL audit store before polling starts,
// since the replicas on it share their polling (shareSources); nil with
// SQLite. serve then hands it to the DLQ service, which closes it.
func sharedStore(ctx context.Context, cfg *config.Config) (*store.Store, error) {
	if cfg.Audit.Driver != config.AuditPostgres {
		return nil, nil
	}
	return openAudit(ctx, cfg)
}

// shareSources makes replicas on one shared store poll each source one at
// a time (collectors/standby): the lease holder polls the broker, the
// others serve its snapshot. Without a shared store (nil) the sources are
// returned as they are. The returned func gives the leases up, so that a
// standby takes over at once: call it once polling stopped.
func shareSources(ctx context.Context, cfg *config.Config, st *store.Store, sources []collectors.Source, log *slog.Logger) ([]collectors.Source, func()) {
	if st == nil {
		return sources, func() {}
	}
	shared := make([]*standby.Source, len(sources))
	out := make([]collectors.Source, len(sources))
	for i, src := range sources {
		shared[i] = standby.Wrap(src, st, st.Replica(), pollLeaseTTL(cfg), log.With("broker", src.Broker(), "cluster", src.Cluster()))
		out[i] = shared[i]
	}
	return out, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		for _, s := range shared {
			if err := s.Release(ctx); err != nil {
				log.Warn("release the poll lease", "broker", s.Broker(), "cluster", s.Cluster(), "err", err)
			}
		}
	}
}
