package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// minCheckTimeout is the least time check gives a RabbitMQ source: it
// answers a wrong password only after 3 s, and check must say why it
// cannot log in rather than that the poll timed out.
const minCheckTimeout = 5 * time.Second

// Check verifies that every configured source answers and can be read, by
// polling each once. It prints one line per source to w and returns an error
// naming every source that failed. A RabbitMQ DLQ that dlq_queues names
// and that cannot be read (it does not exist) fails its source.
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
		timeout := cfg.PollTimeout
		if s.Broker() == queue.RabbitMQ {
			timeout = max(timeout, minCheckTimeout)
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		start := time.Now()
		snap, err := s.Poll(pctx)
		cancel()
		name := fmt.Sprintf("%s:%s", s.Broker(), s.Cluster())
		if err == nil {
			err = listedDLQErrors(snap)
		}
		if err == nil {
			err = outboxErrors(snap)
		}
		if err != nil {
			fmt.Fprintf(w, "FAIL %s: %v\n", name, err)
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			if snap != nil {
				// One failed table hides no other table's advice.
				printAdvice(ctx, s, w)
			}
			continue
		}
		if s.Broker() == queue.Outbox {
			fmt.Fprintf(w, "ok   %s: %d tables, %d replication slots in %s\n", name,
				len(snap.OutboxTables), len(snap.Slots), time.Since(start).Round(time.Millisecond))
			printAdvice(ctx, s, w)
			continue
		}
		if s.Broker() == queue.NATS {
			fmt.Fprintf(w, "ok   %s: %d streams, %d consumers, %d DLQs in %s\n", name,
				len(snap.Streams), len(snap.Consumers), len(snap.DLQs), time.Since(start).Round(time.Millisecond))
			printAdvice(ctx, s, w)
		} else {
			fmt.Fprintf(w, "ok   %s: %d groups, %d queues, %d DLQs in %s\n", name,
				len(snap.Groups), len(snap.Queues), len(snap.DLQs), time.Since(start).Round(time.Millisecond))
		}
		for _, p := range snap.Partial {
			fmt.Fprintf(w, "     partial: %s\n", p)
		}
	}
	return errors.Join(errs...)
}

// outboxErrors names each outbox table and replication slot the poll could
// not read: each is configured by name, so each must be readable.
func outboxErrors(snap *queue.Snapshot) error {
	if snap.Broker != queue.Outbox || len(snap.Partial) == 0 {
		return nil
	}
	return errors.New(strings.Join(snap.Partial, "; "))
}

// listedDLQErrors names each RabbitMQ DLQ the config lists that the poll
// could not read.
func listedDLQErrors(snap *queue.Snapshot) error {
	var msgs []string
	for _, d := range snap.DLQs {
		if d.Broker == queue.RabbitMQ && d.Detection == queue.DetectedConfig && d.Err != "" {
			msgs = append(msgs, fmt.Sprintf("queue %s in vhost %s: %s", d.Name, d.VHost, d.Err))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}
