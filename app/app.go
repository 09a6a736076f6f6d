package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/queuewatch/queuewatch/alerts"
	qwcollectors "github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/tune"
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
// until ctx is done.
func Run(ctx context.Context, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg := opts.Config
	listen := cfg.Listen
	if opts.Listen != "" {
		listen = opts.Listen
	}
	if err := web.CheckListenAuth(listen, cfg.Auth, opts.InsecureNoAuth); err != nil {
		return err
	}
	access, err := newBrokers(cfg)
	if err != nil {
		return err
	}
	sources, closeSources, err := buildSources(cfg, access, log)
	if err != nil {
		return err
	}
	defer closeSources()
	sources = append(sources, opts.ExtraSources...)

	evaluator := alerts.NewEvaluator(alerts.StatusOptions{Window: cfg.Alerts.Window})
	col := qwcollectors.New(sources, qwcollectors.Options{
		Interval: cfg.PollInterval, Timeout: cfg.PollTimeout, History: cfg.History,
		Evaluator: evaluator, Logger: log,
		Metrics: cfg.Metrics,
	})
	// Polling starts first: the first data waits for no other startup work
	// (the audit store, the listener). Polling is cancelled and waited for
	// before the DLQ tools and the sources close.
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Go(func() { col.Run(ctx) })
	go func() {
		// The poll timeout bounds the first polls; the second bound is for
		// a source that would not honour it.
		select {
		case <-col.WhenReady():
		case <-time.After(cfg.PollTimeout + 30*time.Second):
		case <-ctx.Done():
			return
		}
		tune.Started()
	}()

	dlqs, closeDLQs, err := dlqService(ctx, cfg, access, log)
	if err != nil {
		return err
	}
	defer closeDLQs()
	defer func() { cancel(); wg.Wait() }() // polling stops before the DLQ tools close
	process := processRegistry(opts.Version)
	process.MustRegister(replayedCollector{dlqs})
	process.MustRegister(accessMetrics(access)...)
	stopBackground := startBackground(ctx, access, log)
	defer stopBackground()
	srv := web.New(web.Options{
		Monitor: col, Logger: log, Version: opts.Version, Auth: cfg.Auth,
		DLQs: dlqs, ReplayRate: cfg.DLQ.ReplayRate,
		Metrics: col.Handler(process),
	})

	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", listen, err)
	}
	log.Info("queuewatch serving", "addr", l.Addr().String(), "sources", len(sources), "poll_interval", cfg.PollInterval)
	if opts.Listening != nil {
		opts.Listening(l.Addr().String())
	}

	err = srv.Serve(ctx, l)
	cancel()
	wg.Wait()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
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
