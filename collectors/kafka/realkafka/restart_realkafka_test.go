package realkafka

import (
	"context"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestBrokerKilledAndBack kills the real node while queuewatch polls it:
// polls fail while it is down, and the same source (no restart of
// queuewatch) reads the same lag once the node has recovered its logs.
// It stops the node shared by the package, so no test here runs in
// parallel.
func TestBrokerKilledAndBack(t *testing.T) {
	b := realBroker(t)
	topic := b.topic(1)
	b.produceAt(topic, 0, 4, time.Now())
	g := testenv.Unique("g")
	b.commit(g, topic, map[int32]int64{0: 1})
	s := b.source(false, g)
	if lag := group(t, poll(t, s), g).TotalLag(); lag != 3 {
		t.Fatalf("lag %d before the crash; want 3", lag)
	}

	b.node.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	_, err := s.Poll(ctx)
	cancel()
	if err == nil {
		t.Fatal("poll of a killed broker succeeded")
	}

	if err := b.node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted after SIGKILL in %s", b.node.StartupTime.Round(time.Millisecond))
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		snap, err := s.Poll(ctx)
		cancel()
		if err == nil {
			if got, ok := snap.Group(g); ok && got.TotalLag() == 3 && got.Err == "" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("did not recover after restart: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
