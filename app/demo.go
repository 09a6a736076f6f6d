package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/demo"
)

// DemoOptions configure Demo.
type DemoOptions struct {
	Listen string
	// RabbitMQURL is where demo RabbitMQ queues are created if a broker
	// answers; "" skips RabbitMQ.
	RabbitMQURL string
	// KafkaPorts pins the embedded brokers' ports; nil picks free ports.
	KafkaPorts []int
	Logger     *slog.Logger
	Version    string
	Listening  func(addr string)
}

// demoPollInterval is shorter than the production default so a first-time
// user sees numbers move within seconds.
const demoPollInterval = 5 * time.Second

// Demo starts an embedded Kafka cluster with simulated services and serves
// queuewatch against it until ctx is done.
func Demo(ctx context.Context, opts DemoOptions) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d, err := demo.Start(ctx, demo.Options{Ports: opts.KafkaPorts, Logger: log.With("component", "demo")})
	if err != nil {
		return fmt.Errorf("start demo kafka: %w", err)
	}
	defer d.Close()
	log.Info("demo kafka running", "brokers", d.Brokers())

	cfg := config.Default()
	cfg.PollInterval = demoPollInterval
	cfg.PollTimeout = demoPollInterval
	// The demo has a transactional topic read by a read_committed group;
	// on its other topics the last stable offset equals the high watermark.
	cfg.Kafka = []config.Kafka{{Name: "demo", Brokers: d.Brokers(), Isolation: config.IsolationReadCommitted}}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("demo config: %w", err)
	}
	return Run(ctx, Options{
		Config: cfg, Listen: opts.Listen, Logger: log, Version: opts.Version, Listening: opts.Listening,
	})
}
