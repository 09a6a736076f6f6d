package dlqreplay_test

import (
	"context"
	"testing"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/store"
)

// TestPreviewRecordsNothing: a preview is the pipeline's dry run — the
// poison guard and every outcome — but the audit store gets no job, while
// a dry run asked for with Start is recorded once.
func TestPreviewRecordsNothing(t *testing.T) {
	ctx := context.Background()
	s := newFake(4)
	s.replays = map[string]int64{"m3": 5}
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc, err := dlqreplay.New(dlqreplay.Options{Store: st, Backends: []dlqreplay.Backend{&fakeBackend{s: s}}, MaxReplays: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	req := dlqreplay.Request{DLQ: fakeDLQ, Selection: dlqreplay.Selection{All: true}, Who: "alice"}
	p, err := svc.Preview(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if pr := p.Job.Progress; !p.Complete || p.Job.ID != "" || !p.Job.DryRun || pr.WouldMove != 3 || pr.Skipped != 1 || pr.ToMove != 4 || len(p.Outcomes) != 4 {
		t.Fatalf("preview = %+v, want complete, no id, 3 would move and 1 poison skip", p)
	}
	if o := p.Outcomes[2]; o.MessageID != "m3" || o.Result != dlqreplay.ResultSkipped || !o.Poisoned() {
		t.Errorf("m3's outcome %+v, want skipped as poison", o)
	}
	if len(s.gone) != 0 || !s.closed {
		t.Errorf("the preview removed %v (closed %v)", s.gone, s.closed)
	}
	jobs, err := svc.Jobs(ctx, dlqreplay.JobQuery{DLQ: fakeDLQ})
	if err != nil || len(jobs) != 0 {
		t.Fatalf("after a preview the audit store lists %+v (%v), want no job", jobs, err)
	}
	// A dry run someone asks for is recorded, once.
	req.DryRun = true
	if _, err := svc.Run(ctx, req); err != nil {
		t.Fatal(err)
	}
	jobs, err = svc.Jobs(ctx, dlqreplay.JobQuery{DLQ: fakeDLQ})
	if err != nil || len(jobs) != 1 || !jobs[0].DryRun {
		t.Fatalf("after one dry run the audit store lists %+v (%v), want that dry run", jobs, err)
	}
}
