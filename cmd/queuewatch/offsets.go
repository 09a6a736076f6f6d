package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/queuewatch/queuewatch/app"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/store"
)

const offsetsUsage = `Usage:
  queuewatch offsets plan  --config F --cluster C --group G --to SPEC [--topic T[:P[,P…]]]… [--out plan.json]
  queuewatch offsets plan  --config F --cluster C --share-group G --to SPEC [--topic …]… [--out plan.json]
  queuewatch offsets apply --config F --plan plan.json
  queuewatch offsets log   --config F [--cluster C] [--group G] [--limit N]

plan prints what a reset would do, as JSON on stdout (and in --out), and changes nothing.
apply commits a plan, refused unless the group is Empty or Dead and no offset moved since
the plan (then re-plan); every apply, refusals included, is recorded in the audit store in
data_dir, and log lists them newest first as JSON. SPEC is one of:
  earliest                    the log start of each partition
  latest                      the log end (skip everything not yet read)
  timestamp:<RFC 3339>        the first record at or after the time, e.g. timestamp:2026-12-05T09:00:00Z
  shift:<±N>                  N records from the committed offset, e.g. shift:-1000
  offset:<N>                  offset N of one partition (name it with --topic T:P)
  group:<other group>         the other group's committed offsets, where it has them
A Kafka share group (--share-group) has a start offset per partition instead of a
committed offset: it takes earliest, latest, timestamp and offset, as kafka-share-groups does.
`

// offsetsCmd is `queuewatch offsets plan|apply`.
func offsetsCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, offsetsUsage)
		return errUsage
	}
	switch args[0] {
	case "plan":
		return offsetsPlan(args[1:], stdout, stderr)
	case "apply":
		return offsetsApply(args[1:], stdout, stderr)
	case "log":
		return offsetsLog(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, offsetsUsage)
		return nil
	}
	fmt.Fprintf(stderr, "queuewatch offsets: unknown subcommand %q\n\n%s", args[0], offsetsUsage)
	return errUsage
}

func offsetsPlan(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("offsets plan", stderr)
	path := fs.String("config", "queuewatch.yaml", "configuration file")
	cluster := fs.String("cluster", "", "cluster name in the config; required")
	group := fs.String("group", "", "consumer group to reset (on a NATS cluster a JetStream consumer, <stream>/<consumer>); this or --share-group is required")
	shareGroup := fs.String("share-group", "", "Kafka share group whose start offsets to reset, instead of --group")
	to := fs.String("to", "", "where to move the group: earliest, latest, timestamp:<RFC 3339>, shift:<±N>, offset:<N> or group:<other>; required")
	out := fs.String("out", "", "also write the plan to this file, for offsets apply")
	timeout := fs.Duration("timeout", 30*time.Second, "give up on the brokers after this long")
	var topics listFlag
	fs.Var(&topics, "topic", "limit the plan to topic T, or to partitions T:P[,P…] (repeatable; default: every topic the group has commits on)")
	if err := parse(fs, args); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"--cluster", *cluster}, {"--group or --share-group", *group + *shareGroup}, {"--to", *to}} {
		if f.v == "" {
			fmt.Fprintf(stderr, "queuewatch offsets plan: %s is required\n\n%s", f.name, offsetsUsage)
			return errUsage
		}
	}
	if *group != "" && *shareGroup != "" {
		fmt.Fprintf(stderr, "queuewatch offsets plan: give --group or --share-group, not both\n\n%s", offsetsUsage)
		return errUsage
	}
	spec, err := offsets.ParseSpec(*to)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	req := offsets.Request{Group: *group, To: spec}
	if *shareGroup != "" {
		req.Group, req.Kind = *shareGroup, offsets.KindShare
	}
	for _, t := range topics {
		ts, err := offsets.ParseTopicScope(t)
		if err != nil {
			return fmt.Errorf("--topic: %w", err)
		}
		req.Topics = append(req.Topics, ts)
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	plan, err := app.PlanOffsets(ctx, cfg, *cluster, req)
	if err != nil {
		return err
	}
	js, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		return err
	}
	js = append(js, '\n')
	if *out != "" {
		if err := os.WriteFile(*out, js, 0o600); err != nil {
			return err
		}
	}
	if isTerminal(stderr) {
		planTable(stderr, plan)
	}
	_, err = stdout.Write(js)
	return err
}

func offsetsApply(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("offsets apply", stderr)
	path := fs.String("config", "queuewatch.yaml", "configuration file")
	planPath := fs.String("plan", "", "plan file written by offsets plan --out; required")
	who := fs.String("who", operator(), "operator name for the audit log (default: $USER, the OS user, the hostname)")
	timeout := fs.Duration("timeout", 30*time.Second, "give up on the brokers after this long")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *planPath == "" {
		fmt.Fprintf(stderr, "queuewatch offsets apply: --plan is required\n\n%s", offsetsUsage)
		return errUsage
	}
	raw, err := os.ReadFile(*planPath)
	if err != nil {
		return err
	}
	var plan offsets.Plan
	if err := json.Unmarshal(raw, &plan); err != nil {
		return fmt.Errorf("plan %s: %w", *planPath, err)
	}
	if plan.ID == "" || plan.Group == "" || plan.Cluster == "" {
		return fmt.Errorf("plan %s: not a plan (no plan_id, cluster or group); write one with offsets plan --out", *planPath)
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	receipt, err := app.ApplyOffsets(ctx, cfg, plan, "cli:"+*who)
	if receipt.PlanID != "" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if eerr := enc.Encode(receipt); eerr != nil {
			return errors.Join(err, eerr)
		}
	}
	return err
}

func offsetsLog(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("offsets log", stderr)
	path := fs.String("config", "queuewatch.yaml", "configuration file")
	cluster := fs.String("cluster", "", "only this cluster's resets")
	group := fs.String("group", "", "only this group's resets")
	limit := fs.Int("limit", 100, "at most this many, newest first")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return err
	}
	resets, err := app.OffsetResets(context.Background(), cfg, *cluster, *group, *limit)
	if err != nil {
		return err
	}
	if resets == nil {
		resets = []store.OffsetReset{}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(resets)
}

// planTable writes the plan for people: a row per partition and the totals.
func planTable(w io.Writer, p offsets.Plan) {
	fmt.Fprintf(w, "plan %s: %sgroup %s on %s (%s, %d member(s)) to %s\n", p.ID, kindPrefix(p.Kind), p.Group, p.Cluster, p.GroupState, len(p.Members), p.To)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCURRENT\tTARGET\tΔ\tRE-PROCESS\tSKIP\tLAG AFTER\tTARGET TIME\t")
	for _, pp := range p.Partitions {
		ts := "-"
		switch {
		case pp.TargetTimestamp != nil:
			ts = pp.TargetTimestamp.Format(time.RFC3339)
		case pp.TimestampNote == offsets.NoteEndOfLog:
			ts = "end of log"
		case pp.TimestampNote != "":
			ts = "unknown"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t\n", pp.Topic, pp.Partition, opt(pp.Current), opt(pp.Target),
			signed(pp.Delta), pp.Reprocess, pp.Skip, pp.LagAfter, ts)
	}
	_ = tw.Flush()
	t := p.Totals
	fmt.Fprintf(w, "%d of %d partitions change: re-process %d, skip %d, lag after %d\n", t.Changed, t.Partitions, t.Reprocess, t.Skip, t.LagAfter)
	for _, warn := range p.Warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
	if p.ApplyRefused != "" {
		fmt.Fprintln(w, "apply will be refused:", p.ApplyRefused)
	}
}

func opt(o *int64) string {
	if o == nil {
		return "-"
	}
	return strconv.FormatInt(*o, 10)
}

func signed(o *int64) string {
	if o == nil {
		return "-"
	}
	return fmt.Sprintf("%+d", *o)
}

// kindPrefix names a plan's kind of group before "group": "share group g".
func kindPrefix(kind string) string {
	if kind == "" {
		return ""
	}
	return kind + " "
}
