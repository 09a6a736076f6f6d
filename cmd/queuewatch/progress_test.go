package main

import (
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/dlqreplay"
)

// TestProgressLineCounts: the CLI writes counts the way the UI does, with
// thousands separators ("640 / 1,002 moved" in the UI guide).
func TestProgressLineCounts(t *testing.T) {
	j := dlqreplay.Job{
		ID: "r-17", State: dlqreplay.StateRunning,
		Progress: dlqreplay.Progress{ToMove: 12_002, Moved: 10_000, Failed: 1_000, Skipped: 2},
	}
	got := progressLine(j)
	for _, want := range []string{"r-17 [", "11,002/12,002", "moved 10,000", "failed 1,000", "skipped 2", "running"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress line %q lacks %q", got, want)
		}
	}
	if strings.Count(got, "█")+strings.Count(got, "░") != 30 {
		t.Errorf("progress bar of %q is not 30 cells", got)
	}
}
