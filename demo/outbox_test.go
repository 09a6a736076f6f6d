package demo

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// pending reads the outbox the way queuewatch's SQLite query does: pending
// rows and the oldest one's age, from created_at in Unix seconds.
func pending(t *testing.T, o *Outbox) (n int64, age float64) {
	t.Helper()
	var a *float64
	err := o.ReadDB().QueryRowContext(context.Background(),
		`SELECT count(*), ((julianday('now') - 2440587.5) * 86400.0) - min(`+OutboxCreatedAt+`) FROM `+OutboxTable+` WHERE (`+OutboxPending+`)`).Scan(&n, &a)
	if err != nil {
		t.Fatal(err)
	}
	if a != nil {
		age = *a
	}
	return n, age
}

// TestOutboxStallsAndRecovers runs the demo outbox sped up 20×: the relay
// keeps the backlog small, then stalls (a simulated 90 s, 4.5 s here) while
// orders keep coming, so pending rows and the oldest age grow, then
// drains the backlog again.
func TestOutboxStallsAndRecovers(t *testing.T) {
	const speed = 20
	o, err := StartOutbox(t.Context(), OutboxOptions{Path: filepath.Join(t.TempDir(), "outbox.db"), Speed: speed})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()

	deadline := time.Now().Add(30 * time.Second)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if time.Now().After(deadline) {
				n, age := pending(t, o)
				t.Fatalf("timed out waiting for %s (pending %d, oldest %.1fs, stalled %v)", what, n, age, o.Stalled())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Before the first stall (a simulated minute in): rows are written and
	// published within a relay tick or two.
	waitFor("rows written", func() bool {
		var total int64
		if err := o.ReadDB().QueryRow(`SELECT count(*) FROM outbox`).Scan(&total); err != nil {
			t.Fatal(err)
		}
		return total > 0
	})
	if n, age := pending(t, o); o.Stalled() || n > 20 || age > 3 {
		t.Errorf("healthy relay: pending %d, oldest %.1fs, stalled %v", n, age, o.Stalled())
	}

	waitFor("the relay to stall", o.Stalled)
	var peak int64
	var peakAge float64
	waitFor("the stall to end", func() bool {
		n, age := pending(t, o)
		peak, peakAge = max(peak, n), max(peakAge, age)
		return !o.Stalled()
	})
	// 4.5 s of real time at 4 orders per simulated second × 20.
	if peak < 150 || peakAge < 3 {
		t.Errorf("during the stall: peak pending %d, peak oldest %.1fs; want a growing backlog", peak, peakAge)
	}
	waitFor("the backlog to drain", func() bool { n, _ := pending(t, o); return n < 20 })

	// The watcher's pool is read-only.
	if _, err := o.ReadDB().Exec(`DELETE FROM outbox`); err == nil {
		t.Error("the watcher's pool could delete outbox rows")
	}
}
