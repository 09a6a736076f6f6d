package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/queuewatch/queuewatch/config"
)

// Check verifies that every configured source answers and can be read, by
// polling each once. It prints one line per source to w and returns an error
// naming every source that failed.
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
	var errs []error
	for _, s := range sources {
		pctx, cancel := context.WithTimeout(ctx, cfg.PollTimeout)
		start := time.Now()
		snap, err := s.Poll(pctx)
		cancel()
		name := fmt.Sprintf("%s:%s", s.Broker(), s.Cluster())
		if err != nil {
			fmt.Fprintf(w, "FAIL %s: %v\n", name, err)
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		fmt.Fprintf(w, "ok   %s: %d groups, %d queues, %d DLQs in %s\n", name,
			len(snap.Groups), len(snap.Queues), len(snap.DLQs), time.Since(start).Round(time.Millisecond))
		for _, p := range snap.Partial {
			fmt.Fprintf(w, "     partial: %s\n", p)
		}
	}
	return errors.Join(errs...)
}
