package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
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
	// SQSEndpoint is where demo SQS queues are created if an SQS server
	// (ElasticMQ) answers; "" skips SQS.
	SQSEndpoint string
	// KafkaPorts pins the embedded brokers' ports; nil picks free ports.
	KafkaPorts []int
	Logger     *slog.Logger
	Version    string
	Listening  func(addr string)
}

// demoPollInterval is shorter than the production default so a first-time
// user sees numbers move within seconds.
const demoPollInterval = 5 * time.Second

// Demo starts an embedded Kafka cluster and an embedded NATS JetStream
// server with simulated services and serves queuewatch against them until
// ctx is done.
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

	// The demo's audit log (replays of its dead letters) lives as long as
	// the demo does.
	dataDir, err := os.MkdirTemp("", "queuewatch-demo-")
	if err != nil {
		return fmt.Errorf("demo data dir: %w", err)
	}
	defer func() {
		if err := os.RemoveAll(dataDir); err != nil {
			log.Warn("remove demo data dir", "dir", dataDir, "err", err)
		}
	}()

	extra, closeOutbox, err := demoOutbox(ctx, filepath.Join(dataDir, "outbox.db"), log)
	if err != nil {
		return err
	}
	defer closeOutbox()

	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.PollInterval = demoPollInterval
	cfg.PollTimeout = demoPollInterval
	// The demo has a transactional topic read by a read_committed group;
	// on its other topics the last stable offset equals the high watermark.
	cfg.Kafka = []config.Kafka{{Name: "demo", Brokers: d.Brokers(), Isolation: config.IsolationReadCommitted}}
	if opts.RabbitMQURL != "" {
		r, err := demo.StartRabbitMQ(ctx, opts.RabbitMQURL, log.With("component", "demo"))
		if err != nil {
			log.Warn("no RabbitMQ demo queues: broker not reachable; continuing without RabbitMQ", "url", redact(opts.RabbitMQURL), "err", err)
		} else {
			defer r.Close()
			// Only the demo's vhost: a shared broker's other vhosts are
			// none of the demo's business.
			cfg.RabbitMQ = []config.RabbitMQ{{
				Name: "demo", URL: opts.RabbitMQURL,
				ManagementURL: managementURL(opts.RabbitMQURL), VHosts: []string{r.VHost()},
			}}
			log.Info("demo rabbitmq queues running", "url", redact(opts.RabbitMQURL))
		}
	}
	if opts.SQSEndpoint != "" {
		closeSQS := demoSQS(ctx, cfg, opts.SQSEndpoint, log)
		defer closeSQS()
	}
	n, err := demo.StartNATS(ctx, demo.NATSOptions{Logger: log.With("component", "demo")})
	if err != nil {
		return fmt.Errorf("start demo nats: %w", err)
	}
	defer n.Close()
	// Capture is on, as a NATS user would turn it on to see dead letters.
	cfg.NATS = []config.NATS{{
		Name: "demo", URL: n.URL(),
		DeadLetters: config.NATSDeadLetters{Capture: true, Stream: config.DefaultNATSDeadLetterStream},
	}}
	log.Info("demo nats running", "url", n.URL())
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("demo config: %w", err)
	}
	return Run(ctx, Options{
		Config: cfg, Listen: opts.Listen, Logger: log, Version: opts.Version, Listening: opts.Listening,
		ExtraSources: extra,
	})
}

// demoSQS creates the demo's SQS queues on the server at endpoint and
// watches them as the account "demo", or logs how to start a server when
// none answers. The returned func deletes the queues.
func demoSQS(ctx context.Context, cfg *config.Config, endpoint string, log *slog.Logger) func() {
	s, err := demo.StartSQS(ctx, demo.SQSOptions{Endpoint: endpoint, Logger: log.With("component", "demo")})
	if err != nil {
		log.Warn("no SQS demo queues: nothing answers; start ElasticMQ with `make elasticmq` (see docs/sqs.md) or pass --sqs-endpoint", "endpoint", endpoint, "err", err)
		return func() {}
	}
	// queuewatch reads SQS with the AWS SDK's default credential chain;
	// a local server checks none, so dummy ones do when the user has none.
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
		_ = os.Setenv("AWS_ACCESS_KEY_ID", "demo")
		_ = os.Setenv("AWS_SECRET_ACCESS_KEY", "demo")
	}
	// Read every poll, not every 4 minutes: a local server bills nothing.
	cfg.SQS = []config.SQS{{
		Name: "demo", Region: demo.SQSRegion, Endpoint: endpoint,
		Queues: config.SQSQueues{Prefix: s.Prefix()}, PollInterval: demoPollInterval,
	}}
	log.Info("demo sqs queues running", "endpoint", endpoint)
	return s.Close
}

// managementURL guesses the management API next to an AMQP broker: same
// host, the plugin's default port 15672 (15671 for amqps).
func managementURL(amqpURL string) string {
	u, err := url.Parse(amqpURL)
	if err != nil {
		return ""
	}
	scheme, port := "http", "15672"
	if u.Scheme == "amqps" {
		scheme, port = "https", "15671"
	}
	return scheme + "://" + net.JoinHostPort(u.Hostname(), port)
}

// redact hides the password in a URL for logs.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable url)"
	}
	return u.Redacted()
}
