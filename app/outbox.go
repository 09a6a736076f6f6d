package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/outbox"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// outboxSources creates a source per configured outbox database; the
// returned func closes their pools.
func outboxSources(cfg *config.Config, log *slog.Logger) ([]collectors.Source, func(), error) {
	var sources []collectors.Source
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, o := range cfg.Outbox {
		s, err := outbox.New(outbox.Options{
			Name: o.Name, Dialect: outbox.Dialect(o.Driver), DSN: o.DSN,
			Tables: outboxTables(o.Tables), Slots: o.ReplicationSlots,
			StatementTimeout: statementTimeout(cfg.PollTimeout, len(o.Tables)),
			Logger:           log.With("outbox", o.Name),
		})
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		sources = append(sources, s)
		closers = append(closers, s.Close)
	}
	return sources, closeAll, nil
}

func outboxTables(ts []config.OutboxTable) []outbox.Table {
	out := make([]outbox.Table, len(ts))
	for i, t := range ts {
		out[i] = outbox.Table{Table: t.Table, CreatedAt: t.CreatedAt, Pending: t.Pending}
	}
	return out
}

// statementTimeout shares the poll timeout among a source's queries (its
// tables run one after another, then the slots), so that one slow table
// cannot use up the poll, and never allows more than the default.
func statementTimeout(pollTimeout time.Duration, tables int) time.Duration {
	d := pollTimeout / time.Duration(tables+1)
	return min(max(d, 100*time.Millisecond), outbox.DefaultStatementTimeout)
}

// adviser is a source that can tell check how to make its queries cheaper.
type adviser interface {
	Advise(ctx context.Context) ([]string, error)
}

// printAdvice writes a source's advice to w as warnings; advice that
// cannot be had is a warning too, never a failure of check.
func printAdvice(ctx context.Context, s collectors.Source, w io.Writer) {
	a, ok := s.(adviser)
	if !ok {
		return
	}
	warns, err := a.Advise(ctx)
	for _, msg := range warns {
		fmt.Fprintf(w, "     warn: %s\n", msg)
	}
	if err != nil {
		fmt.Fprintf(w, "     warn: %v\n", err)
	}
}

// outboxBroker registers the outbox: the sources of config outbox. It has
// no shared access layer (each source opens its own pool) and no replay
// backend (its rows are not dead letters).
var outboxBroker = broker{
	name: queue.Outbox,
	section: func(cfg *config.Config) []string {
		return names(cfg.Outbox, func(o config.Outbox) string { return o.Name })
	},
	open: func(cfg *config.Config) (wired, error) {
		return wired{
			sources: func(log *slog.Logger) ([]collectors.Source, func(), error) { return outboxSources(cfg, log) },
		}, nil
	},
	noReplay: true,
	check: checking{
		summary: func(snap *queue.Snapshot) string {
			return fmt.Sprintf("%d tables, %d replication slots", len(snap.OutboxTables), len(snap.Slots))
		},
		failures: outboxErrors,
	},
}

// outboxErrors names each outbox table and replication slot the poll could
// not read: each is configured by name, so each must be readable.
func outboxErrors(snap *queue.Snapshot) error {
	if len(snap.Partial) == 0 {
		return nil
	}
	return errors.New(strings.Join(snap.Partial, "; "))
}
