package app

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/demo"
	"github.com/queuewatch/queuewatch/queue"
)

// TestDemoOutbox: the demo's outbox runs without any server, its order
// service writes rows, and the source the demo wires in (when this build
// has one) reads its table.
func TestDemoOutbox(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox.db")
	sources, stop, err := demoOutbox(t.Context(), path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	eventually(t, "outbox rows written", func() bool {
		var n int
		return db.QueryRow(`SELECT count(*) FROM `+demo.OutboxTable).Scan(&n) == nil && n > 0
	})
	switch len(sources) {
	case 0: // this build cannot watch it; demoOutbox logged so
	case 1:
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		snap, err := sources[0].Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if sources[0].Broker() != queue.Outbox || sources[0].Cluster() != demo.OutboxSource ||
			len(snap.OutboxTables) != 1 || snap.OutboxTables[0].Table != demo.OutboxTable || snap.OutboxTables[0].Err != "" {
			t.Errorf("demo outbox source read %+v", snap.OutboxTables)
		}
	default:
		t.Errorf("%d demo outbox sources", len(sources))
	}
}
