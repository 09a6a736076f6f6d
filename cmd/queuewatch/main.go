// Command queuewatch is the operations console for asynchronous messaging:
// it polls Kafka consumer groups, RabbitMQ queues, NATS JetStream consumers
// and transactional outboxes, exports lag and
// dead-letter depth as Prometheus metrics and serves a web UI.
//
// Only this package touches signals and os.Exit; everything else runs inside
// app so tests can start it with a context.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/tune"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func main() {
	if len(os.Args) > 1 {
		tune.Apply(os.Args[1])
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `queuewatch — consumer lag, dead-letter queues and safe replay for Kafka, RabbitMQ and NATS JetStream, and the outbox backlog behind them

Usage:
  queuewatch demo    [--listen 127.0.0.1:8080] [--rabbitmq-url URL] [--sqs-endpoint URL]
  queuewatch serve   [--config queuewatch.yaml] [--listen ADDR]
  queuewatch check   --config queuewatch.yaml
  queuewatch replay  --config queuewatch.yaml --dlq ID [--dry-run] [--limit N] [--rate R] [filters]
  queuewatch rules   --config queuewatch.yaml
  queuewatch offsets plan  --config queuewatch.yaml --cluster C --group G --to SPEC [--topic T[:P[,P…]]]… [--out plan.json]
  queuewatch offsets apply --config queuewatch.yaml --plan plan.json
  queuewatch offsets log   --config queuewatch.yaml [--cluster C] [--group G]
  queuewatch version

Run "queuewatch COMMAND -h" for a command's flags.
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	var err error
	switch cmd {
	case "serve":
		err = serve(rest, stderr)
	case "demo":
		err = runDemo(rest, stdout, stderr)
	case "check":
		err = check(rest, stdout, stderr)
	case "rules":
		err = rules(rest, stdout, stderr)
	case "replay":
		err = replay(rest, stdout, stderr)
	case "offsets":
		err = offsetsCmd(rest, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "queuewatch", buildVersion())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "queuewatch: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintf(stderr, "queuewatch %s: %v\n", cmd, err)
	return 1
}

var errUsage = errors.New("usage")

// newFlags returns a flag set whose errors are reported once, by run.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("queuewatch "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	return nil
}

// logFlags adds --log-level and --log-format, which override the config.
type logFlags struct{ level, format string }

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.level, "log-level", "", "debug, info, warn or error (overrides log.level)")
	fs.StringVar(&l.format, "log-format", "", "text or json (overrides log.format)")
}

func (l *logFlags) logger(cfg config.Log, w io.Writer) (*slog.Logger, error) {
	if l.level != "" {
		cfg.Level = l.level
	}
	if l.format != "" {
		cfg.Format = l.format
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.Level)); err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", cfg.Level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch cfg.Format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: want text or json", cfg.Format)
}

// signalContext is cancelled on SIGINT or SIGTERM. A second signal exits at
// once, for when a clean shutdown hangs.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		cancel()
		<-ch
		os.Exit(130)
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
