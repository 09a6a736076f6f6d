package pubsub

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/conformance"
)

// retainAcked makes the source subscription keep acknowledged messages.
func (w *world) retainAcked(t *testing.T) {
	t.Helper()
	if _, err := w.c.SubscriptionAdminClient.UpdateSubscription(context.Background(), &pubsubpb.UpdateSubscriptionRequest{
		Subscription: &pubsubpb.Subscription{Name: w.sub(w.source), RetainAckedMessages: true},
		UpdateMask:   &fieldmaskpb.FieldMask{Paths: []string{"retain_acked_messages"}},
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSeek: a native replay seeks the source subscription back to its
// earliest dead letter's original publish time: the originals come again
// (without replay stamps), a message processed before that time does
// not, the DLQ's copies are acknowledged, and a snapshot taken first is
// the undo.
func TestSeek(t *testing.T) {
	w := newTopics(t)
	w.retainAcked(t)
	w.e.Python(t, publishPy, w.e.Project, w.source, `[{"data":"ok","key":"","attrs":{"qw-test-id":"ok-0"}}]`)
	if got := w.Arrived(t, w.source); len(got) != 1 || got[0].ID != "ok-0" {
		t.Fatalf("processed %+v", got)
	}
	w.DeadLetter(t, conformance.Message{ID: "s-0"}, conformance.Message{ID: "s-1"}, conformance.Message{ID: "s-2"})
	svc := w.Service(t, 0)
	if !svc.CanRedriveNatively(w.DLQ()) {
		t.Fatal("no native redrive offered")
	}
	r, err := svc.Run(context.Background(), dlqreplay.Request{DLQ: w.DLQ(), Mode: dlqreplay.ModeNative, Selection: dlqreplay.Selection{All: true}, Rate: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.State != dlqreplay.StateSucceeded || r.Job.Progress.Moved != 3 || r.Job.Target.Name != w.source {
		t.Fatalf("seek job %+v", r.Job)
	}
	var got []string
	for _, a := range w.Arrived(t, w.source) {
		if a.ReplayCount != "" || a.ReplayID != "" {
			t.Errorf("%s came again with replay stamps %q/%q", a.ID, a.ReplayCount, a.ReplayID)
		}
		got = append(got, a.ID)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"s-0", "s-1", "s-2"}) {
		t.Fatalf("after the seek the source delivered %v, want the three originals", got)
	}
	if in := w.InDLQ(t); len(in) != 0 {
		t.Fatalf("dlq holds %v after the seek", in)
	}
	it := w.c.SubscriptionAdminClient.ListSnapshots(context.Background(), &pubsubpb.ListSnapshotsRequest{Project: "projects/" + w.e.Project})
	undo := false
	for s, err := it.Next(); err == nil; s, err = it.Next() {
		undo = undo || strings.Contains(s.GetName(), "/snapshots/queuewatch-undo-"+w.source+"-") && s.GetTopic() == w.topic(w.source)
	}
	if !undo {
		t.Error("no undo snapshot of the source subscription")
	}
}

// TestSeekRefused: a subscription that does not retain acknowledged
// messages is not sought back, and the DLQ keeps everything.
func TestSeekRefused(t *testing.T) {
	w := newTopics(t)
	w.DeadLetter(t, conformance.Message{ID: "n-0"})
	_, err := w.Service(t, 0).Run(context.Background(), dlqreplay.Request{DLQ: w.DLQ(), Mode: dlqreplay.ModeNative, Selection: dlqreplay.Selection{All: true}, Rate: -1})
	if !errors.Is(err, dlqreplay.ErrInvalidRequest) || !strings.Contains(err.Error(), "does not retain acknowledged messages") {
		t.Fatalf("seek = %v, want ErrInvalidRequest saying why", err)
	}
	if in := w.InDLQ(t); !slices.Equal(in, []string{"n-0"}) {
		t.Fatalf("dlq holds %v", in)
	}
}

// TestRetains: a seek back is allowed only as far as the subscription
// keeps acknowledged messages.
func TestRetains(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	week := durationpb.New(7 * 24 * time.Hour)
	for _, c := range []struct {
		name string
		sub  *pubsubpb.Subscription
		from time.Time
		want string // "" when allowed
	}{
		{"retained, within", &pubsubpb.Subscription{RetainAckedMessages: true, MessageRetentionDuration: week}, now.Add(-6 * 24 * time.Hour), ""},
		{"retained, too long ago", &pubsubpb.Subscription{RetainAckedMessages: true, MessageRetentionDuration: week}, now.Add(-8 * 24 * time.Hour), "retains messages for 168h0m0s"},
		{"not retained", &pubsubpb.Subscription{MessageRetentionDuration: week}, now.Add(-time.Minute), "does not retain acknowledged messages"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := retains(c.sub, c.from, now)
			if c.want == "" && err != nil || c.want != "" && (!errors.Is(err, dlqreplay.ErrInvalidRequest) || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("retains = %v, want %q", err, c.want)
			}
		})
	}
}
