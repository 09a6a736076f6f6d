package sqs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/conformance"
)

// openSession opens a job session on w's DLQ (renewing only every hour:
// the tests renew themselves).
func openSession(t *testing.T, w *world, dry bool) *session {
	t.Helper()
	b := w.backend(t)
	b.opts.VisibilityTimeout = 3 * time.Hour
	sess, err := b.Open(context.Background(), dlqreplay.JobSpec{ID: "t-" + t.Name(), DLQ: w.ref(), Action: dlqreplay.ActionDelete, DryRun: dry})
	if err != nil {
		t.Fatal(err)
	}
	return sess.(*session)
}

func heldCount(s *session) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held)
}

// TestDeletedNotHeld: a message deleted from the DLQ is no longer held by
// the session (a long replay keeps only what is in flight), and
// renewals running while the job deletes never fail it: a renewal
// does not race a delete of the same messages.
func TestDeletedNotHeld(t *testing.T) {
	w := newWorld(t).(*world)
	const n = 60
	msgs := make([]conformance.Message, n)
	for i := range msgs {
		msgs[i] = conformance.Message{ID: "d-" + string(rune('a'+i%26)) + string(rune('a'+i/26))}
	}
	w.DeadLetter(t, msgs...)
	s := openSession(t, w, false)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			s.renewOnce(10 * time.Second)
		}
	}()
	ctx := context.Background()
	maxHeld := 0
	err := s.Scan(ctx, func(d *dlqreplay.Delivery) error {
		maxHeld = max(maxHeld, heldCount(s))
		if err := s.Remove(ctx, d); err != nil {
			return err
		}
		_, err := s.Settle(ctx, dlqreplay.SettleBatch)
		return err
	})
	if err == nil {
		_, err = s.Settle(ctx, dlqreplay.SettleAll)
	}
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.check(); err != nil {
		t.Fatalf("renewal racing the deletes failed the job: %v", err)
	}
	if got := heldCount(s); got != 0 || maxHeld > 2*batchSize {
		t.Errorf("after deleting all %d: %d still held, at most %d held, want 0 and ≤ %d", n, got, maxHeld, 2*batchSize)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if in := w.InDLQ(t); len(in) != 0 {
		t.Errorf("dlq still holds %v", in)
	}
}

// deadLetterN dead-letters n messages with distinct ids.
func deadLetterN(t *testing.T, w *world, n int) {
	t.Helper()
	msgs := make([]conformance.Message, n)
	for i := range msgs {
		msgs[i] = conformance.Message{ID: fmt.Sprintf("m-%03d", i)}
	}
	w.DeadLetter(t, msgs...)
}

// TestDryRunHonoursLost: a scan that only looks (a dry run, or messages
// not selected) stops with the reason once a renewal failed, rather than
// counting messages that may be received twice. The renewal failure is
// set by hand: a real server fails renewals only by timing.
func TestDryRunHonoursLost(t *testing.T) {
	w := newWorld(t).(*world)
	deadLetterN(t, w, 25)
	s := openSession(t, w, true)
	seen := 0
	err := s.Scan(context.Background(), func(*dlqreplay.Delivery) error {
		if seen++; seen == 3 {
			s.mu.Lock()
			s.lost = errors.New("renew the visibility of the held messages: boom")
			s.mu.Unlock()
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "boom") || seen != 3 {
		t.Errorf("scan after a failed renewal: saw %d, err %v; want 3 and the renewal's error", seen, err)
	}
	_ = s.Close(context.Background())
}

// TestHeldLimit: a job that would hold more messages in flight than SQS
// allows (here a limit of 15) stops before receiving past it, saying so,
// and gives every message back.
func TestHeldLimit(t *testing.T) {
	w := newWorld(t).(*world)
	deadLetterN(t, w, 30)
	s := openSession(t, w, true)
	s.limit = 15
	seen := 0
	err := s.Scan(context.Background(), func(*dlqreplay.Delivery) error { seen++; return nil })
	if err == nil || !strings.Contains(err.Error(), "in flight") || seen > 15 {
		t.Errorf("scan past the in-flight limit: saw %d, err %v", seen, err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if in := w.InDLQ(t); len(in) != 30 {
		t.Errorf("dlq holds %d messages after the job, want all 30", len(in))
	}
}
