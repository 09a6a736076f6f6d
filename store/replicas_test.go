package store

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/dlqreplay"
)

func runningJob(id, dlq string) dlqreplay.Job {
	return dlqreplay.Job{ID: id, DLQ: dlq, Action: dlqreplay.ActionReplay, State: dlqreplay.StateRunning, Created: time.Now()}
}

// TestLeasesHoldOneJobPerDLQ: two replicas on one store race for a DLQ;
// the loser learns the winner's job, takes the lease once the winner
// released it or let it expire, and never while it is renewed.
func TestLeasesHoldOneJobPerDLQ(t *testing.T) { forEngines(t, testLeasesHoldOneJobPerDLQ) }

func testLeasesHoldOneJobPerDLQ(t *testing.T, e engine, db string) {
	ctx := context.Background()
	a, b := e.open(t, db), e.open(t, db)
	defer func() { _, _ = a.Close(), b.Close() }()
	const dlq = "sqs:c::orders-dlq"
	if holder, ok, err := a.AcquireLease(ctx, dlq, "ja"); err != nil || !ok || holder != "ja" {
		t.Fatalf("a acquire = %q %v %v", holder, ok, err)
	}
	if holder, ok, err := b.AcquireLease(ctx, dlq, "jb"); err != nil || ok || holder != "ja" {
		t.Fatalf("b acquire while a holds = %q %v %v; want refused naming ja", holder, ok, err)
	}
	if holder, err := b.LeaseHolder(ctx, dlq); holder != "ja" || err != nil {
		t.Fatalf("b sees holder %q %v; want ja", holder, err)
	}
	// Renewed past the TTL: still a's.
	for range 3 {
		time.Sleep(testLeaseTTL / 2)
		if err := a.RenewLeases(ctx, "ja"); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, _ := b.AcquireLease(ctx, dlq, "jb"); ok {
		t.Fatal("b took a renewed lease")
	}
	if err := a.ReleaseLeases(ctx, "ja"); err != nil {
		t.Fatal(err)
	}
	if holder, err := b.LeaseHolder(ctx, dlq); holder != "" || err != nil {
		t.Fatalf("holder after release = %q %v", holder, err)
	}
	if _, ok, err := b.AcquireLease(ctx, dlq, "jb"); !ok || err != nil {
		t.Fatalf("b after a released: %v %v", ok, err)
	}
	// b dies holding it: a takes it after the TTL, not before.
	if _, ok, _ := a.AcquireLease(ctx, dlq, "ja2"); ok {
		t.Fatal("a took b's fresh lease")
	}
	time.Sleep(testLeaseTTL + 50*time.Millisecond)
	if _, ok, err := a.AcquireLease(ctx, dlq, "ja2"); !ok || err != nil {
		t.Fatalf("a after b's lease expired: %v %v", ok, err)
	}
}

// TestLeaseRaceHasOneWinner: many replicas ask for one DLQ at once;
// exactly one gets it.
func TestLeaseRaceHasOneWinner(t *testing.T) { forEngines(t, testLeaseRaceHasOneWinner) }

func testLeaseRaceHasOneWinner(t *testing.T, e engine, db string) {
	stores := make([]*Store, 6)
	for i := range stores {
		stores[i] = e.open(t, db)
		defer func() { _ = stores[i].Close() }()
	}
	var wg sync.WaitGroup
	won := make([]bool, len(stores))
	for i, s := range stores {
		wg.Go(func() {
			_, ok, err := s.AcquireLease(context.Background(), "rabbitmq:c:/:q", string(rune('a'+i)))
			if err != nil {
				t.Error(err)
			}
			won[i] = ok
		})
	}
	wg.Wait()
	if n := len(slices.DeleteFunc(won, func(w bool) bool { return !w })); n != 1 {
		t.Fatalf("%d replicas won the lease, want 1", n)
	}
}

// TestCancelFromAnotherReplica: b asks, a (the owner) sees the request;
// a job that is not running cannot be cancelled.
func TestCancelFromAnotherReplica(t *testing.T) { forEngines(t, testCancelFromAnotherReplica) }

func testCancelFromAnotherReplica(t *testing.T, e engine, db string) {
	ctx := context.Background()
	a, b := e.open(t, db), e.open(t, db)
	defer func() { _, _ = a.Close(), b.Close() }()
	j := runningJob("j1", "kafka:c::t.DLT")
	if err := a.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	if yes, err := a.CancelRequested(ctx, j.ID); yes || err != nil {
		t.Fatalf("cancel requested before anyone asked: %v %v", yes, err)
	}
	if err := b.RequestCancel(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if yes, err := a.CancelRequested(ctx, j.ID); !yes || err != nil {
		t.Fatalf("owner does not see b's cancel: %v %v", yes, err)
	}
	if err := b.RequestCancel(ctx, "nope"); !errors.Is(err, dlqreplay.ErrJobNotFound) {
		t.Fatalf("cancel of an unknown job: %v", err)
	}
	j.State, j.Finished = dlqreplay.StateCancelled, time.Now()
	if err := a.UpdateJob(ctx, j, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.RequestCancel(ctx, j.ID); !errors.Is(err, dlqreplay.ErrJobNotFound) {
		t.Fatalf("cancel of a finished job: %v", err)
	}
}

// TestStaleJobsAreInterrupted: a job whose owner stops heartbeating is
// marked interrupted by another replica after the TTL, one that flushes
// is not; the owner, back, cannot write over the verdict (ErrLeaseLost).
func TestStaleJobsAreInterrupted(t *testing.T) { forEngines(t, testStaleJobsAreInterrupted) }

func testStaleJobsAreInterrupted(t *testing.T, e engine, db string) {
	ctx := context.Background()
	a, b := e.open(t, db), e.open(t, db)
	defer func() { _, _ = a.Close(), b.Close() }()
	live, dead := runningJob("live", "kafka:c::a.DLT"), runningJob("dead", "kafka:c::b.DLT")
	for _, j := range []dlqreplay.Job{live, dead} {
		if err := a.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	if ids, err := b.InterruptStale(ctx); len(ids) != 0 || err != nil {
		t.Fatalf("fresh jobs interrupted: %v %v", ids, err)
	}
	deadline := time.Now().Add(testLeaseTTL + 100*time.Millisecond)
	for time.Now().Before(deadline) {
		live.Progress.Moved++
		if err := a.UpdateJob(ctx, live, 0, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(testLeaseTTL / 5)
	}
	ids, err := b.InterruptStale(ctx)
	if err != nil || !slices.Equal(ids, []string{"dead"}) {
		t.Fatalf("interrupted = %v, %v; want [dead]", ids, err)
	}
	got, err := b.Job(ctx, "dead")
	if err != nil || got.State != dlqreplay.StateInterrupted || got.Error == "" {
		t.Fatalf("dead job = %+v, %v", got, err)
	}
	dead.Progress.Moved = 5
	if err := a.UpdateJob(ctx, dead, 0, nil); !errors.Is(err, dlqreplay.ErrLeaseLost) {
		t.Fatalf("owner's late flush: %v, want ErrLeaseLost", err)
	}
	if got, _ := b.Job(ctx, "live"); got.State != dlqreplay.StateRunning {
		t.Fatalf("live job = %+v", got)
	}
}

// TestReplicasStartingTogetherMigrateOnce: replicas opening one fresh
// PostgreSQL database at once (a rollout) apply each migration once, under
// the advisory lock, and all end at the latest version.
func TestReplicasStartingTogetherMigrateOnce(t *testing.T) {
	e := engines[1]
	dsn := e.database(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			s, err := OpenPostgres(context.Background(), dsn, testLeaseTTL)
			if err != nil {
				t.Error(err)
				return
			}
			_ = s.Close()
		})
	}
	wg.Wait()
	s := e.open(t, dsn)
	defer func() { _ = s.Close() }()
	var n, top int
	if err := s.db.QueryRowContext(context.Background(), `SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&n, &top); err != nil {
		t.Fatal(err)
	}
	if last := migrations[len(migrations)-1].version; n != len(migrations) || top != last {
		t.Fatalf("schema_migrations has %d rows up to %d; want %d up to %d", n, top, len(migrations), last)
	}
}
