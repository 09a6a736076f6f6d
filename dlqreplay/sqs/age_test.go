package sqs

import (
	"context"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/conformance"
	"github.com/queuewatch/queuewatch/store"
)

// TestOldestSentSeen: a browse records the oldest SentTimestamp it
// received in the account's access, where the collector reads it, and a
// job that deletes from the DLQ forgets it (the oldest may be gone).
func TestOldestSentSeen(t *testing.T) {
	w := newWorld(t).(*world)
	start := time.Now().Add(-time.Second) // SentTimestamp is in whole milliseconds
	w.DeadLetter(t, conformance.Message{ID: "o-0"}, conformance.Message{ID: "o-1"})
	cl := access(t, w.s.URL())
	be, err := New(Options{Cluster: cl, VisibilityTimeout: w.vis})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc, err := dlqreplay.New(dlqreplay.Options{Store: st, Backends: []dlqreplay.Backend{be}, FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)

	if _, ok := cl.OldestSent(w.dlq); ok {
		t.Fatal("an oldest send time before any browse")
	}
	p, err := svc.Browse(context.Background(), w.DLQ(), dlqreplay.BrowseOptions{Limit: 10})
	if err != nil || len(p.Messages) != 2 {
		t.Fatalf("browse: %d messages, %v", len(p.Messages), err)
	}
	oldest := p.Messages[0].Timestamp
	for _, m := range p.Messages {
		if m.Timestamp.Before(oldest) {
			oldest = m.Timestamp
		}
	}
	if got, ok := cl.OldestSent(w.dlq); !ok || !got.Equal(oldest) || got.Before(start) {
		t.Fatalf("after browsing: oldest sent %v, %v; want %v, the oldest message browsed", got, ok, oldest)
	}
	r, err := svc.Run(context.Background(), dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}})
	if err != nil || r.Job.Progress.Moved != 2 {
		t.Fatalf("replay: %+v, %v", r.Job.Progress, err)
	}
	if got, ok := cl.OldestSent(w.dlq); ok {
		t.Errorf("after a job deleted the messages: oldest sent %v is still known", got)
	}
}
