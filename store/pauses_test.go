package store

import (
	"context"
	"testing"
	"time"
)

// TestConsumerPauses: a pause kept by one Store (a replica) is read by
// another on the same database, per broker, cluster and reader; a later
// resume replaces it, an earlier one (a slower replica) does not; old
// pauses go when a pause is kept.
func TestConsumerPauses(t *testing.T) {
	forEngines(t, testConsumerPauses)
}

func testConsumerPauses(t *testing.T, e engine, db string) {
	ctx := context.Background()
	a, b := e.open(t, db), e.open(t, db)
	defer func() { _ = a.Close(); _ = b.Close() }()
	now := time.Date(2026, 12, 5, 9, 0, 0, 500_400_000, time.UTC) // .5004 s: not a whole millisecond
	const keep = 24 * time.Hour
	until := now.Add(time.Hour).Truncate(time.Second)

	if _, ok, err := b.ConsumerPause(ctx, "nats", "js", "ORDERS/billing"); ok || err != nil {
		t.Fatalf("before any pause: %v %v", ok, err)
	}
	if err := a.PutConsumerPause(ctx, ConsumerPause{Broker: "nats", Cluster: "js", Group: "ORDERS/billing", Paused: true, Until: until, At: now}, keep); err != nil {
		t.Fatal(err)
	}
	p, ok, err := b.ConsumerPause(ctx, "nats", "js", "ORDERS/billing")
	if err != nil || !ok || !p.Paused || !p.Until.Equal(until) {
		t.Fatalf("the other store's read: %+v %v %v", p, ok, err)
	}
	// At is rounded up: a poll at the pause's instant is not after it.
	if !p.At.After(now) || p.At.Sub(now) >= time.Millisecond {
		t.Errorf("at %s for a pause at %s: want it rounded up to the millisecond", p.At.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
	}
	for _, other := range [][3]string{{"kafka", "js", "ORDERS/billing"}, {"nats", "dev", "ORDERS/billing"}, {"nats", "js", "ORDERS/mailer"}} {
		if _, ok, err := b.ConsumerPause(ctx, other[0], other[1], other[2]); ok || err != nil {
			t.Errorf("%v is another reader: %v %v", other, ok, err)
		}
	}
	// A resume made later stands; one made before it, stored after it
	// (a slower replica), does not.
	resume := ConsumerPause{Broker: "nats", Cluster: "js", Group: "ORDERS/billing", At: now.Add(time.Second)}
	if err := b.PutConsumerPause(ctx, resume, keep); err != nil {
		t.Fatal(err)
	}
	late := ConsumerPause{Broker: "nats", Cluster: "js", Group: "ORDERS/billing", Paused: true, Until: until, At: now.Add(500 * time.Millisecond)}
	if err := a.PutConsumerPause(ctx, late, keep); err != nil {
		t.Fatal(err)
	}
	if p, ok, err := a.ConsumerPause(ctx, "nats", "js", "ORDERS/billing"); err != nil || !ok || p.Paused || !p.Until.IsZero() || !p.At.Equal(now.Add(time.Second).Truncate(time.Millisecond).Add(time.Millisecond)) {
		t.Fatalf("after a resume and an older pause: %+v %v %v", p, ok, err)
	}
	// A day on, keeping another reader's pause deletes this one.
	if err := a.PutConsumerPause(ctx, ConsumerPause{Broker: "nats", Cluster: "js", Group: "ORDERS/mailer", Paused: true, Until: until.Add(keep), At: now.Add(keep + 2*time.Second)}, keep); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := b.ConsumerPause(ctx, "nats", "js", "ORDERS/billing"); ok || err != nil {
		t.Errorf("a pause older than keep is still kept: %v %v", ok, err)
	}
	if _, ok, err := b.ConsumerPause(ctx, "nats", "js", "ORDERS/mailer"); !ok || err != nil {
		t.Errorf("the new pause: %v %v", ok, err)
	}
}
