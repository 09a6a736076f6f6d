package dlqreplay_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/store"
)

// nativeBackend is a fakeBackend whose broker moves DLQs itself: each
// Progress call advances the task by one step of steps.
type nativeBackend struct {
	fakeBackend
	mu    sync.Mutex
	steps []dlqreplay.NativeProgress
	task  *fakeTask
	rate  float64
}

type fakeTask struct {
	b         *nativeBackend
	at        int
	cancelled bool
}

func (b *nativeBackend) StartNative(_ context.Context, _ dlqreplay.Ref, t dlqreplay.Target, rate float64) (dlqreplay.NativeTask, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rate = rate
	b.task = &fakeTask{b: b}
	return b.task, nil
}

func (t *fakeTask) Target() string { return "src" }

func (t *fakeTask) Progress(context.Context) (dlqreplay.NativeProgress, error) {
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	if t.cancelled {
		return dlqreplay.NativeProgress{State: dlqreplay.StateCancelled, Moved: t.b.steps[t.at].Moved}, nil
	}
	p := t.b.steps[t.at]
	if t.at < len(t.b.steps)-1 {
		t.at++
	}
	return p, nil
}

func (t *fakeTask) Cancel(context.Context) error {
	t.b.mu.Lock()
	t.cancelled = true
	t.b.mu.Unlock()
	return nil
}

func nativeService(t *testing.T, b dlqreplay.Backend) *dlqreplay.Service {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc, err := dlqreplay.New(dlqreplay.Options{Store: st, Backends: []dlqreplay.Backend{b}, Rate: 200, NativePoll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc
}

func running(moved, toMove int64) dlqreplay.NativeProgress {
	return dlqreplay.NativeProgress{State: dlqreplay.StateRunning, Moved: moved, ToMove: toMove}
}

// TestNativeJobStates: a native job ends as the broker's move ends —
// succeeded with its count, failed with the broker's reason, cancelled
// when the operator cancels it — and the audit record and the replay
// counter say so.
func TestNativeJobStates(t *testing.T) {
	all := dlqreplay.Selection{All: true}
	tests := []struct {
		name   string
		steps  []dlqreplay.NativeProgress
		cancel bool
		state  dlqreplay.JobState
		moved  int64
		errHas string
	}{
		{"succeeded", []dlqreplay.NativeProgress{running(0, 10), running(4, 10), {State: dlqreplay.StateSucceeded, Moved: 10}}, false, dlqreplay.StateSucceeded, 10, ""},
		{"failed", []dlqreplay.NativeProgress{running(3, 10), {State: dlqreplay.StateFailed, Moved: 3, Reason: "AWS.SimpleQueueService.NonExistentQueue"}}, false, dlqreplay.StateFailed, 3, "NonExistentQueue"},
		{"cancelled", []dlqreplay.NativeProgress{running(2, 10)}, true, dlqreplay.StateCancelled, 2, "cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &nativeBackend{steps: tt.steps}
			svc := nativeService(t, b)
			j, err := svc.Start(context.Background(), dlqreplay.Request{DLQ: fakeDLQ, Mode: dlqreplay.ModeNative, Selection: all, Who: "bob"})
			if err != nil {
				t.Fatal(err)
			}
			if b.rate != 200 {
				t.Errorf("broker asked for rate %v, want the configured 200", b.rate)
			}
			if tt.cancel {
				for {
					cur, _ := svc.Job(context.Background(), j.ID)
					if cur.Progress.Moved == 2 {
						break
					}
					time.Sleep(time.Millisecond)
				}
				if err := svc.Cancel(j.ID); err != nil {
					t.Fatal(err)
				}
			}
			r, err := svc.Wait(context.Background(), j.ID)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := svc.Job(context.Background(), j.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range []dlqreplay.Job{r.Job, rec} {
				if got.State != tt.state || got.Progress.Moved != tt.moved || got.Mode != dlqreplay.ModeNative ||
					got.Who != "bob" || got.Target.Name != "src" || !strings.Contains(got.Error, tt.errHas) {
					t.Fatalf("job %+v, want %s with %d moved", got, tt.state, tt.moved)
				}
			}
			if tt.cancel && !b.task.cancelled {
				t.Error("the broker's task was not cancelled")
			}
			if tt.state == dlqreplay.StateSucceeded && rec.Progress.Remaining != 0 {
				t.Errorf("remaining %d after success", rec.Progress.Remaining)
			}
			var ok int64
			for _, c := range svc.Replayed() {
				ok += c.Value
			}
			if ok != tt.moved {
				t.Errorf("replayed counter %d, want %d", ok, tt.moved)
			}
		})
	}
}

// TestNativeRefusals: a native job is refused (ErrInvalidRequest) on a
// backend without the capability, for a selection or a dry run, and
// while another job holds the DLQ (a conflict naming it); an unknown mode
// is refused too.
func TestNativeRefusals(t *testing.T) {
	all := dlqreplay.Selection{All: true}
	plain := nativeService(t, &fakeBackend{s: newFake(3)})
	_, err := plain.Start(context.Background(), dlqreplay.Request{DLQ: fakeDLQ, Mode: dlqreplay.ModeNative, Selection: all})
	if !errors.Is(err, dlqreplay.ErrInvalidRequest) || !strings.Contains(err.Error(), "has no native redrive") {
		t.Fatalf("no capability = %v", err)
	}
	if plain.CanRedriveNatively(fakeDLQ) {
		t.Error("a backend without the capability reports it")
	}
	b := &nativeBackend{steps: []dlqreplay.NativeProgress{running(0, 5)}}
	svc := nativeService(t, b)
	if !svc.CanRedriveNatively(fakeDLQ) || svc.CanRedriveNatively("nats:other::dlq") {
		t.Error("CanRedriveNatively is wrong")
	}
	for _, req := range []dlqreplay.Request{
		{Selection: dlqreplay.Selection{Group: "g"}},
		{Selection: all, DryRun: true},
		{Selection: all, Target: dlqreplay.Target{Kind: dlqreplay.TargetOriginalExchange}},
	} {
		req.DLQ, req.Mode = fakeDLQ, dlqreplay.ModeNative
		if _, err := svc.Start(context.Background(), req); !errors.Is(err, dlqreplay.ErrInvalidRequest) {
			t.Errorf("%+v = %v, want ErrInvalidRequest", req, err)
		}
	}
	if _, err := svc.Start(context.Background(), dlqreplay.Request{DLQ: fakeDLQ, Mode: "turbo", Selection: all}); !errors.Is(err, dlqreplay.ErrInvalidRequest) {
		t.Errorf("mode turbo = %v", err)
	}
	j, err := svc.Start(context.Background(), dlqreplay.Request{DLQ: fakeDLQ, Mode: dlqreplay.ModeNative, Selection: all})
	if err != nil {
		t.Fatal(err)
	}
	var ce *dlqreplay.ConflictError
	if _, err := svc.Start(context.Background(), dlqreplay.Request{DLQ: fakeDLQ, Selection: all}); !errors.As(err, &ce) || ce.JobID != j.ID {
		t.Fatalf("a replay beside the native job = %v", err)
	}
	// Close cancels the broker's move and records the job cancelled.
	svc.Close()
	if rec, err := svc.Job(context.Background(), j.ID); err != nil || rec.State != dlqreplay.StateCancelled || !b.task.cancelled {
		t.Fatalf("after Close: %+v, %v", rec, err)
	}
}

// cappedNative is a nativeBackend whose broker moves at most 100 messages
// per second.
type cappedNative struct{ *nativeBackend }

func (cappedNative) NativeMaxRate() float64 { return 100 }

// TestNativeDefaultRateCapped: a native job with no rate of its own asks
// the broker for the configured default capped at the broker's maximum
// (the default, 200 here, is no reason to refuse the move); a rate the
// caller gave is passed on as asked, for the broker to refuse.
func TestNativeDefaultRateCapped(t *testing.T) {
	all := dlqreplay.Selection{All: true}
	for _, tt := range []struct {
		asked, want float64
	}{{0, 100}, {50, 50}, {150, 150}} {
		b := &nativeBackend{steps: []dlqreplay.NativeProgress{{State: dlqreplay.StateSucceeded}}}
		svc := nativeService(t, cappedNative{b})
		j, err := svc.Start(context.Background(), dlqreplay.Request{DLQ: fakeDLQ, Mode: dlqreplay.ModeNative, Selection: all, Who: "bob", Rate: tt.asked})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Wait(context.Background(), j.ID); err != nil {
			t.Fatal(err)
		}
		b.mu.Lock()
		got := b.rate
		b.mu.Unlock()
		if got != tt.want {
			t.Errorf("asked for rate %v: broker asked for %v, want %v", tt.asked, got, tt.want)
		}
	}
}
