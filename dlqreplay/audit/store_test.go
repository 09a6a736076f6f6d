package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func TestStoreSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	running := Job{ID: "j1", DLQ: "rabbitmq:c:/:q.dlq", Action: "replay", Who: "ann", State: StateRunning,
		Selection: json.RawMessage(`{"all":true}`), Created: time.Now()}
	done := Job{ID: "j2", DLQ: "rabbitmq:c:/:q.dlq", Action: "delete", Who: "bob", State: StateRunning, Created: time.Now()}
	for _, j := range []Job{running, done} {
		if err := s.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	running.Moved, running.ToMove = 2, 10
	if err := s.UpdateJob(ctx, running, 0, []Outcome{{MessageID: "a", Result: "moved", Target: "/q"}, {MessageID: "b", Result: "moved"}}); err != nil {
		t.Fatal(err)
	}
	done.State, done.Finished, done.Moved = StateSucceeded, time.Now(), 1
	if err := s.UpdateJob(ctx, done, 0, []Outcome{{MessageID: "c", Result: "deleted"}}); err != nil {
		t.Fatal(err)
	}
	bin := []byte{0xff, 0x00, 0xfe}
	ids, err := s.Archive(ctx, []Archived{{JobID: "j2", DLQ: done.DLQ, MessageID: "c", Body: bin,
		Headers: []Header{{Key: []byte{'k', 0xff}, Value: bin, Kind: "bytes"}}, Properties: map[string]string{"message_id": "c"}}})
	if err != nil || len(ids) != 1 {
		t.Fatalf("archive: %v %v", ids, err)
	}
	// The process dies without finishing j1.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if len(s.Interrupted) != 1 || s.Interrupted[0] != "j1" {
		t.Fatalf("interrupted = %v", s.Interrupted)
	}
	j, err := s.Job(ctx, "j1")
	if err != nil || j.State != StateInterrupted || j.Moved != 2 || j.ToMove != 10 || j.Who != "ann" || string(j.Selection) != `{"all":true}` {
		t.Fatalf("j1 = %+v, %v", j, err)
	}
	if j, _ := s.Job(ctx, "j2"); j.State != StateSucceeded {
		t.Fatalf("j2 = %+v", j)
	}
	outs, err := s.Outcomes(ctx, "j1")
	if err != nil || len(outs) != 2 || outs[0].MessageID != "a" || outs[0].Target != "/q" {
		t.Fatalf("outcomes = %+v, %v", outs, err)
	}
	doneIDs, err := s.Done(ctx, done.DLQ, []string{"a", "c", "x"}, "moved", "deleted")
	if err != nil || !doneIDs["a"] || !doneIDs["c"] || doneIDs["x"] {
		t.Fatalf("done = %v, %v", doneIDs, err)
	}
	arch, err := s.Archived(ctx, ArchiveQuery{JobID: "j2"})
	if err != nil || len(arch) != 1 || !bytes.Equal(arch[0].Body, bin) || !bytes.Equal(arch[0].Headers[0].Key, []byte{'k', 0xff}) ||
		!bytes.Equal(arch[0].Headers[0].Value, bin) || arch[0].Properties["message_id"] != "c" {
		t.Fatalf("archived = %+v, %v", arch, err)
	}
	if err := s.MarkRestored(ctx, ids, "rabbitmq:c:/:other"); err != nil {
		t.Fatal(err)
	}
	if arch, _ := s.Archived(ctx, ArchiveQuery{IDs: ids}); arch[0].RestoredTo != "rabbitmq:c:/:other" || arch[0].RestoredAt.IsZero() {
		t.Fatalf("restored = %+v", arch[0])
	}
	if _, err := s.Job(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing job: %v", err)
	}
	jobs, err := s.Jobs(ctx, done.DLQ, 10)
	if err != nil || len(jobs) != 2 {
		t.Fatalf("jobs = %d, %v", len(jobs), err)
	}
}
