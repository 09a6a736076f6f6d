package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/offsets"
)

// TestResetStore is the reset service over the store, as serve wires it:
// a plan issued through one replica is found through another, the answers
// of a plan_id the store does not keep are the API's own errors, a lease
// another replica holds refuses with offsets.ErrBusy naming it, and a
// pause kept by one is seen by the other once newer than the poll.
func TestResetStore(t *testing.T) {
	forEngines(t, testResetStore)
}

func testResetStore(t *testing.T, e engine, db string) {
	ctx := context.Background()
	sa, sb := e.open(t, db), e.open(t, db)
	defer func() { _ = sa.Close(); _ = sb.Close() }()
	a, b := offsets.NewService(nil, ResetStore{sa}, nil), offsets.NewService(nil, ResetStore{sb}, nil)

	plan := offsets.Plan{ID: "p1", Broker: "kafka", Cluster: "prod", Group: "billing", To: offsets.Spec{Kind: offsets.Earliest}}
	if err := a.KeepPlan(ctx, plan); err != nil {
		t.Fatal(err)
	}
	if got, err := b.IssuedPlan(ctx, "p1", "prod", "billing"); err != nil || got.ID != "p1" || got.Group != "billing" {
		t.Fatalf("issued through b: %+v %v", got, err)
	}
	if _, err := b.IssuedPlan(ctx, "p1", "prod", "other"); err != offsets.ErrUnknownPlan { //nolint:errorlint // the API answers this very error
		t.Errorf("another group's plan: %v, want ErrUnknownPlan itself", err)
	}
	if err := b.DropPlan(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.IssuedPlan(ctx, "p1", "prod", "billing"); !errors.Is(err, offsets.ErrUnknownPlan) {
		t.Errorf("dropped plan: %v", err)
	}

	now := time.Now()
	if err := (ResetStore{sa}).Lease(ctx, "prod", "billing", "replica a", now, time.Minute); err != nil {
		t.Fatal(err)
	}
	err := (ResetStore{sb}).Lease(ctx, "prod", "billing", "replica b", now, time.Minute)
	if !errors.Is(err, offsets.ErrBusy) || !strings.Contains(err.Error(), "replica a") {
		t.Errorf("lease held by a, taken by b: %v", err)
	}

	polled := now.Add(-time.Second)
	if err := (ResetStore{sa}).PutPause(ctx, offsets.KeptPause{
		Broker: "nats", Cluster: "js", Group: "ORDERS/billing", Paused: true, Until: now.Add(time.Hour), At: now,
	}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if st, ok, err := b.RecentPause(ctx, "nats", "js", "ORDERS/billing", polled); err != nil || !ok || !st.Paused {
		t.Errorf("pause through a, seen by b before a poll: %+v %v %v", st, ok, err)
	}
	if _, ok, err := b.RecentPause(ctx, "nats", "js", "ORDERS/billing", now.Add(time.Second)); err != nil || ok {
		t.Errorf("pause older than the poll: %v %v", ok, err)
	}
}
