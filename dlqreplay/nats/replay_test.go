package nats

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/conformance"
	"github.com/queuewatch/queuewatch/queue"
)

// A replay publish retried after a lost ack carries the same Nats-Msg-Id,
// so the target stream stores the copy once; another dead letter's copy
// gets another id.
func TestReplayRetriedPublishStoredOnce(t *testing.T) {
	w := newWorld(t).(*world)
	w.DeadLetter(t, conformance.Message{ID: "a"}, conformance.Message{ID: "b"})
	raws := w.copies(t)
	if len(raws) != 2 {
		t.Fatalf("%d copies, want 2", len(raws))
	}
	ctx := context.Background()
	var ids []string
	for i := range 2 {
		ref := &copyRef{dead: brokernats.DecodeDeadLetter(raws[0]), raw: raws[0]}
		ack, err := w.js.PublishMsg(ctx, replayMsg(ref, "orders", dlqreplay.Replay{ID: "job.1", Count: 1}))
		if err != nil {
			t.Fatal(err)
		}
		if ack.Duplicate != (i == 1) {
			t.Fatalf("publish %d: duplicate = %v", i, ack.Duplicate)
		}
		ids = append(ids, replayMsg(ref, "orders", dlqreplay.Replay{ID: "job.1", Count: 1}).Header.Get("Nats-Msg-Id"))
	}
	other := &copyRef{dead: brokernats.DecodeDeadLetter(raws[1]), raw: raws[1]}
	if id := replayMsg(other, "orders", dlqreplay.Replay{ID: "job.2", Count: 1}).Header.Get("Nats-Msg-Id"); id == ids[0] {
		t.Fatalf("two dead letters share the replay id %s", id)
	}
	if got := w.Arrived(t, "orders"); len(got) != 1 || got[0].ID != "a" || got[0].ReplayCount != "1" {
		t.Fatalf("arrived %+v, want one copy of a", got)
	}
}

// TestWildcardDLQNameUnknown checks that a DLQ name with a wildcard is no
// DLQ: ">" would otherwise browse, replay or delete every dead letter of
// the cluster under a lease of its own.
func TestWildcardDLQNameUnknown(t *testing.T) {
	w := newWorld(t).(*world)
	w.DeadLetter(t, conformance.Message{ID: "a"})
	b, err := New(Options{Cluster: w.cl})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{">", "*", "*.orders", "ORDERS.>", "a.b.c"} {
		ref := dlqreplay.Ref{Broker: queue.NATS, Cluster: "n", Name: name}
		if _, err := b.Browse(context.Background(), ref, dlqreplay.BrowseOptions{Limit: 10}); !errors.Is(err, dlqreplay.ErrUnknownDLQ) {
			t.Errorf("browse %q: err %v, want unknown dlq", name, err)
		}
		if _, err := b.Open(context.Background(), dlqreplay.JobSpec{DLQ: ref}); !errors.Is(err, dlqreplay.ErrUnknownDLQ) {
			t.Errorf("open %q: err %v, want unknown dlq", name, err)
		}
	}
}

// TestMoveRefusesInternalSubjects: a move cannot publish into JetStream's
// own subjects (a lease bucket) or back into the dead-letter stream.
func TestMoveRefusesInternalSubjects(t *testing.T) {
	w := newWorld(t).(*world)
	b, err := New(Options{Cluster: w.cl})
	if err != nil {
		t.Fatal(err)
	}
	s := &session{b: b}
	for _, subject := range []string{"$KV.QW_DL_LEASES.dlq.00", "$JS.API.STREAM.LIST", dlStream + ".ORDERS.billing", ".", "a..b", "a.", ".a"} {
		if _, err := s.Route(&queue.Message{}, dlqreplay.Target{Kind: dlqreplay.TargetNamed, Name: subject}); !errors.Is(err, dlqreplay.ErrInvalidRequest) {
			t.Errorf("move to %q: err %v, want invalid request", subject, err)
		}
	}
	if r, err := s.Route(&queue.Message{}, dlqreplay.Target{Kind: dlqreplay.TargetNamed, Name: "moved"}); err != nil || r.Target != "moved" {
		t.Errorf("move to moved: %+v %v", r, err)
	}
}

// TestRestoreTwiceStoresOneCopy: restoring the same archived message twice
// within the target stream's duplicate window stores one copy, and the
// second restore says so (skipped) instead of reporting it moved.
func TestRestoreTwiceStoresOneCopy(t *testing.T) {
	w := newWorld(t).(*world)
	svc := w.Service(t, 0)
	ctx := context.Background()
	w.DeadLetter(t, conformance.Message{ID: "a"})
	del, err := svc.Run(ctx, dlqreplay.Request{DLQ: w.DLQ(), Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}})
	if err != nil || del.Job.Progress.Moved != 1 {
		t.Fatalf("delete: %v %+v", err, del.Job)
	}
	target := dlqreplay.Ref{Broker: queue.NATS, Cluster: "n", Name: w.Source()}.ID()
	for i, want := range []dlqreplay.Result{dlqreplay.ResultMoved, dlqreplay.ResultSkipped} {
		r, err := svc.Restore(ctx, dlqreplay.RestoreRequest{JobID: del.Job.ID, Target: target})
		if err != nil || len(r.Outcomes) != 1 || r.Outcomes[0].Result != want {
			t.Fatalf("restore %d: %v %+v, want %s", i+1, err, r.Outcomes, want)
		}
	}
	if got := w.Arrived(t, w.Source()); len(got) != 1 {
		t.Fatalf("arrived %+v, want one copy", got)
	}
}

// TestRestoreOfAnAlreadyStoredCopyMarksTheRow: an earlier restore whose
// publish the stream stored but never acknowledged (it timed out) leaves
// the row unrestored; the next restore's copy is dropped as a duplicate of
// it, which proves the target holds the row's copy (the restore id is the
// row's own), so the row is marked restored and no later restore, after
// the duplicate window, stores a second copy.
func TestRestoreOfAnAlreadyStoredCopyMarksTheRow(t *testing.T) {
	w := newWorld(t).(*world)
	svc := w.Service(t, 0)
	ctx := context.Background()
	w.DeadLetter(t, conformance.Message{ID: "a"})
	del, err := svc.Run(ctx, dlqreplay.Request{DLQ: w.DLQ(), Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}})
	if err != nil || del.Job.Progress.Moved != 1 {
		t.Fatalf("delete: %v %+v", err, del.Job)
	}
	arch, err := svc.Archived(ctx, dlqreplay.ArchiveQuery{DLQ: w.DLQ(), Limit: 10})
	if err != nil || len(arch) != 1 {
		t.Fatalf("archived %+v, %v", arch, err)
	}
	// The earlier attempt: stored, unacknowledged, so the row is unmarked.
	m := nats.NewMsg(w.Source())
	m.Header.Set(jetstream.MsgIDHeader, "qw-restore:"+arch[0].RestoreID)
	m.Data = []byte("a")
	if _, err := w.js.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
	target := dlqreplay.Ref{Broker: queue.NATS, Cluster: "n", Name: w.Source()}.ID()
	r, err := svc.Restore(ctx, dlqreplay.RestoreRequest{JobID: del.Job.ID, Target: target})
	if err != nil || len(r.Outcomes) != 1 || r.Outcomes[0].Result != dlqreplay.ResultSkipped {
		t.Fatalf("restore: %v %+v, want skipped as a duplicate", err, r.Outcomes)
	}
	arch, err = svc.Archived(ctx, dlqreplay.ArchiveQuery{DLQ: w.DLQ(), Limit: 10})
	if err != nil || len(arch) != 1 || arch[0].RestoredAt.IsZero() || arch[0].RestoredTo != target {
		t.Fatalf("archived %+v, %v; want the row restored to %s", arch, err, target)
	}
}

// TestRestoreRefusesInternalSubjects: a restore is refused where a move
// is — JetStream's own subjects and the dead-letter stream — even when a
// stream stores them, and writes nothing there.
func TestRestoreRefusesInternalSubjects(t *testing.T) {
	w := newWorld(t).(*world)
	svc := w.Service(t, 0)
	ctx := context.Background()
	w.DeadLetter(t, conformance.Message{ID: "a"})
	del, err := svc.Run(ctx, dlqreplay.Request{DLQ: w.DLQ(), Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}})
	if err != nil || del.Job.Progress.Moved != 1 {
		t.Fatalf("delete: %v %+v", err, del.Job)
	}
	for _, subject := range []string{dlStream + ".ORDERS.billing", "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.ORDERS.billing", "$KV.QW_DL_LEASES.x"} {
		target := dlqreplay.Ref{Broker: queue.NATS, Cluster: "n", Name: subject}.ID()
		if _, err := svc.Restore(ctx, dlqreplay.RestoreRequest{JobID: del.Job.ID, Target: target}); !errors.Is(err, dlqreplay.ErrInvalidRequest) {
			t.Errorf("restore to %q: err %v, want invalid request", subject, err)
		}
	}
	if got := w.InDLQ(t); len(got) != 0 {
		t.Fatalf("the dead-letter stream got a restored copy: %v", got)
	}
}

// TestCopiesCarryNoCaptureHeaders: a replayed or restored copy carries
// none of queuewatch's own dead-letter bookkeeping (Qw-Dead-*, the
// original's Nats-Msg-Id among them): those describe the capture, not the
// message, and a copy that dies again gets its own.
func TestCopiesCarryNoCaptureHeaders(t *testing.T) {
	w := newWorld(t).(*world)
	svc := w.Service(t, 0)
	ctx := context.Background()
	w.DeadLetter(t, conformance.Message{ID: "replayed"}, conformance.Message{ID: "restored"})
	if v := w.copies(t)[0].Header.Get(brokernats.HeaderMsgID); v == "" {
		t.Fatalf("the captured copy has no %s: the test proves nothing", brokernats.HeaderMsgID)
	}
	if _, err := svc.Run(ctx, dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{IDs: []string{"ORDERS@1"}}}); err != nil {
		t.Fatal(err)
	}
	del, err := svc.Run(ctx, dlqreplay.Request{DLQ: w.DLQ(), Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}})
	if err != nil || del.Job.Progress.Moved != 1 {
		t.Fatalf("delete: %v %+v", err, del.Job)
	}
	target := dlqreplay.Ref{Broker: queue.NATS, Cluster: "n", Name: w.Source()}.ID()
	if _, err := svc.Restore(ctx, dlqreplay.RestoreRequest{JobID: del.Job.ID, Target: target}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, raw := range w.readSubject(t, "ORDERS", "orders", 1) {
		if strings.HasPrefix(raw.Header.Get("Nats-Msg-Id"), origPrefix) {
			continue
		}
		got = append(got, raw.Header.Get(conformance.TestIDHeader))
		for k := range raw.Header {
			if brokernats.IsCaptureHeader(k) {
				t.Errorf("copy %s carries %s: %q", raw.Header.Get(conformance.TestIDHeader), k, raw.Header.Get(k))
			}
		}
	}
	if !slices.Equal(got, []string{"replayed", "restored"}) {
		t.Fatalf("copies %v, want replayed and restored", got)
	}
}
