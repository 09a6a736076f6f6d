package app

import (
	"context"
	"fmt"
	"log/slog"

	brokeroutbox "github.com/queuewatch/queuewatch/brokers/outbox"
	qwcollectors "github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/outbox"
	"github.com/queuewatch/queuewatch/demo"
)

// demoOutbox starts the demo's embedded SQLite outbox at path and returns
// the source that watches it (none when this build cannot) and a func
// that stops it. The outbox needs no server, so it always runs.
func demoOutbox(ctx context.Context, path string, log *slog.Logger) ([]qwcollectors.Source, func(), error) {
	ob, err := demo.StartOutbox(ctx, demo.OutboxOptions{Path: path, Logger: log.With("component", "demo")})
	if err != nil {
		return nil, nil, fmt.Errorf("start demo outbox: %w", err)
	}
	src, err := demoOutboxSource(ob)
	if err != nil {
		log.Warn("demo outbox runs unwatched", "err", err)
		return nil, ob.Close, nil
	}
	return []qwcollectors.Source{src}, ob.Close, nil
}

// demoOutboxSource is the source that polls the demo's outbox through its
// read-only pool: table demo.OutboxTable, created_at demo.OutboxCreatedAt
// (Unix seconds), pending while demo.OutboxPending holds.
func demoOutboxSource(ob *demo.Outbox) (qwcollectors.Source, error) {
	return outbox.New(outbox.Options{
		DB:     brokeroutbox.Wrap(demo.OutboxSource, brokeroutbox.SQLite, ob.ReadDB(), 0),
		Tables: []outbox.Table{{Table: demo.OutboxTable, CreatedAt: demo.OutboxCreatedAt, Pending: demo.OutboxPending}},
	})
}
