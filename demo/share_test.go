package demo

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestShareWorkers: the demo's share group has its two workers sharing the
// six orders partitions, and its backlog builds in the slow half of the
// cycle and drains in the fast half, so the demo shows a share group with
// lag that moves.
func TestShareWorkers(t *testing.T) {
	d, err := Start(t.Context(), Options{Speed: testSpeed})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer d.Close()
	adm := newTestAdmin(t, d)
	defer adm.Close()

	eventually(t, "two workers share the orders partitions", func() error {
		gs, err := adm.DescribeShareGroups(t.Context(), GroupFulfilmentShare)
		if err != nil {
			return err
		}
		g := gs[GroupFulfilmentShare]
		assigned := 0
		for _, m := range g.Members {
			for _, ps := range m.Assignment {
				assigned += len(ps)
			}
		}
		if g.Err != nil || g.GroupState != "Stable" || len(g.Members) != shareMembers || assigned != 6 {
			return fmt.Errorf("state %s, %d members, %d partitions assigned, err %w", g.GroupState, len(g.Members), assigned, g.Err)
		}
		return nil
	})
	// A whole cycle is 12 s at test speed: the backlog peaks near its
	// middle and is drained before its end.
	var peak int64
	for deadline := time.Now().Add(2 * shareCycle / testSpeed); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		lag := shareLag(t, adm)
		peak = max(peak, lag)
		if peak >= 200 && lag < peak/4 {
			t.Logf("share group lag peaked at %d, now %d", peak, lag)
			return
		}
	}
	t.Fatalf("the share group's lag never built up and drained: peak %d, now %d", peak, shareLag(t, adm))
}

// shareLag is the share group's total lag as the broker reports it.
func shareLag(t *testing.T, adm *kadm.Client) int64 {
	t.Helper()
	os, err := adm.DescribeShareGroupOffsets(t.Context(), GroupFulfilmentShare)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	os[GroupFulfilmentShare].Offsets.Each(func(o kadm.ShareOffset) {
		if o.Lag > 0 {
			total += o.Lag
		}
	})
	return total
}
