package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestOffsetPlans: a plan kept by one Store (a replica) is read by another
// on the same database, of its own cluster and group only; it expires
// after the TTL, is dropped after its apply, replaced when issued again,
// and the table keeps no more than the bound.
func TestOffsetPlans(t *testing.T) {
	forEngines(t, testOffsetPlans)
}

func testOffsetPlans(t *testing.T, e engine, db string) {
	ctx := context.Background()
	a, b := e.open(t, db), e.open(t, db)
	defer func() { _ = a.Close(); _ = b.Close() }()
	now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	const ttl, maxPlans = 15 * time.Minute, 5
	plan := func(id, group string, at time.Time) OffsetPlan {
		return OffsetPlan{
			ID: id, Broker: "kafka", Cluster: "prod", Group: group,
			Plan: json.RawMessage(fmt.Sprintf(`{"id":%q,"group":%q}`, id, group)), Created: at,
		}
	}

	if err := a.PutOffsetPlan(ctx, plan("p1", "billing", now), ttl, maxPlans); err != nil {
		t.Fatal(err)
	}
	got, err := b.OffsetPlan(ctx, "p1", "prod", "billing", now.Add(ttl), ttl)
	if err != nil || got.Broker != "kafka" || string(got.Plan) != `{"id":"p1","group":"billing"}` || !got.Created.Equal(now) {
		t.Fatalf("the other store's read at the TTL: %+v, %v", got, err)
	}
	for _, tc := range []struct{ id, cluster, group string }{
		{"nope", "prod", "billing"}, {"p1", "prod", "mailer"}, {"p1", "dev", "billing"},
	} {
		if _, err := b.OffsetPlan(ctx, tc.id, tc.cluster, tc.group, now, ttl); !errors.Is(err, ErrNoPlan) {
			t.Errorf("plan %s of %s/%s: %v, want ErrNoPlan", tc.id, tc.cluster, tc.group, err)
		}
	}
	// Past the TTL it is expired once, then gone.
	if _, err := b.OffsetPlan(ctx, "p1", "prod", "billing", now.Add(ttl+time.Millisecond), ttl); !errors.Is(err, ErrPlanExpired) {
		t.Fatalf("past the TTL: %v, want ErrPlanExpired", err)
	}
	if _, err := a.OffsetPlan(ctx, "p1", "prod", "billing", now, ttl); !errors.Is(err, ErrNoPlan) {
		t.Fatalf("an expired plan after its expiry was answered: %v, want ErrNoPlan", err)
	}

	// Issued again, a plan's ID is the same and its clock starts over.
	if err := a.PutOffsetPlan(ctx, plan("p2", "billing", now), ttl, maxPlans); err != nil {
		t.Fatal(err)
	}
	if err := b.PutOffsetPlan(ctx, plan("p2", "billing", now.Add(10*time.Minute)), ttl, maxPlans); err != nil {
		t.Fatal(err)
	}
	if _, err := a.OffsetPlan(ctx, "p2", "prod", "billing", now.Add(20*time.Minute), ttl); err != nil {
		t.Fatalf("a plan issued again 10 minutes later, read 10 minutes after that: %v", err)
	}
	// Applied, it is dropped for every store.
	if err := b.DropOffsetPlan(ctx, "p2"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.OffsetPlan(ctx, "p2", "prod", "billing", now.Add(20*time.Minute), ttl); !errors.Is(err, ErrNoPlan) {
		t.Fatalf("a dropped plan: %v, want ErrNoPlan", err)
	}
	if err := a.DropOffsetPlan(ctx, "p2"); err != nil {
		t.Fatalf("dropping a plan twice: %v", err)
	}

	// Expired plans go when a plan is kept; past the bound the oldest go.
	start := now.Add(time.Hour)
	if err := a.PutOffsetPlan(ctx, plan("old", "billing", start.Add(-ttl-time.Second)), ttl, maxPlans); err != nil {
		t.Fatal(err)
	}
	for i := range maxPlans + 2 {
		s := []*Store{a, b}[i%2]
		if err := s.PutOffsetPlan(ctx, plan(fmt.Sprint("n", i), "billing", start.Add(time.Duration(i)*time.Millisecond)), ttl, maxPlans); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := a.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM offset_plans`).Scan(&n); err != nil || n != maxPlans {
		t.Fatalf("%d plans kept (%v), want the bound %d", n, err, maxPlans)
	}
	for i := range maxPlans + 2 {
		_, err := b.OffsetPlan(ctx, fmt.Sprint("n", i), "prod", "billing", start, ttl)
		if kept := i >= 2; kept != (err == nil) {
			t.Errorf("plan n%d: %v; the 2 oldest should be gone, the %d newest kept", i, err, maxPlans)
		}
	}
	if err := a.PutOffsetPlan(ctx, OffsetPlan{ID: "bad", Plan: json.RawMessage(`{`)}, ttl, maxPlans); err == nil {
		t.Error("a plan that is not JSON was kept")
	}
}
