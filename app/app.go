package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/queuewatch/queuewatch/alerts"
	qwcollectors "github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/web"
)

// Options configure Run.
type Options struct {
	Config *config.Config
	// Listen overrides Config.Listen when set.
	Listen  string
	Logger  *slog.Logger
	Version string
	// Listening, when set, receives the address the server listens on once
	// it accepts connections (tests and the demo use it).
	Listening func(addr string)
	// InsecureNoAuth allows auth mode none on a non-loopback address.
	InsecureNoAuth bool
	// ExtraSources are polled beside the configured ones: sources config
	// cannot describe, such as the demo's embedded SQLite outbox.
	ExtraSources []qwcollectors.Source
}

// Run polls every configured source and serves the UI, API and /metrics
// until ctx is done. It runs in two phases: start builds and starts
// everything, then, once ctx is done and the server has stopped, stop ends
// it all in one order (see stop).
func Run(ctx context.Context, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	listen := opts.Config.Listen
	if opts.Listen != "" {
		listen = opts.Listen
	}
	if err := web.CheckListenAuth(listen, opts.Config.Auth, opts.InsecureNoAuth); err != nil {
		return err
	}
	s := &service{log: opts.Logger}
	l, err := s.start(ctx, opts, listen)
	if err != nil {
		s.stop()
		return err
	}
	err = s.srv.Serve(ctx, l) // stop serving: Serve returns once ctx is done and requests finished
	s.stop()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// service is what Run started, held so that stop can end it.
type service struct {
	log *slog.Logger
	srv *web.Server
	// Each stop func is set once its part has started; stop calls those
	// that are set.
	stopPolling, stopBackground, closeResets, closeDLQs, closeSources func()
}

// start builds and starts everything Run serves, and listens. On an error
// what already started stays recorded in s, for stop.
func (s *service) start(ctx context.Context, opts Options, listen string) (net.Listener, error) {
	cfg, log := opts.Config, s.log
	access, err := newBrokers(cfg)
	if err != nil {
		return nil, err
	}
	sources, closeSources, err := buildSources(cfg, access, log)
	if err != nil {
		return nil, err
	}
	s.closeSources = closeSources
	sources = append(sources, opts.ExtraSources...)
	shared, err := sharedStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	sources, release := shareSources(ctx, cfg, shared, sources, log)

	evaluator := alerts.NewEvaluator(alerts.StatusOptions{Window: cfg.Alerts.Window, HysteresisPolls: cfg.Alerts.HysteresisPolls, HeadroomLow: cfg.Alerts.RetentionHeadroomLow})
	if shared != nil {
		// Replicas share onsets from the first poll, as they share polls.
		evaluator.Persist(shared, log)
	}
	col := qwcollectors.New(sources, qwcollectors.Options{
		Interval: cfg.PollInterval, Timeout: cfg.PollTimeout, History: cfg.History,
		Evaluator: evaluator, Logger: log,
		Metrics: cfg.Metrics,
	})
	// Polling starts first: the first data waits for no other startup work
	// (the listener; the audit store too, unless replicas share it and
	// with it their polling). Once it stops, the poll leases go.
	stop := startPolling(ctx, col)
	s.stopPolling = func() { stop(); release() }

	dlqs, store, closeDLQs, err := dlqServiceAndStore(ctx, cfg, access, log, shared, rereadAfterJobs(col, log))
	if err != nil {
		return nil, err
	}
	s.closeDLQs = closeDLQs
	if shared == nil {
		// A store of this process's own opens after polling started: the
		// onsets it kept before a restart are read at each source's next
		// poll, and the older of the same condition wins.
		evaluator.Persist(store, log)
	}
	process := processRegistry(opts.Version)
	process.MustRegister(replayedCollector{dlqs})
	resets, err := newResetService(access, store, process)
	if err != nil {
		return nil, err
	}
	s.closeResets = resets.close
	inspector, err := newInspector(cfg, store, log)
	if err != nil {
		return nil, err
	}
	process.MustRegister(accessMetrics(access)...)
	s.stopBackground = startBackground(ctx, access, log)
	s.srv = web.New(web.Options{
		Monitor: col, Logger: log, Version: opts.Version, Auth: cfg.Auth,
		DLQs: dlqs, ReplayRate: cfg.DLQ.ReplayRate, Offsets: resets,
		Metrics:    col.Handler(process),
		ShardOwner: shardOwners(cfg), Inspect: inspector,
		GrafanaURL: cfg.GrafanaURL, HeadroomLow: cfg.Alerts.RetentionHeadroomLow,
		Filters: store,
	})

	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", listen, err)
	}
	log.Info("queuewatch serving", "addr", l.Addr().String(), "sources", len(sources), "poll_interval", cfg.PollInterval)
	if opts.Listening != nil {
		opts.Listening(l.Addr().String())
	}
	return l, nil
}

// stop ends what start began, after the server stopped serving (no request
// can start a job or read a source any more), in the one order that loses
// nothing and uses nothing already closed:
//
//  1. polling: the collectors stop using the sources;
//  2. background work (NATS dead-letter capture): it stops feeding the
//     capture streams that NATS DLQ jobs read;
//  3. offset resets' clients (an apply runs inside a request, so none is
//     in flight);
//  4. DLQ jobs: they are cancelled and settle (confirmed copies removed
//     from the DLQ, the rest left there), writing their outcome to the
//     audit store; then the replay backends' clients close, and the store
//     last;
//  5. sources: their connections close last, as jobs and capture reach
//     the same clusters through the access they share.
func (s *service) stop() {
	for _, step := range []func(){s.stopPolling, s.stopBackground, s.closeResets, s.closeDLQs, s.closeSources} {
		if step != nil {
			step()
		}
	}
}

// startPolling runs col until the returned func is called (it waits for
// the poll in flight).
func startPolling(ctx context.Context, col *qwcollectors.Collector) func() {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { col.Run(ctx) })
	return func() { cancel(); wg.Wait() }
}

// processRegistry holds the process's own metrics, on a registry of its own
// (never the global one); the collector serves the rest.
func processRegistry(version string) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "queuewatch", Name: "build_info",
		Help: "Build information of the running queuewatch; always 1.",
	}, []string{"version", "goversion"})
	build.WithLabelValues(version, runtime.Version()).Set(1)
	reg.MustRegister(build,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// ErrNoSources is returned when the configuration watches nothing.
var ErrNoSources = errors.New("no sources configured")
