package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
)

// registry is every broker app wires, in the order their sources, replay
// backends and check lines come. Adding a broker is a folder per layer
// (brokers/, collectors/, dlqreplay/, config/) and one line here; its
// registration, an xBroker in app/<broker>.go, says everything app does
// with it. Shared code in app never names a broker: it reads this table.
// TestRegistrationPoints lists what each registration must have.
//
// app wires only what it builds. A broker's metrics, alert rules,
// dashboard rows and web sections are not in this table: they live in
// collectors/, alerts/, grafana/ and web/ (CONTRIBUTING, "Adding a
// broker").
var registry = []broker{kafkaBroker, rabbitBroker, outboxBroker, natsBroker, sqsBroker, pubsubBroker, kinesisBroker}

// broker is one broker's registration: everything app wires for it.
type broker struct {
	// name is what the broker's sources answer to Broker().
	name queue.Broker
	// section is the broker's config section: the names of its configured
	// clusters (or sources), in config order.
	section func(*config.Config) []string
	// open builds the access to every configured cluster of the broker
	// (addresses, TLS files, credentials; nothing is dialled) and returns
	// what app builds over it. A broker with no cluster configured opens
	// to nothing.
	open func(*config.Config) (wired, error)
	// noReplay declares that the broker has no replay backend (the
	// outbox: its rows are not dead letters), so a missing one is meant.
	noReplay bool
	// check is how `queuewatch check` reports the broker's sources.
	check checking
}

// wired is one broker opened over its configured clusters: the builders
// that share its access.
type wired struct {
	// sources builds a collector source per configured cluster; the
	// returned func closes them.
	sources func(log *slog.Logger) ([]collectors.Source, func(), error)
	// backends builds the replay backends; nil when the broker has none.
	backends func(log *slog.Logger) ([]dlqreplay.Backend, error)
	// background, when set, starts work serve runs beside polling (NATS
	// dead-letter capture) until ctx is done; the returned func stops it
	// and waits for it.
	background func(ctx context.Context, log *slog.Logger) (stop func())
	// metrics, when set, exports the access layer's own counters.
	metrics prometheus.Collector
	// resets, when set, builds the offset-reset access of every configured
	// cluster (Kafka consumer groups); the returned func closes them.
	resets func() ([]offsets.Broker, func(), error)
}

// checking is what check does differently for a broker's sources.
type checking struct {
	// minTimeout is the least time check gives one source to answer; the
	// poll timeout when it is longer.
	minTimeout time.Duration
	// summary is what an ok line says about a successful poll.
	summary func(*queue.Snapshot) string
	// failures, when set, names what a successful poll read that still
	// fails check (something the config names that could not be read).
	failures func(*queue.Snapshot) error
}

// opened is every registered broker opened over cfg, in registry order.
type opened []wired

// newBrokers builds the access to every configured cluster of every
// registered broker; it loads TLS files but does not connect. Each
// cluster's access is built once and shared by its collector and replay
// backend, so polls, browsing and replays connect with the same
// addresses, TLS settings and credentials.
func newBrokers(cfg *config.Config) (opened, error) {
	out := make(opened, 0, len(registry))
	for _, b := range registry {
		w, err := b.open(cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// buildSources creates a source per configured cluster of every broker,
// through access, and returns those this replica's shard polls. The
// returned func closes them all.
func buildSources(cfg *config.Config, access opened, log *slog.Logger) ([]collectors.Source, func(), error) {
	var sources []collectors.Source
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, w := range access {
		s, closeThem, err := w.sources(log)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		sources = append(sources, s...)
		closers = append(closers, closeThem)
	}
	return ownedSources(cfg.Shard, sources), closeAll, nil
}

// buildBackends creates the replay backends of every broker that has
// them, through access.
func buildBackends(access opened, log *slog.Logger) ([]dlqreplay.Backend, error) {
	var backends []dlqreplay.Backend
	for _, w := range access {
		if w.backends == nil {
			continue
		}
		b, err := w.backends(log)
		if err != nil {
			closeBackends(backends)
			return nil, err
		}
		backends = append(backends, b...)
	}
	return backends, nil
}

// startBackground starts every broker's background work; the returned
// func stops it all and waits.
func startBackground(ctx context.Context, access opened, log *slog.Logger) func() {
	var stops []func()
	for _, w := range access {
		if w.background != nil {
			stops = append(stops, w.background(ctx, log))
		}
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// accessMetrics are the access layers' own collectors.
func accessMetrics(access opened) []prometheus.Collector {
	var out []prometheus.Collector
	for _, w := range access {
		if w.metrics != nil {
			out = append(out, w.metrics)
		}
	}
	return out
}

// registration returns the registration of broker name.
func registration(name queue.Broker) (broker, bool) {
	for _, b := range registry {
		if b.name == name {
			return b, true
		}
	}
	return broker{}, false
}

// eachCluster builds one T per configured item of a config section, in
// order, stopping at the first error.
func eachCluster[C, T any](section []C, build func(int, C) (T, error)) ([]T, error) {
	out := make([]T, 0, len(section))
	for i, c := range section {
		t, err := build(i, c)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// closingSource is a source that holds connections until closed.
type closingSource interface {
	collectors.Source
	Close()
}

// eachSource builds a source per configured item of a config section; on
// an error it closes those already built. The returned func closes them.
func eachSource[C any, S closingSource](section []C, build func(int, C) (S, error)) ([]collectors.Source, func(), error) {
	var sources []collectors.Source
	closeAll := func() {
		for _, s := range sources {
			s.(closingSource).Close()
		}
	}
	for i, c := range section {
		s, err := build(i, c)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		sources = append(sources, s)
	}
	return sources, closeAll, nil
}

// names are the names of a config section's items.
func names[C any](section []C, name func(C) string) []string {
	out := make([]string, len(section))
	for i, c := range section {
		out[i] = name(c)
	}
	return out
}
