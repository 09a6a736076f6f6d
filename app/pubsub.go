package app

import (
	"context"
	"fmt"
	"log/slog"

	brokerpubsub "github.com/queuewatch/queuewatch/brokers/pubsub"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/pubsub"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	dlqpubsub "github.com/queuewatch/queuewatch/dlqreplay/pubsub"
	"github.com/queuewatch/queuewatch/queue"
)

// pubsubBroker registers Google Cloud Pub/Sub: the projects of config
// pubsub, each reached through one brokers/pubsub.Cluster, and their
// replay backends (dlqreplay/pubsub).
var pubsubBroker = broker{
	name: queue.PubSub,
	section: func(cfg *config.Config) []string {
		return names(cfg.PubSub, func(p config.PubSub) string { return p.Name })
	},
	open: func(cfg *config.Config) (wired, error) {
		// A project whose access cannot be built is that project's error
		// on every poll, never the process's.
		clusters := make([]*brokerpubsub.Cluster, len(cfg.PubSub))
		errs := make([]error, len(cfg.PubSub))
		for i, p := range cfg.PubSub {
			clusters[i], errs[i] = brokerpubsub.New(p)
		}
		return wired{
			sources: func(log *slog.Logger) ([]collectors.Source, func(), error) {
				return pubsubSources(cfg, clusters, errs, log)
			},
			backends: func(log *slog.Logger) ([]dlqreplay.Backend, error) { return pubsubBackends(clusters, log), nil },
		}, nil
	},
	check: checking{summary: pubsubSummary},
}

// pubsubBackends are the replay backends of the projects whose access and
// client could be built, each with a client of its own; the DLQs of the
// others answer that there is no such project.
func pubsubBackends(clusters []*brokerpubsub.Cluster, log *slog.Logger) []dlqreplay.Backend {
	var out []dlqreplay.Backend
	for _, c := range clusters {
		if c == nil {
			continue
		}
		b, err := dlqpubsub.New(context.Background(), dlqpubsub.Options{
			Cluster: c.Name(), Project: c.Project(), ClientOptions: c.ClientOptions(), Logger: log,
		})
		if err != nil {
			log.Error("pubsub project cannot replay", "pubsub", c.Name(), "err", err)
			continue
		}
		out = append(out, b)
	}
	return out
}

// pubsubSources builds a source per configured project over its access,
// or a brokenSource saying why the access could not be built. Closing
// them closes the projects' clients.
func pubsubSources(cfg *config.Config, clusters []*brokerpubsub.Cluster, errs []error, log *slog.Logger) ([]collectors.Source, func(), error) {
	sources := make([]collectors.Source, 0, len(cfg.PubSub))
	var built []*pubsub.Source
	for i, p := range cfg.PubSub {
		if errs[i] != nil {
			log.Error("pubsub project cannot start", "pubsub", p.Name, "err", errs[i])
			sources = append(sources, brokenSource{broker: queue.PubSub, name: p.Name, err: errs[i]})
			continue
		}
		src, err := pubsub.New(pubsub.Options{
			Cluster: clusters[i], Include: p.Subscriptions.Match,
			Interval: p.Interval(), Tick: cfg.PollInterval, Logger: log,
		})
		if err != nil {
			return nil, nil, err
		}
		sources, built = append(sources, src), append(built, src)
	}
	return sources, func() {
		for _, s := range built {
			s.Close()
		}
	}, nil
}

// pubsubSummary is check's ok line for a Pub/Sub project: what was found,
// the traps, and, with Cloud Monitoring on, what reading it costs a month
// at its interval, since Google bills every call.
func pubsubSummary(snap *queue.Snapshot) string {
	lints := 0
	for i := range snap.PubSubSubscriptions {
		lints += len(snap.PubSubSubscriptions[i].Lints)
	}
	s := counts(len(snap.PubSubSubscriptions), "subscription", "subscriptions") + ", " + counts(len(snap.DLQs), "DLQ", "DLQs") +
		", " + counts(lints, "configuration trap", "configuration traps")
	p := snap.PubSub
	if p == nil {
		return s
	}
	if !p.Monitoring {
		return s + "; backlog unknown (monitoring.enabled is off), DLQ depths counted"
	}
	perRead := len(brokerpubsub.MonitoringMetrics)
	calls, usd := queue.PubSubMonitoringMonthlyCost(perRead, p.ReadEvery)
	return fmt.Sprintf("%s; Cloud Monitoring: %s a read every %s: about %s calls, $%.2f a month at $%.2f per 1,000 (first million a month free)",
		s, counts(perRead, "call", "calls"), p.ReadEvery, queue.ExactCount(calls), usd, queue.PubSubMonitoringPricePerThousandCalls)
}
