package rabbitmq

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/rs/zerolog"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// mix publishes a random mix of n dead letters to work.dlq and returns
// their ids in order: three failure reasons, two exception classes, a
// tenant header, spread-out death times, some binary bodies.
func (w *world) mix(rng *rand.Rand, prefix string, n int, exchange string) []string {
	reasons := []string{"rejected", "expired", "maxlen"}
	classes := []string{"", "java.lang.IllegalStateException", "com.fasterxml.jackson.core.JsonParseException"}
	var out []string
	var msgs []amqp.Publishing
	for i := range n {
		id := fmt.Sprintf("%s-%04d", prefix, i)
		body := []byte(fmt.Sprintf(`{"i":%d}`, i))
		if rng.IntN(5) == 0 {
			body = []byte{0xff, byte(i), 0x00}
		}
		extra := amqp.Table{"tenant": []string{"a", "b", "c"}[rng.IntN(3)]}
		if c := classes[rng.IntN(3)]; c != "" {
			extra["x-exception-stacktrace"] = c + ": boom\n\tat x"
		}
		m := deadLetter(id, body, reasons[rng.IntN(3)], extra)
		death := m.Headers["x-death"].([]any)[0].(amqp.Table)
		death["time"] = time.Unix(1_700_000_000+int64(i), 0)
		if exchange != "" {
			death["exchange"] = exchange
		}
		msgs = append(msgs, m)
		out = append(out, id)
	}
	w.publish("", "work.dlq", msgs...)
	return out
}

// randomSelection picks one kind of selection over msgs, sometimes with a
// limit.
func randomSelection(rng *rand.Rand, msgs []queue.Message) dlqreplay.Selection {
	var s dlqreplay.Selection
	switch rng.IntN(5) {
	case 0:
		s.All = true
	case 1:
		for _, m := range msgs {
			if rng.IntN(4) == 0 {
				s.IDs = append(s.IDs, m.ID)
			}
		}
		if len(s.IDs) == 0 {
			s.IDs = []string{"none"}
		}
	case 2:
		s.Group = msgs[rng.IntN(len(msgs))].Death.Signature().Key()
	case 3:
		s.Headers = map[string]string{"tenant": []string{"a", "b", "c"}[rng.IntN(3)]}
	case 4:
		a, b := rng.IntN(len(msgs)), rng.IntN(len(msgs))
		s.Since, s.Until = msgs[min(a, b)].Timestamp, msgs[max(a, b)].Timestamp
	}
	if rng.IntN(3) == 0 {
		s.Limit = 1 + rng.IntN(len(msgs))
	}
	return s
}

// expected applies a selection the way a job must: in queue order, up to
// the limit.
func expected(s dlqreplay.Selection, msgs []queue.Message) (selected, left []string) {
	for _, m := range msgs {
		if s.Match(&m) && (s.Limit == 0 || len(selected) < s.Limit) {
			selected = append(selected, m.ID)
		} else {
			left = append(left, m.ID)
		}
	}
	return selected, left
}

func TestConservation(t *testing.T) {
	testenv.Slow(t, "ten random conservation rounds")
	w := newWorld(t, worldOpts{})
	w.declare("moved", nil)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	ctx := ctxT(t, 2*time.Minute)
	for iter := range 10 {
		t.Run(fmt.Sprint(iter), func(t *testing.T) {
			for _, q := range []string{"work", "work.dlq", "moved"} {
				if _, err := w.ch.QueuePurge(q, false); err != nil {
					t.Fatal(err)
				}
			}
			all := w.mix(rng, fmt.Sprintf("c%d", iter), 10+rng.IntN(300), "")
			page, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{Limit: 1000})
			if err != nil || len(page.Messages) != len(all) {
				t.Fatalf("browse: %d messages, %v", len(page.Messages), err)
			}
			sel := randomSelection(rng, page.Messages)
			req := dlqreplay.Request{DLQ: w.dlq, Selection: sel}
			target := "work"
			switch rng.IntN(3) {
			case 1:
				req.Action, req.Target, target = dlqreplay.ActionMove, dlqreplay.Target{Name: "moved"}, "moved"
			case 2:
				req.Action, target = dlqreplay.ActionDelete, ""
			}
			wantSel, wantLeft := expected(sel, page.Messages)
			r, err := w.svc.Run(ctx, req)
			if err != nil {
				t.Fatalf("%+v: %v", req, err)
			}
			if r.Job.State != dlqreplay.StateSucceeded || r.Job.Progress.Moved != int64(len(wantSel)) || r.Job.Progress.Failed != 0 {
				t.Fatalf("%+v: job %+v, want %d moved", req, r.Job, len(wantSel))
			}
			if left := w.peekIDs("work.dlq"); !slices.Equal(left, wantLeft) {
				t.Fatalf("%+v: dlq = %v\nwant %v", req, left, wantLeft)
			}
			var got []string
			if target != "" {
				got = ids(w.drain(target))
			} else {
				arch, err := w.store.Archived(ctx, dlqreplay.ArchiveQuery{JobID: r.Job.ID})
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range arch {
					got = append(got, a.MessageID)
				}
			}
			if !slices.Equal(got, wantSel) {
				t.Fatalf("%+v: %s got %v\nwant %v", req, req.Action, got, wantSel)
			}
		})
	}
}

// newProxy starts a TCP proxy to the broker; Stop cuts every connection.
func newProxy(t *testing.T) *toxiproxy.Proxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "amqp", "127.0.0.1:0", "127.0.0.1:5672")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// accounted checks that every message is in the DLQ, in target, or was
// reported moved before target was deleted (gone), and that a message is
// in two places only when the receipt says it may be.
func accounted(t *testing.T, w *world, all []string, target string, gone bool, r dlqreplay.Receipt) {
	t.Helper()
	maybeDup, moved := map[string]bool{}, map[string]bool{}
	for _, o := range r.Outcomes {
		if o.PossibleDuplicate {
			maybeDup[o.MessageID] = true
		}
		if o.Result == dlqreplay.ResultMoved {
			moved[o.MessageID] = true
		}
	}
	seen := map[string]int{}
	for _, id := range w.peekIDs("work.dlq") {
		seen[id]++
	}
	if !gone {
		for _, id := range ids(w.drain(target)) {
			seen[id]++
		}
	}
	for _, id := range all {
		n := seen[id]
		if gone && moved[id] {
			n++
		}
		switch {
		case n == 0:
			t.Errorf("message %s lost", id)
		case n > 1 && !maybeDup[id]:
			t.Errorf("message %s is in %d places, receipt does not say so", id, n)
		}
	}
}

// waitSettled waits until the broker has given back a cut connection's
// messages.
func waitSettled(w *world, q1, q2 string, total int) {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if w.depth(q1)+w.depth(q2) >= total {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitMoved waits until a running job has moved n messages.
func waitMoved(t *testing.T, svc *dlqreplay.Service, id string, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		j, err := svc.Job(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Progress.Moved >= n || j.State != dlqreplay.StateRunning {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("job %s never moved %d messages", id, n)
}

func TestFaults(t *testing.T) {
	testenv.Slow(t, "1,500-message fault runs")
	const total = 1500
	tests := []struct {
		name  string
		setup func(w *world) dlqreplay.Request
		fault func(t *testing.T, w *world, p *toxiproxy.Proxy)
		// target is where moved messages land; gone when the fault
		// deletes it.
		target    string
		gone      bool
		wantState dlqreplay.JobState
		wantMoved int64 // -1: some, not all
	}{
		{
			name:   "connection cut by a TCP proxy",
			fault:  func(t *testing.T, w *world, p *toxiproxy.Proxy) { p.Stop() },
			target: "work", wantState: dlqreplay.StateFailed, wantMoved: -1,
		},
		{
			name: "channel closed by the broker (target exchange deleted)",
			setup: func(w *world) dlqreplay.Request {
				w.exchange("orders")
				if err := w.ch.QueueBind("work", "work", "orders", false, nil); err != nil {
					w.t.Fatal(err)
				}
				return dlqreplay.Request{Target: dlqreplay.Target{Kind: dlqreplay.TargetOriginalExchange}}
			},
			fault: func(t *testing.T, w *world, p *toxiproxy.Proxy) {
				w.a.Do(http.MethodDelete, testenv.APIPath("exchanges", w.vh, "orders"), nil)
			},
			target: "work", wantState: dlqreplay.StateFailed, wantMoved: -1,
		},
		{
			name: "target queue deleted mid-job",
			fault: func(t *testing.T, w *world, p *toxiproxy.Proxy) {
				w.a.Do(http.MethodDelete, testenv.APIPath("queues", w.vh, "work"), nil)
			},
			target: "work", gone: true, wantState: dlqreplay.StateSucceeded, wantMoved: -1,
		},
		{
			name: "target at max-length with reject-publish",
			setup: func(w *world) dlqreplay.Request {
				w.declare("small", amqp.Table{"x-max-length": int64(100), "x-overflow": "reject-publish"})
				return dlqreplay.Request{Action: dlqreplay.ActionMove, Target: dlqreplay.Target{Name: "small"}}
			},
			target: "small", wantState: dlqreplay.StateSucceeded, wantMoved: 100,
		},
		{
			name: "unroutable target",
			setup: func(w *world) dlqreplay.Request {
				w.exchange("orders")
				return dlqreplay.Request{Target: dlqreplay.Target{Kind: dlqreplay.TargetOriginalExchange}}
			},
			target: "work", wantState: dlqreplay.StateSucceeded, wantMoved: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProxy(t)
			w := newWorld(t, worldOpts{url: "amqp://guest:guest@" + p.Listen + "/"})
			req := dlqreplay.Request{}
			if tt.setup != nil {
				req = tt.setup(w)
			}
			exchange := ""
			if req.Target.Kind == dlqreplay.TargetOriginalExchange {
				exchange = "orders"
			}
			all := w.mix(rand.New(rand.NewPCG(1, 2)), "f", total, exchange)
			req.DLQ, req.Selection, req.Rate = w.dlq, dlqreplay.Selection{All: true}, 1000
			ctx := ctxT(t, time.Minute)
			j, err := w.svc.Start(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if tt.fault != nil {
				waitMoved(t, w.svc, j.ID, 300)
				if cur, _ := w.svc.Job(ctx, j.ID); cur.State != dlqreplay.StateRunning {
					t.Fatalf("job ended before the fault: %+v", cur)
				}
				tt.fault(t, w, p)
			}
			r, err := w.svc.Wait(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			pr := r.Job.Progress
			if r.Job.State != tt.wantState || (tt.wantMoved >= 0 && pr.Moved != tt.wantMoved) ||
				(tt.wantMoved < 0 && (pr.Moved == 0 || pr.Moved == total)) {
				t.Errorf("job %s (%s), progress %+v", r.Job.State, r.Job.Error, pr)
			}
			if len(r.Outcomes) > total || pr.Moved+pr.Failed > total {
				t.Errorf("job processed more than the snapshot: %+v", pr)
			}
			if !tt.gone {
				waitSettled(w, "work.dlq", tt.target, total)
			}
			accounted(t, w, all, tt.target, tt.gone, r)
		})
	}
}

func TestKilledMidJob(t *testing.T) {
	testenv.Slow(t, "a killed 2,000-message job")
	const total = 2000
	p := newProxy(t)
	w := newWorld(t, worldOpts{url: "amqp://guest:guest@" + p.Listen + "/"})
	all := w.mix(rand.New(rand.NewPCG(3, 4)), "k", total, "")
	ctx := ctxT(t, time.Minute)
	j, err := w.svc.Start(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}, Rate: 2000, Who: "op"})
	if err != nil {
		t.Fatal(err)
	}
	waitMoved(t, w.svc, j.ID, 400)
	// Let one progress flush reach the disk, so there is something known.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if a, err := w.store.Job(ctx, j.ID); err == nil && a.Progress.Moved > 0 {
			break
		}
	}
	// The process dies: its disk writes stop and its connections drop
	// without a goodbye.
	if err := w.store.Close(); err != nil {
		t.Fatal(err)
	}
	p.Stop()
	waitSettled(w, "work.dlq", "work", total)

	w.openService(worldOpts{})
	if !slices.Contains(w.store.Interrupted, j.ID) {
		t.Fatalf("interrupted jobs = %v, want %s", w.store.Interrupted, j.ID)
	}
	got, err := w.svc.Job(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != dlqreplay.StateInterrupted || got.Who != "op" || got.Progress.Moved == 0 {
		t.Fatalf("after restart job = %+v", got)
	}
	seen := map[string]int{}
	for _, id := range append(w.peekIDs("work.dlq"), ids(w.drain("work"))...) {
		seen[id]++
	}
	var dups int
	for _, id := range all {
		switch seen[id] {
		case 0:
			t.Errorf("message %s lost", id)
		case 1:
		default:
			dups++
		}
	}
	// At most what was in flight or acked without proof can be doubled.
	if dups > 1000 {
		t.Errorf("%d duplicates", dups)
	}
	t.Logf("moved %d before the kill (as recorded), %d duplicates", got.Progress.Moved, dups)
}
