package main

import (
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/app"
	"github.com/queuewatch/queuewatch/config"
)

func serve(args []string, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	path := fs.String("config", "queuewatch.yaml", "configuration file")
	listen := fs.String("listen", "", "address to serve on (overrides listen)")
	insecure := fs.Bool("insecure-no-auth", false, "allow auth mode none on a non-loopback address")
	var lf logFlags
	lf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return err
	}
	if err := cfg.RequireSources(); err != nil {
		return err
	}
	log, err := lf.logger(cfg.Log, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	return app.Run(ctx, app.Options{
		Config: cfg, Listen: *listen, Logger: log, Version: buildVersion(), InsecureNoAuth: *insecure,
	})
}

func runDemo(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "address to serve the UI and /metrics on")
	rabbit := fs.String("rabbitmq-url", "amqp://guest:guest@127.0.0.1:5672/", "RabbitMQ to create demo queues in, if it answers (\"\" to skip)")
	sqsEndpoint := fs.String("sqs-endpoint", "http://127.0.0.1:9324", "SQS server (ElasticMQ) to create demo queues in, if it answers (\"\" to skip)")
	var lf logFlags
	lf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	log, err := lf.logger(config.Log{Level: "info", Format: "text"}, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	return app.Demo(ctx, app.DemoOptions{
		Listen: *listen, RabbitMQURL: *rabbit, SQSEndpoint: *sqsEndpoint, Logger: log, Version: buildVersion(),
		Listening: func(addr string) {
			fmt.Fprintf(stdout, "\nqueuewatch demo is running: open http://%s/\n  metrics: http://%s/metrics\n  Ctrl-C stops it.\n\n", browsable(addr), browsable(addr))
		},
	})
}

// browsable turns a listen address into one a browser can open.
func browsable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + port
}

func check(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check", stderr)
	path := fs.String("config", "queuewatch.yaml", "configuration file")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ok   config %s\n", *path)
	ctx, stop := signalContext()
	defer stop()
	return app.Check(ctx, cfg, stdout, nil)
}

func rules(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("rules", stderr)
	path := fs.String("config", "", "configuration file (default: built-in thresholds)")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg := config.Default()
	if *path != "" {
		var err error
		if cfg, err = config.Load(*path); err != nil {
			return err
		}
	}
	out, err := alerts.Rules(cfg)
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}
