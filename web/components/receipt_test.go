package components

import (
	"testing"

	"github.com/queuewatch/queuewatch/dlqreplay"
)

// TestDryRunReceiptSaysWouldMove: a dry run's receipt counts what it
// would move, never what it moved (it moved nothing).
func TestDryRunReceiptSaysWouldMove(t *testing.T) {
	dry := dlqreplay.Job{
		Action: dlqreplay.ActionReplay, DryRun: true, DLQ: "rabbitmq:c:/:orders.dlq",
		Progress: dlqreplay.Progress{ToMove: 10, WouldMove: 10},
	}
	if got, want := ReceiptSentence(dry, nil), "Dry run: would replay 10 of 10 messages from orders.dlq"; len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("ReceiptSentence = %q, want it to start %q", got, want)
	}
	if got := MovedLabel(dry); got != "would move" {
		t.Errorf("MovedLabel(dry run) = %q", got)
	}
	done := dry
	done.DryRun, done.Progress = false, dlqreplay.Progress{ToMove: 10, Moved: 9, Failed: 1}
	if got := MovedLabel(done); got != "moved" || movedOrWould(done) != 9 {
		t.Errorf("a real run: %q %d", got, movedOrWould(done))
	}
}
