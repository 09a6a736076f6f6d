package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/queuewatch/queuewatch/app"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func replay(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay", stderr)
	path := fs.String("config", "queuewatch.yaml", "configuration file")
	dlq := fs.String("dlq", "", `DLQ ID, broker:cluster:vhost:name (e.g. "rabbitmq:main:/:orders.dlq", "kafka:prod::orders.DLT"); required`)
	action := fs.String("action", "replay", "replay, move or delete")
	target := fs.String("to", "", "queue or topic to send to (default: where each message failed)")
	toExchange := fs.Bool("to-original-exchange", false, "RabbitMQ: publish to the original exchange and routing keys")
	limit := fs.Int("limit", 0, "process at most N selected messages (0: all)")
	rate := fs.Float64("rate", 0, "messages per second (0: dlq.replay_rate from the config, negative: unlimited)")
	dryRun := fs.Bool("dry-run", false, "report what would go where; change nothing")
	native := fs.Bool("native", false, "have the broker move the whole DLQ back itself (SQS: a message move task at --rate, at most 500/s): "+
		"everything only, no dry run, no replay stamp, no poison guard; where the broker has it")
	ids := fs.String("ids", "", "comma-separated message IDs to select")
	group := fs.String("group", "", "failure group key to select (from the DLQ page or API)")
	since := fs.String("since", "", "select messages that died at or after this RFC 3339 time")
	until := fs.String("until", "", "select messages that died before this RFC 3339 time")
	where := fs.String("where", "", `select messages for which this CEL expression is true (e.g. 'value.order.id == "123"')`)
	who := fs.String("who", operator(), "operator name for the audit log (default: $USER, the OS user, the hostname)")
	var headers listFlag
	fs.Var(&headers, "header", "select messages with header NAME=VALUE (repeatable)")
	var lf logFlags
	lf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *dlq == "" {
		fmt.Fprintln(stderr, "queuewatch replay: --dlq is required")
		return errUsage
	}
	sel, err := selection(*ids, *group, *since, *until, headers, *limit)
	if err != nil {
		return err
	}
	if sel.Where = *where; sel.Where != "" {
		sel.All = false
	}
	req := dlqreplay.Request{
		DLQ: *dlq, Action: dlqreplay.Action(*action), Selection: sel, DryRun: *dryRun, Rate: *rate, Who: "cli:" + *who,
	}
	if *native {
		req.Mode = dlqreplay.ModeNative
	}
	switch {
	case *toExchange:
		req.Target = dlqreplay.Target{Kind: dlqreplay.TargetOriginalExchange}
	case *target != "":
		req.Target = dlqreplay.Target{Kind: dlqreplay.TargetNamed, Name: *target}
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return err
	}
	log, err := lf.logger(cfg.Log, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	tty := isTerminal(stderr)
	var progress func(dlqreplay.Job)
	if tty {
		progress = func(j dlqreplay.Job) { fmt.Fprint(stderr, "\r"+progressLine(j)) }
	}
	receipt, err := app.Replay(ctx, cfg, req, progress, log)
	if err != nil {
		return err
	}
	if tty {
		fmt.Fprint(stderr, "\r"+progressLine(receipt.Job)+"\n")
	}
	if err := json.NewEncoder(stdout).Encode(summary(receipt)); err != nil {
		return err
	}
	if receipt.Job.State != dlqreplay.StateSucceeded || receipt.Job.Progress.Failed > 0 {
		return fmt.Errorf("job %s %s: %d failed, %d skipped (the failed messages are still in the DLQ)",
			receipt.Job.ID, receipt.Job.State, receipt.Job.Progress.Failed, receipt.Job.Progress.Skipped)
	}
	return nil
}

func selection(ids, group, since, until string, headers []string, limit int) (dlqreplay.Selection, error) {
	sel := dlqreplay.Selection{Group: group, Limit: limit}
	if ids != "" {
		sel.IDs = strings.Split(ids, ",")
	}
	for _, h := range headers {
		k, v, ok := strings.Cut(h, "=")
		if !ok || k == "" {
			return sel, fmt.Errorf("--header %q: want NAME=VALUE", h)
		}
		if sel.Headers == nil {
			sel.Headers = map[string]string{}
		}
		sel.Headers[k] = v
	}
	for _, t := range []struct {
		flag, v string
		to      *time.Time
	}{{"--since", since, &sel.Since}, {"--until", until, &sel.Until}} {
		if t.v == "" {
			continue
		}
		parsed, err := time.Parse(time.RFC3339, t.v)
		if err != nil {
			return sel, fmt.Errorf("%s %q: want an RFC 3339 time like 2026-12-02T15:04:05Z", t.flag, t.v)
		}
		*t.to = parsed
	}
	// No criterion means the whole DLQ, as the flags' help says.
	sel.All = len(sel.IDs) == 0 && sel.Group == "" && len(sel.Headers) == 0 && sel.Since.IsZero() && sel.Until.IsZero()
	return sel, nil
}

// progressLine is one line of the TTY progress bar.
func progressLine(j dlqreplay.Job) string {
	p := j.Progress
	moved, label := p.Moved, "moved"
	if j.DryRun {
		moved, label = p.WouldMove, "would move"
	}
	done := moved + p.Failed + p.Skipped
	const width = 30
	filled := 0
	if p.ToMove > 0 {
		filled = int(min(done*width/p.ToMove, width))
	}
	return fmt.Sprintf("%s [%s%s] %s/%s %s %s, failed %s, skipped %s  %s ",
		j.ID, strings.Repeat("█", filled), strings.Repeat("░", width-filled), queue.ExactCount(done), queue.ExactCount(p.ToMove),
		label, queue.ExactCount(moved), queue.ExactCount(p.Failed), queue.ExactCount(p.Skipped), j.State)
}

// receiptSummary is what replay prints: the job and the outcomes that need
// attention (failed or skipped); the full receipt is in the audit log.
// operator names who runs the command, for the audit log: $USER, else
// the OS user (cron jobs and containers often leave $USER unset), else the
// hostname, so that a CLI job is never recorded as "cli:" alone.
func operator() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "unknown"
}

type receiptSummary struct {
	Job      dlqreplay.Job       `json:"job"`
	Problems []dlqreplay.Outcome `json:"problems,omitempty"`
	// Planned lists every outcome of a dry run: exactly what would go where.
	Planned []dlqreplay.Outcome `json:"planned,omitempty"`
}

func summary(r dlqreplay.Receipt) receiptSummary {
	s := receiptSummary{Job: r.Job}
	for _, o := range r.Outcomes {
		switch {
		case r.Job.DryRun:
			s.Planned = append(s.Planned, o)
		case o.Result == dlqreplay.ResultFailed || o.Result == dlqreplay.ResultSkipped:
			s.Problems = append(s.Problems, o)
		}
	}
	return s
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
