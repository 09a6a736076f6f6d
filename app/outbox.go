package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	brokeroutbox "github.com/queuewatch/queuewatch/brokers/outbox"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/outbox"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// outboxSources creates a source per configured outbox database, each over
// its own access (brokers/outbox); the returned func closes their pools.
// A source that cannot be built (config validation parses the DSN, but a
// Config may skip it, and a DSN's certificate file may be gone by now) is
// that source's error on every poll, never the process's: the other
// sources run.
func outboxSources(cfg *config.Config, log *slog.Logger) ([]collectors.Source, func(), error) {
	var sources []collectors.Source
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, o := range cfg.Outbox {
		s, closeDB, err := outboxSource(o, statementTimeout(cfg.PollTimeout, len(o.Tables)))
		if err != nil {
			log.Error("outbox source cannot start", "outbox", o.Name, "err", err)
			sources = append(sources, brokenSource{broker: queue.Outbox, name: o.Name, err: err})
			continue
		}
		sources = append(sources, s)
		closers = append(closers, func() {
			if err := closeDB(); err != nil {
				log.Warn("close outbox connections", "outbox", o.Name, "err", err)
			}
		})
	}
	return sources, closeAll, nil
}

// outboxSource builds the access to o's database and the source over it;
// the returned func closes the access.
func outboxSource(o config.Outbox, timeout time.Duration) (*outbox.Source, func() error, error) {
	db, err := brokeroutbox.New(o, timeout)
	if err != nil {
		return nil, nil, err
	}
	s, err := outbox.New(outbox.Options{DB: db, Tables: outboxTables(o.Tables), Slots: o.ReplicationSlots})
	if err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	return s, db.Close, nil
}

// brokenSource stands for a configured source that could not be built:
// every poll fails with why, so the error shows on that source (its
// collector_up is 0, its page and check say why) and the others go on.
type brokenSource struct {
	broker queue.Broker
	name   string
	err    error
}

func (b brokenSource) Broker() queue.Broker { return b.broker }
func (b brokenSource) Cluster() string      { return b.name }

func (b brokenSource) Poll(context.Context) (*queue.Snapshot, error) {
	return nil, fmt.Errorf("cannot start: %w", b.err)
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
	return min(max(d, 100*time.Millisecond), brokeroutbox.DefaultStatementTimeout)
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
			return counts(len(snap.OutboxTables), "table", "tables") + ", " + counts(len(snap.Slots), "replication slot", "replication slots")
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
