package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestOffsetResetLease: two Stores on one database (two processes sharing
// a data_dir, or two replicas on one PostgreSQL) hold a group's lease one at a time; a holder renews its own,
// another group is free, a release frees it, and an expired lease is taken
// over.
func TestOffsetResetLease(t *testing.T) {
	forEngines(t, testOffsetResetLease)
}

func testOffsetResetLease(t *testing.T, e engine, db string) {
	ctx := context.Background()
	a, b := e.open(t, db), e.open(t, db)
	defer func() { _ = a.Close(); _ = b.Close() }()
	now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	const ttl = 30 * time.Second

	if err := a.LeaseOffsetReset(ctx, "prod", "billing", "cli:1", now, ttl); err != nil {
		t.Fatal(err)
	}
	err := b.LeaseOffsetReset(ctx, "prod", "billing", "serve:2", now.Add(time.Second), ttl)
	if !errors.Is(err, ErrLeaseHeld) || !strings.Contains(err.Error(), "cli:1") || !strings.Contains(err.Error(), "2026-12-05T09:00:30Z") {
		t.Fatalf("second holder: %v, want ErrLeaseHeld naming cli:1 and its expiry", err)
	}
	for _, other := range [][2]string{{"prod", "mailer"}, {"dev", "billing"}} {
		if err := b.LeaseOffsetReset(ctx, other[0], other[1], "serve:2", now, ttl); err != nil {
			t.Errorf("%s/%s is another group: %v", other[0], other[1], err)
		}
	}
	// A renewal by the holder moves the expiry.
	if err := a.LeaseOffsetReset(ctx, "prod", "billing", "cli:1", now.Add(20*time.Second), ttl); err != nil {
		t.Fatalf("renewal: %v", err)
	}
	if err := b.LeaseOffsetReset(ctx, "prod", "billing", "serve:2", now.Add(40*time.Second), ttl); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("after the renewal to 09:00:50, at 09:00:40: %v", err)
	}
	// A release by someone else frees nothing; the holder's does.
	if err := b.ReleaseOffsetReset(ctx, "prod", "billing", "serve:2"); err != nil {
		t.Fatal(err)
	}
	if err := b.LeaseOffsetReset(ctx, "prod", "billing", "serve:2", now.Add(41*time.Second), ttl); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("released by another holder: %v", err)
	}
	if err := a.ReleaseOffsetReset(ctx, "prod", "billing", "cli:1"); err != nil {
		t.Fatal(err)
	}
	if err := b.LeaseOffsetReset(ctx, "prod", "billing", "serve:2", now.Add(42*time.Second), ttl); err != nil {
		t.Fatalf("after the release: %v", err)
	}
	// serve:2 crashes: its lease expires at 09:01:12 and is taken over.
	if err := a.LeaseOffsetReset(ctx, "prod", "billing", "cli:3", now.Add(72*time.Second), ttl); err != nil {
		t.Fatalf("expired lease: %v", err)
	}
	// The crashed holder's late release leaves the new holder's lease.
	if err := b.ReleaseOffsetReset(ctx, "prod", "billing", "serve:2"); err != nil {
		t.Fatal(err)
	}
	if err := b.LeaseOffsetReset(ctx, "prod", "billing", "serve:4", now.Add(73*time.Second), ttl); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("the late release of an expired holder freed the new one's lease: %v", err)
	}
}

// TestOffsetResetLeaseRace: many holders on two Stores of one database
// race for one group's lease at the same instant; exactly one wins.
func TestOffsetResetLeaseRace(t *testing.T) {
	forEngines(t, testOffsetResetLeaseRace)
}

func testOffsetResetLeaseRace(t *testing.T, e engine, db string) {
	ctx := context.Background()
	stores := []*Store{e.open(t, db), e.open(t, db)}
	defer func() { _ = stores[0].Close(); _ = stores[1].Close() }()
	now := time.Now()
	for round := range 20 {
		var won, held atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				err := stores[i%2].LeaseOffsetReset(ctx, "prod", fmt.Sprint("g", round), fmt.Sprint("h", i), now, time.Minute)
				switch {
				case err == nil:
					won.Add(1)
				case errors.Is(err, ErrLeaseHeld):
					held.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if won.Load() != 1 || held.Load() != 7 {
			t.Fatalf("round %d: %d won, %d refused; want 1 and 7", round, won.Load(), held.Load())
		}
	}
}
