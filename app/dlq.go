package app

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	qwcollectors "github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// dlqService opens the audit store (config audit) and builds the DLQ browse and
// replay service over every configured cluster, through access. The
// returned func stops running jobs (they settle: nothing in flight is
// lost), then closes the backends' clients and, last, the store the jobs
// wrote their outcomes to.
func dlqService(ctx context.Context, cfg *config.Config, access opened, log *slog.Logger) (*dlqreplay.Service, func(), error) {
	svc, _, closeAll, err := dlqServiceAndStore(ctx, cfg, access, log, nil, nil)
	return svc, closeAll, err
}

// dlqServiceAndStore is dlqService that also returns the audit store, for
// serve to record offset resets in the same one (the returned func closes
// it after the jobs). It opens the store unless serve already did (store
// not nil: the shared PostgreSQL store, opened before polling); either
// way it closes it, on an error too. finished, when set, is told of every
// job that touched queues (dlqreplay.Options.Finished).
func dlqServiceAndStore(ctx context.Context, cfg *config.Config, access opened, log *slog.Logger, st *store.Store,
	finished func(context.Context, dlqreplay.Touched),
) (*dlqreplay.Service, *store.Store, func(), error) {
	if st == nil {
		var err error
		if st, err = openAudit(ctx, cfg); err != nil {
			return nil, nil, nil, err
		}
	}
	for _, id := range st.Interrupted {
		log.Warn("job was interrupted by a restart", "job", id)
	}
	// On a setup error nothing was written: closing the store can only
	// fail on data it never received.
	closeStore := func() { _ = st.Close() }
	backends, err := buildBackends(access, log)
	if err != nil {
		closeStore()
		return nil, nil, nil, err
	}
	svc, err := dlqreplay.New(dlqreplay.Options{
		Store: st, Backends: backends, NoReplay: noReplay(), MaxReplays: cfg.DLQ.MaxReplays, Rate: cfg.DLQ.ReplayRate, Logger: log,
		Finished: finished,
	})
	if err != nil {
		closeBackends(backends)
		closeStore()
		return nil, nil, nil, err
	}
	return svc, st, func() {
		svc.Close()
		closeBackends(backends)
		if err := st.Close(); err != nil {
			log.Error("close audit store", "err", err)
		}
	}, nil
}

// rereadAfterJobs has the collector read the queues a finished job touched
// again, so that a source read rarely (an SQS account, every few minutes)
// shows the job's effect at once; sources read at every poll need nothing.
func rereadAfterJobs(col *qwcollectors.Collector, log *slog.Logger) func(context.Context, dlqreplay.Touched) {
	return func(ctx context.Context, t dlqreplay.Touched) {
		if err := col.Reread(ctx, t.Broker, t.Cluster, t.Names, t.Job.ID); err != nil {
			log.Warn("re-read the queues a job touched", "job", t.Job.ID, "dlq", t.Job.DLQ, "err", err)
		}
	}
}

// closeBackends closes the backends that hold a client of their own (the
// Kafka backend's admin client).
func closeBackends(backends []dlqreplay.Backend) {
	for _, b := range backends {
		if c, ok := b.(interface{ Close() }); ok {
			c.Close()
		}
	}
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

// noReplay are the registered brokers without a replay backend.
func noReplay() []queue.Broker {
	var out []queue.Broker
	for _, b := range registry {
		if b.noReplay {
			out = append(out, b.name)
		}
	}
	return out
}
