package sqs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/conformance"
	"github.com/queuewatch/queuewatch/queue"
)

// deadLetters makes n dead letters n-00, n-01, … the real way.
func deadLetters(t *testing.T, w *world, prefix string, n int) []string {
	var msgs []conformance.Message
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%s-%02d", prefix, i)
		msgs = append(msgs, conformance.Message{ID: id})
		ids = append(ids, id)
	}
	w.DeadLetter(t, msgs...)
	return ids
}

func arrivedIDs(t *testing.T, w *world, name string) []string {
	var out []string
	for _, a := range w.Arrived(t, name) {
		if a.ReplayCount != "" || a.ReplayID != "" {
			t.Errorf("%s arrived with replay stamps %q/%q: a native redrive adds none", a.ID, a.ReplayCount, a.ReplayID)
		}
		out = append(out, a.ID)
	}
	slices.Sort(out)
	return out
}

// TestNativeRedrive: SQS's own move task moves every message to the DLQ's
// single source; the job ends succeeded with moved == N, and the audit
// record says who ran it, in which mode, to where and how it ended.
func TestNativeRedrive(t *testing.T) {
	w := newWorld(t).(*world)
	ids := deadLetters(t, w, "n", 7)
	svc := w.Service(t, 0)
	j, err := svc.Start(context.Background(), dlqreplay.Request{
		DLQ: w.DLQ(), Mode: dlqreplay.ModeNative, Selection: dlqreplay.Selection{All: true}, Rate: -1, Who: "alice",
	})
	if err != nil {
		t.Fatal(err)
	}
	if j.Mode != dlqreplay.ModeNative || j.State != dlqreplay.StateRunning || j.Target.Name != w.source {
		t.Fatalf("started %+v", j)
	}
	r, err := svc.Wait(context.Background(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.State != dlqreplay.StateSucceeded || r.Job.Progress.Moved != 7 || r.Job.Progress.Remaining != 0 {
		t.Fatalf("native job ended %+v", r.Job)
	}
	rec, err := svc.Job(context.Background(), j.ID) // from the audit store now
	if err != nil {
		t.Fatal(err)
	}
	if rec.Mode != dlqreplay.ModeNative || rec.State != dlqreplay.StateSucceeded || rec.Progress.Moved != 7 || rec.Who != "alice" ||
		rec.Target.Name != w.source || !strings.Contains(rec.Note, "no replay stamp") || rec.Finished.IsZero() {
		t.Fatalf("audit record %+v", rec)
	}
	if got := arrivedIDs(t, w, w.source); !slices.Equal(got, ids) {
		t.Fatalf("arrived %v, want %v", got, ids)
	}
	if in := w.InDLQ(t); len(in) != 0 {
		t.Fatalf("dlq still holds %v", in)
	}
	var ok int64
	for _, c := range svc.Replayed() {
		if c.Broker == queue.SQS && c.DLQ == w.dlq && c.Result == "ok" && c.Source == w.source {
			ok += c.Value
		}
	}
	if ok != 7 {
		t.Fatalf("replayed counter %d, want 7: %+v", ok, svc.Replayed())
	}
}

// TestNativeRedriveConflictAndCancel: while a slow move task runs, a
// second native job is refused: by this instance's lock (naming the job)
// and by SQS itself for another instance. Cancelling the job cancels the
// task: the job ends cancelled with what SQS moved, and the rest stays in
// the DLQ.
func TestNativeRedriveConflictAndCancel(t *testing.T) {
	w := newWorld(t).(*world)
	ids := deadLetters(t, w, "c", 20)
	svc := w.Service(t, 0)
	req := dlqreplay.Request{DLQ: w.DLQ(), Mode: dlqreplay.ModeNative, Selection: dlqreplay.Selection{All: true}, Rate: 2}
	j, err := svc.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var ce *dlqreplay.ConflictError
	if _, err := svc.Start(context.Background(), req); !errors.As(err, &ce) || ce.JobID != j.ID {
		t.Fatalf("second native job here = %v, want a conflict naming %s", err, j.ID)
	}
	other := w.Service(t, 0) // another instance: only SQS knows
	if _, err := other.Start(context.Background(), req); !errors.As(err, &ce) || !strings.Contains(err.Error(), "message move task") {
		t.Fatalf("second native job elsewhere = %v, want SQS's refusal as a conflict", err)
	}
	waitFor(t, func() bool {
		cur, err := svc.Job(context.Background(), j.ID)
		return err == nil && cur.Progress.Moved >= 1
	})
	if err := svc.Cancel(j.ID); err != nil {
		t.Fatal(err)
	}
	r, err := svc.Wait(context.Background(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	moved := r.Job.Progress.Moved
	if r.Job.State != dlqreplay.StateCancelled || moved < 1 || moved >= 20 {
		t.Fatalf("cancelled job ended %+v", r.Job)
	}
	rec, err := svc.Job(context.Background(), j.ID)
	if err != nil || rec.State != dlqreplay.StateCancelled || rec.Mode != dlqreplay.ModeNative {
		t.Fatalf("audit record %+v, %v", rec, err)
	}
	// The task stopped: nothing more arrives, and the DLQ keeps the rest.
	time.Sleep(1500 * time.Millisecond)
	arrived := arrivedIDs(t, w, w.source)
	left := w.InDLQ(t)
	if int64(len(arrived)) != moved || len(arrived)+len(left) != len(ids) {
		t.Fatalf("moved %d: %d arrived, %d left in the dlq, want %d in all", moved, len(arrived), len(left), len(ids))
	}
	// The DLQ is free again: a new native job moves the rest.
	r, err = svc.Run(context.Background(), dlqreplay.Request{DLQ: w.DLQ(), Mode: dlqreplay.ModeNative, Selection: dlqreplay.Selection{All: true}, Rate: -1})
	if err != nil || r.Job.State != dlqreplay.StateSucceeded || r.Job.Progress.Moved != int64(len(left)) {
		t.Fatalf("redrive of the rest: %v %+v", err, r.Job)
	}
}

// TestNativeRedriveRefused: a selection, a dry run, a rate SQS does not
// allow, and a DLQ of two sources with no target named are refused with a
// sentence that says why, and nothing moves.
func TestNativeRedriveRefused(t *testing.T) {
	w := newWorld(t).(*world)
	deadLetters(t, w, "r", 2)
	svc := w.Service(t, 0)
	all := dlqreplay.Selection{All: true}
	for _, tt := range []struct {
		name string
		req  dlqreplay.Request
		want string
	}{
		{"selection", dlqreplay.Request{Selection: dlqreplay.Selection{IDs: []string{"x"}}}, "every message"},
		{"limit", dlqreplay.Request{Selection: dlqreplay.Selection{All: true, Limit: 1}}, "every message"},
		{"dry run", dlqreplay.Request{Selection: all, DryRun: true}, "no dry run"},
		{"rate", dlqreplay.Request{Selection: all, Rate: 1000}, "at most 500"},
		{"delete", dlqreplay.Request{Selection: all, Action: dlqreplay.ActionDelete}, "is a replay"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.DLQ, tt.req.Mode = w.DLQ(), dlqreplay.ModeNative
			_, err := svc.Start(context.Background(), tt.req)
			if !errors.Is(err, dlqreplay.ErrInvalidRequest) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Start = %v, want ErrInvalidRequest saying %q", err, tt.want)
			}
		})
	}
	// A queue that is nobody's DLQ is refused before SQS is asked: a move
	// task on it never answers on ElasticMQ.
	start := time.Now()
	nobodys := dlqreplay.Ref{Broker: queue.SQS, Cluster: w.cluster, Name: w.other}.ID()
	if _, err := svc.Start(context.Background(), dlqreplay.Request{DLQ: nobodys, Mode: dlqreplay.ModeNative, Selection: all}); !errors.Is(err, dlqreplay.ErrUnknownDLQ) || time.Since(start) > startTimeout {
		t.Fatalf("native redrive of nobody's dlq = %v after %v", err, time.Since(start))
	}
	// A second source: the destination must be named.
	second := w.prefix + "-src2"
	w.create(t, second, w.redrive())
	_, err := svc.Start(context.Background(), dlqreplay.Request{DLQ: w.DLQ(), Mode: dlqreplay.ModeNative, Selection: all})
	if !errors.Is(err, dlqreplay.ErrInvalidRequest) || !strings.Contains(err.Error(), "name the one") {
		t.Fatalf("two sources = %v", err)
	}
	if in := w.InDLQ(t); len(in) != 2 {
		t.Fatalf("dlq holds %v after the refusals", in)
	}
	// Named, it goes there.
	r, err := svc.Run(context.Background(), dlqreplay.Request{DLQ: w.DLQ(), Mode: dlqreplay.ModeNative, Selection: all, Target: dlqreplay.Target{Name: second}})
	if err != nil || r.Job.State != dlqreplay.StateSucceeded || r.Job.Target.Name != second || r.Job.Progress.Moved != 2 {
		t.Fatalf("named target: %v %+v", err, r.Job)
	}
	if got := w.Arrived(t, second); len(got) != 2 {
		t.Fatalf("%s got %v", second, got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
