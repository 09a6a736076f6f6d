package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// Check verifies that every configured source answers and can be read, by
// polling each once. It prints one line per source to w and returns an error
// naming every source that failed. What else fails a source, how long it
// may take and what its ok line says are its broker's (registry); for
// example a RabbitMQ DLQ that dlq_queues names and that cannot be read
// fails its source. A sharded replica checks only the clusters its shard
// polls, and says which those are.
func Check(ctx context.Context, cfg *config.Config, w io.Writer, log *slog.Logger) error {
	if err := cfg.RequireSources(); err != nil {
		return err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
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
	printShard(cfg, w)
	var errs []error
	for _, s := range sources {
		if err := checkSource(ctx, cfg.PollTimeout, s, w); err != nil {
			errs = append(errs, err)
		}
	}
	actx, cancel := context.WithTimeout(ctx, cfg.PollTimeout)
	defer cancel()
	if err := checkAudit(actx, cfg, w); err != nil {
		errs = append(errs, err)
	}
	if err := checkDecoding(actx, cfg, w); err != nil {
		errs = append(errs, err)
	}
	if err := checkIdentity(actx, cfg, w); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkSource polls s once and writes its line (and its advice and partial
// failures) to w; the error names s.
func checkSource(ctx context.Context, timeout time.Duration, s collectors.Source, w io.Writer) error {
	name := fmt.Sprintf("%s:%s", s.Broker(), s.Cluster())
	b, ok := registration(s.Broker())
	if !ok {
		// Only an extra source could be unregistered; sources built from
		// the config come from the registry.
		return fmt.Errorf("%s: no registration for broker %s", name, s.Broker())
	}
	pctx, cancel := context.WithTimeout(ctx, max(timeout, b.check.minTimeout))
	start := time.Now()
	snap, err := s.Poll(pctx)
	cancel()
	if err == nil && b.check.failures != nil {
		err = b.check.failures(snap)
	}
	if err != nil {
		fmt.Fprintf(w, "FAIL %s: %v\n", name, err)
		if snap != nil {
			// One failed table hides no other table's advice.
			printAdvice(ctx, s, w)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	fmt.Fprintf(w, "ok   %s: %s in %s\n", name, b.check.summary(snap), time.Since(start).Round(time.Millisecond))
	printAdvice(ctx, s, w)
	for _, p := range snap.Partial {
		fmt.Fprintf(w, "     partial: %s\n", p)
	}
	return nil
}

// counts is n with its noun, for check's ok lines: "1 table", "2 tables".
func counts(n int, one, many string) string {
	return strconv.Itoa(n) + " " + queue.Plural(n, one, many)
}
