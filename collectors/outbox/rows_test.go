package outbox

import (
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestPostgresOneRowPending: one pending row is "1 row", in the status
// sentence of a healthy table and of a stalled one.
func TestPostgresOneRowPending(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutbox)
	pgInsert(t, db, 1, 300)
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: db.DSN, Tables: []Table{pgTable}})
	ev := alerts.NewEvaluator(alerts.StatusOptions{Window: 3})
	var snap *queue.Snapshot
	for i := range 4 { // a full window, and a second poll for the stall to show
		snap = poll(t, s)
		ev.Evaluate(snap)
		if ot := snap.OutboxTables[0]; i == 0 && !strings.HasPrefix(ot.StatusReason, "1 row pending, the oldest ") {
			t.Errorf("first poll: %q, want 1 row pending", ot.StatusReason)
		}
	}
	if ot := snap.OutboxTables[0]; ot.Status != queue.StatusStall || !strings.HasPrefix(ot.StatusReason, "1 row pending and none published since ") {
		t.Errorf("stalled: %s %q, want 1 row pending", ot.Status, ot.StatusReason)
	}
}
