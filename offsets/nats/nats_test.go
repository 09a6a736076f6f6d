package nats

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
)

// world is a real nats-server with stream ORDERS of 20 messages on
// orders.a and orders.b (odd sequences on a), stamped at least 20 ms
// apart, and the reset access to it.
type world struct {
	url   string
	cli   string
	js    jetstream.JetStream
	r     *Resets
	times []time.Time // times[i] is sequence i+1's store time
}

func newWorld(t *testing.T) *world {
	t.Helper()
	srv := testenv.NATSProcess(t)
	w := &world{url: srv.URL, cli: testenv.NATSCLI(t)}
	c, err := brokernats.New(config.NATS{Name: "js", URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	nc, js, err := c.Connect(t.Context(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	w.js = js
	w.r = New(c)
	t.Cleanup(w.r.Close)
	ctx := t.Context()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 20; i++ {
		subj := "orders.b"
		if i%2 == 1 {
			subj = "orders.a"
		}
		if _, err := js.Publish(ctx, subj, []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
		m, err := js.Stream(ctx, "ORDERS")
		if err != nil {
			t.Fatal(err)
		}
		raw, err := m.GetMsg(ctx, uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		w.times = append(w.times, raw.Time)
		time.Sleep(20 * time.Millisecond)
	}
	return w
}

// consumer creates a durable pull consumer and acks n messages through
// it, so it stands at sequence n+1 with its ack floor at n.
func (w *world) consumer(t *testing.T, name string, cfg jetstream.ConsumerConfig, n int) jetstream.Consumer {
	t.Helper()
	cfg.Durable, cfg.AckPolicy = name, jetstream.AckExplicitPolicy
	c, err := w.js.CreateOrUpdateConsumer(t.Context(), "ORDERS", cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.take(t, c, n, true)
	return c
}

// take fetches n messages, acking them when ack is set.
func (w *world) take(t *testing.T, c jetstream.Consumer, n int, ack bool) {
	t.Helper()
	if n == 0 {
		return
	}
	batch, err := c.FetchNoWait(n)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for m := range batch.Messages() {
		got++
		if ack {
			if err := m.DoubleAck(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got != n {
		t.Fatalf("fetched %d messages, want %d (%v)", got, n, batch.Error())
	}
}

// cliInfo is what `nats consumer info` says of a consumer.
type cliInfo struct {
	Delivered struct {
		Stream uint64 `json:"stream_seq"`
	} `json:"delivered"`
	AckFloor struct {
		Stream uint64 `json:"stream_seq"`
	} `json:"ack_floor"`
	NumPending uint64 `json:"num_pending"`
	Paused     bool   `json:"paused"`
	Config     struct {
		PauseUntil *time.Time `json:"pause_until"`
	} `json:"config"`
}

// info runs `nats consumer info ORDERS name --json`, the reference the
// results are compared with.
func (w *world) info(t *testing.T, name string) cliInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, w.cli, "--server", w.url, "consumer", "info", "ORDERS", name, "--json").Output()
	if err != nil {
		t.Fatalf("nats consumer info: %v %s", err, out)
	}
	var ci cliInfo
	if err := json.Unmarshal(out, &ci); err != nil {
		t.Fatalf("nats consumer info: %v: %s", err, out)
	}
	return ci
}

// auditLog is an offsets.Auditor that keeps the entries, to check what an
// apply records.
type auditLog struct {
	mu      sync.Mutex
	entries []offsets.Entry
}

func (a *auditLog) Begin(_ context.Context, e offsets.Entry) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
	return int64(len(a.entries) - 1), nil
}

func (a *auditLog) Finish(_ context.Context, id int64, e offsets.Entry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries[id] = e
	return nil
}

func (a *auditLog) last() offsets.Entry {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.entries[len(a.entries)-1]
}

func plan(t *testing.T, r *Resets, group, spec string) offsets.Plan {
	t.Helper()
	sp, err := offsets.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := offsets.MakePlan(t.Context(), r, offsets.Request{Group: group, To: sp}, time.Now())
	if err != nil {
		t.Fatalf("plan %s %s: %v", group, spec, err)
	}
	return p
}

// TestResetEverySpec plans and applies every spec on a real nats-server
// and compares where the consumer stands after with `nats consumer info`:
// delivered and ack floor at target − 1, and num_pending what the plan
// said it would be.
func TestResetEverySpec(t *testing.T) {
	w := newWorld(t)
	filtered := jetstream.ConsumerConfig{FilterSubject: "orders.a"}
	w.consumer(t, "mirror", jetstream.ConsumerConfig{}, 4) // group: copies it, at 5
	cases := []struct {
		name, spec string
		cfg        jetstream.ConsumerConfig
		target     int64
		pending    uint64 // num_pending after
		warning    bool
	}{
		{"earliest", "earliest", jetstream.ConsumerConfig{}, 1, 20, false},
		{"latest", "latest", jetstream.ConsumerConfig{}, 21, 0, false},
		{"timestamp between messages", "timestamp:" + w.times[5].Add(-5*time.Millisecond).Format(time.RFC3339Nano), jetstream.ConsumerConfig{}, 6, 15, false},
		{"timestamp after the last", "timestamp:" + w.times[19].Add(time.Hour).Format(time.RFC3339Nano), jetstream.ConsumerConfig{}, 21, 0, true},
		{"shift back", "shift:-2", jetstream.ConsumerConfig{}, 2, 19, false},
		{"shift forward", "shift:+7", jetstream.ConsumerConfig{}, 11, 10, false},
		{"shift clamped", "shift:-100", jetstream.ConsumerConfig{}, 1, 20, true},
		{"offset", "offset:15", jetstream.ConsumerConfig{}, 15, 6, false},
		{"offset past the end", "offset:99", jetstream.ConsumerConfig{}, 21, 0, true},
		{"group", "group:mirror", jetstream.ConsumerConfig{}, 5, 16, false},
		{"group with stream", "group:ORDERS/mirror", jetstream.ConsumerConfig{}, 5, 16, false},
		{"filtered earliest", "earliest", filtered, 1, 10, false},
		{"filtered offset", "offset:12", filtered, 12, 4, false},
		{"by start sequence clamped", "earliest", jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: 3}, 3, 18, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "c" + strconv.Itoa(i)
			w.consumer(t, name, tc.cfg, 3) // stands past its 3rd message
			before := w.info(t, name)
			group := "ORDERS/" + name
			p := plan(t, w.r, group, tc.spec)
			if len(p.Partitions) != 1 {
				t.Fatalf("plan has %d partitions", len(p.Partitions))
			}
			pp := p.Partitions[0]
			if pp.Topic != "ORDERS" || pp.Target == nil || *pp.Target != tc.target {
				t.Fatalf("plan target %v, want %d: %+v", pp.Target, tc.target, pp)
			}
			if pp.Current == nil || *pp.Current != int64(before.Delivered.Stream)+1 {
				t.Errorf("plan current %v, nats says delivered %d", pp.Current, before.Delivered.Stream)
			}
			if pp.PendingBefore == nil || *pp.PendingBefore != int64(before.NumPending) {
				t.Errorf("plan pending before %v, nats says %d", pp.PendingBefore, before.NumPending)
			}
			if pp.PendingAfter == nil || *pp.PendingAfter != int64(tc.pending) {
				t.Errorf("plan pending after %v, want %d", pp.PendingAfter, tc.pending)
			}
			if (pp.Warning != "") != tc.warning {
				t.Errorf("warning %q, want one: %v", pp.Warning, tc.warning)
			}
			if p.GroupState != "Empty" || p.ApplyRefused != "" {
				t.Errorf("state %s, refused %q", p.GroupState, p.ApplyRefused)
			}
			audit := &auditLog{}
			rec, err := offsets.Apply(t.Context(), w.r, p, offsets.ApplyOptions{Who: "test", Audit: audit})
			if err != nil || rec.Result != offsets.ResultOK {
				t.Fatalf("apply: %v %+v", err, rec)
			}
			after := w.info(t, name)
			if int64(after.Delivered.Stream) != tc.target-1 || int64(after.AckFloor.Stream) != tc.target-1 {
				t.Errorf("nats says delivered %d, ack floor %d; want both %d", after.Delivered.Stream, after.AckFloor.Stream, tc.target-1)
			}
			if after.NumPending != tc.pending {
				t.Errorf("nats says num_pending %d, want %d", after.NumPending, tc.pending)
			}
			if len(rec.Partitions) != 1 || rec.Partitions[0].Committed == nil || *rec.Partitions[0].Committed != tc.target {
				t.Errorf("receipt %+v", rec.Partitions)
			}
			e := audit.last()
			if e.Receipt.Result != offsets.ResultOK || e.Plan.ID != p.ID || e.Receipt.Who != "test" || e.Plan.Broker != "nats" || e.Plan.Group != group {
				t.Errorf("audit entry %+v", e)
			}
			if tc.target <= 20 {
				// The consumer now delivers the target first.
				c, err := w.js.Consumer(t.Context(), "ORDERS", name)
				if err != nil {
					t.Fatal(err)
				}
				m, err := c.Next(jetstream.FetchMaxWait(2 * time.Second))
				if err != nil {
					t.Fatal(err)
				}
				md, _ := m.Metadata()
				if int64(md.Sequence.Stream) != tc.target && tc.cfg.FilterSubject == "" {
					t.Errorf("delivered sequence %d first, want %d", md.Sequence.Stream, tc.target)
				}
			}
		})
	}
}

// TestResetRefused: an active consumer (a waiting pull request) is
// refused, so is a stale plan (delivered or only the ack floor moved), and
// a consumer the server will not reset (deliver new) cannot be planned.
// Every refusal is audited.
func TestResetRefused(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()

	t.Run("active", func(t *testing.T) {
		c := w.consumer(t, "active", jetstream.ConsumerConfig{}, 20)
		cc, err := c.Consume(func(jetstream.Msg) {})
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Stop()
		waitFor(t, "a waiting pull", func() bool { return w.info(t, "active").NumPending == 0 && waiting(t, c) > 0 })
		p := plan(t, w.r, "ORDERS/active", "earliest")
		if p.GroupState != "Active" || p.ApplyRefused == "" {
			t.Fatalf("state %s, refused %q", p.GroupState, p.ApplyRefused)
		}
		audit := &auditLog{}
		rec, err := offsets.Apply(ctx, w.r, p, offsets.ApplyOptions{Who: "test", Audit: audit})
		if !errors.Is(err, offsets.ErrGroupActive) || rec.Result != offsets.ResultRefused {
			t.Fatalf("apply: %v %+v", err, rec)
		}
		if got := w.info(t, "active").Delivered.Stream; got != 20 {
			t.Errorf("refused apply moved the consumer to %d", got)
		}
		if audit.last().Receipt.Result != offsets.ResultRefused {
			t.Errorf("audit %+v", audit.last().Receipt)
		}
	})

	t.Run("stale delivered", func(t *testing.T) {
		c := w.consumer(t, "moved", jetstream.ConsumerConfig{}, 3)
		p := plan(t, w.r, "ORDERS/moved", "earliest")
		w.take(t, c, 1, true)
		audit := &auditLog{}
		rec, err := offsets.Apply(ctx, w.r, p, offsets.ApplyOptions{Who: "test", Audit: audit})
		if !errors.Is(err, offsets.ErrStale) || rec.Result != offsets.ResultStale || audit.last().Receipt.Result != offsets.ResultStale {
			t.Fatalf("apply: %v %+v", err, rec)
		}
		if got := w.info(t, "moved").Delivered.Stream; got != 4 {
			t.Errorf("stale apply moved the consumer to %d", got)
		}
	})

	t.Run("stale ack floor", func(t *testing.T) {
		c := w.consumer(t, "acked", jetstream.ConsumerConfig{}, 3)
		batch, err := c.FetchNoWait(1)
		if err != nil {
			t.Fatal(err)
		}
		m := <-batch.Messages()
		p := plan(t, w.r, "ORDERS/acked", "earliest")
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = offsets.Apply(ctx, w.r, p, offsets.ApplyOptions{Who: "test"})
		if !errors.Is(err, offsets.ErrStale) {
			t.Fatalf("apply after an ack: %v", err)
		}
	})

	t.Run("deliver new", func(t *testing.T) {
		w.consumer(t, "fresh", jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy}, 0)
		sp, _ := offsets.ParseSpec("earliest")
		_, err := offsets.MakePlan(ctx, w.r, offsets.Request{Group: "ORDERS/fresh", To: sp}, time.Now())
		if !errors.Is(err, offsets.ErrUnsupported) {
			t.Fatalf("plan of a deliver-new consumer: %v", err)
		}
	})

	t.Run("bad names", func(t *testing.T) {
		for _, g := range []string{"ORDERS", "ORDERS/", "ORDERS/nobody", "NOSTREAM/x"} {
			sp, _ := offsets.ParseSpec("earliest")
			if _, err := offsets.MakePlan(ctx, w.r, offsets.Request{Group: g, To: sp}, time.Now()); !errors.Is(err, offsets.ErrScope) {
				t.Errorf("plan %q: %v, want a scope error", g, err)
			}
		}
		sp, _ := offsets.ParseSpec("group:OTHER/x")
		if _, err := offsets.MakePlan(ctx, w.r, offsets.Request{Group: "ORDERS/moved", To: sp}, time.Now()); !errors.Is(err, offsets.ErrSpec) {
			t.Errorf("copy from another stream: %v", err)
		}
		sp, _ = offsets.ParseSpec("earliest")
		req := offsets.Request{Group: "ORDERS/moved", To: sp, Topics: []offsets.TopicScope{{Topic: "OTHER"}}}
		if _, err := offsets.MakePlan(ctx, w.r, req, time.Now()); !errors.Is(err, offsets.ErrScope) {
			t.Errorf("scope of another stream: %v", err)
		}
	})
}

// TestPauseResume pauses a consumer and resumes it, each visible in
// `nats consumer info`; a paused consumer with a waiting pull may be
// reset (it delivers nothing until resumed).
func TestPauseResume(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	c := w.consumer(t, "worker", jetstream.ConsumerConfig{}, 20)
	until := time.Now().Add(time.Hour).Truncate(time.Second)
	st, err := w.r.Pause(ctx, "ORDERS/worker", until)
	if err != nil || !st.Paused || !st.Until.Equal(until) {
		t.Fatalf("pause: %+v %v", st, err)
	}
	ci := w.info(t, "worker")
	if !ci.Paused || ci.Config.PauseUntil == nil || !ci.Config.PauseUntil.Equal(until) {
		t.Fatalf("nats says paused %v until %v", ci.Paused, ci.Config.PauseUntil)
	}
	if got, err := w.r.PauseOf(ctx, "ORDERS/worker"); err != nil || !got.Until.Equal(until) {
		t.Errorf("PauseOf: %+v %v", got, err)
	}

	got := make(chan jetstream.Msg, 10)
	cc, err := c.Consume(func(m jetstream.Msg) { got <- m })
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	waitFor(t, "a waiting pull", func() bool { return waiting(t, c) > 0 })
	p := plan(t, w.r, "ORDERS/worker", "offset:18")
	if p.GroupState != "Paused" || p.ApplyRefused != "" {
		t.Fatalf("paused plan: state %s, refused %q", p.GroupState, p.ApplyRefused)
	}
	if _, err := offsets.Apply(ctx, w.r, p, offsets.ApplyOptions{Who: "test"}); err != nil {
		t.Fatalf("apply on a paused consumer: %v", err)
	}
	if got := w.info(t, "worker").Delivered.Stream; got != 17 {
		t.Errorf("nats says delivered %d after the reset, want 17", got)
	}

	if len(got) != 0 {
		t.Fatalf("a paused consumer delivered %d message(s)", len(got))
	}
	st, err = w.r.Resume(ctx, "ORDERS/worker")
	if err != nil || st.Paused {
		t.Fatalf("resume: %+v %v", st, err)
	}
	if ci := w.info(t, "worker"); ci.Paused {
		t.Error("nats says still paused after resume")
	}
	// Resumed, the waiting pull gets the reset's target first.
	select {
	case next := <-got:
		if md, _ := next.Metadata(); md.Sequence.Stream != 18 {
			t.Errorf("first delivery after resume: sequence %d, want 18", md.Sequence.Stream)
		}
	case <-time.After(10 * time.Second):
		t.Error("nothing delivered 10s after resume")
	}

	if _, err := w.r.Pause(ctx, "ORDERS/worker", time.Now().Add(-time.Minute)); !errors.Is(err, offsets.ErrPauseInPast) {
		t.Errorf("pause into the past: %v", err)
	}
	if _, err := w.r.Pause(ctx, "ORDERS/nobody", until); !errors.Is(err, offsets.ErrScope) {
		t.Errorf("pause of an unknown consumer: %v", err)
	}
}

func waiting(t *testing.T, c jetstream.Consumer) int {
	t.Helper()
	info, err := c.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info.NumWaiting
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 10s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSupports refuses servers older than the call, naming the version.
func TestSupports(t *testing.T) {
	for _, tc := range []struct {
		version string
		f       Feature
		ok      bool
	}{
		{"2.15.3", Reset, true},
		{"2.14.0", Reset, true},
		{"v2.14.0-beta.1", Reset, true},
		{"2.13.9", Reset, false},
		{"2.10.22", Pause, false},
		{"2.11.0", Pause, true},
		{"3.0.0", Reset, true},
		{"1.99.99", Pause, false},
		{"unknown", Reset, true},
	} {
		err := Supports(tc.version, tc.f)
		if (err == nil) != tc.ok {
			t.Errorf("%s %s: %v, want ok %v", tc.version, tc.f.Name, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, offsets.ErrUnsupported) || !containsAll(err.Error(), tc.version, tc.f.Name)) {
			t.Errorf("%s: %v does not name the version and the call", tc.version, err)
		}
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
