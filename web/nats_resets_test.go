package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/alerts"
	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/collectors"
	collnats "github.com/queuewatch/queuewatch/collectors/nats"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
	offsetsnats "github.com/queuewatch/queuewatch/offsets/nats"
	"github.com/queuewatch/queuewatch/store"
)

// natsActions is app's reset service in small over one real NATS cluster:
// plans and applies through package offsets, pauses through the broker,
// everything recorded in a real audit store (kafkaResets' Begin/Finish).
type natsActions struct {
	kafkaResets
	n *offsetsnats.Resets
}

func (a *natsActions) Plan(ctx context.Context, cluster string, req offsets.Request) (offsets.Plan, error) {
	return a.PlanOn(ctx, "nats", cluster, req)
}

func (a *natsActions) PlanOn(ctx context.Context, broker, cluster string, req offsets.Request) (offsets.Plan, error) {
	if broker != "nats" || cluster != a.n.Cluster() {
		return offsets.Plan{}, offsets.ErrScope // stands in for app's not-found
	}
	return offsets.MakePlan(ctx, a.n, req, time.Now())
}

func (a *natsActions) Apply(ctx context.Context, plan offsets.Plan, who string) (offsets.Receipt, error) {
	return offsets.Apply(ctx, a.n, plan, offsets.ApplyOptions{Who: who, Audit: &a.kafkaResets})
}

func (a *natsActions) Pause(ctx context.Context, _, _, group string, until time.Time, who string) (offsets.PauseState, error) {
	st, err := a.n.Pause(ctx, group, until)
	a.record(ctx, group, who, "paused", st, err)
	return st, err
}

func (a *natsActions) Resume(ctx context.Context, _, _, group, who string) (offsets.PauseState, error) {
	st, err := a.n.Resume(ctx, group)
	a.record(ctx, group, who, "resumed", st, err)
	return st, err
}

// RecentPause is the store's last pause of group, made after polled, as
// app's reset service answers it.
func (a *natsActions) RecentPause(ctx context.Context, broker, cluster, group string, polled time.Time) (offsets.PauseState, bool, error) {
	p, ok, err := a.store.ConsumerPause(ctx, broker, cluster, group)
	if err != nil || !ok || !polled.Before(p.At) {
		return offsets.PauseState{}, false, err
	}
	return offsets.PauseState{Paused: p.Paused, Until: p.Until}, true, nil
}

// record logs a pause or resume and keeps one that took effect for the
// consumer page, as app's reset service does.
func (a *natsActions) record(ctx context.Context, group, who, result string, st offsets.PauseState, err error) {
	if err == nil {
		_ = a.store.PutConsumerPause(ctx, store.ConsumerPause{
			Broker: "nats", Cluster: a.n.Cluster(), Group: group, Paused: st.Paused, Until: st.Until, At: time.Now(),
		}, 24*time.Hour)
	}
	if err != nil {
		result = "failed"
	}
	_, _ = a.store.RecordOffsetReset(ctx, store.OffsetReset{
		At: time.Now(), Who: who, Broker: "nats", Cluster: a.n.Cluster(), Group: group, Result: result,
		Entry: json.RawMessage(`{"action":"pause","state":{"paused":false}}`),
	})
}

// natsResetEnv is a real nats-server with stream ORDERS of 20 messages
// and consumer billing, a pull consumer that acked 12 of them.
type natsResetEnv struct {
	url, cli string
	cluster  *brokernats.Cluster
	js       jetstream.JetStream
	actions  *natsActions
}

func newNATSResetEnv(t *testing.T) *natsResetEnv {
	t.Helper()
	srv := testenv.NATSProcess(t)
	e := &natsResetEnv{url: srv.URL, cli: testenv.NATSCLI(t)}
	c, err := brokernats.New(config.NATS{Name: "js", URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	e.cluster = c
	nc, js, err := c.Connect(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	e.js = js
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := js.Publish(ctx, "orders.new", []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", jetstream.ConsumerConfig{Durable: "billing", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.FetchNoWait(12)
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
	auditStore, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	n := offsetsnats.New(c)
	t.Cleanup(func() { n.Close(); _ = auditStore.Close() })
	e.actions = &natsActions{kafkaResets: kafkaResets{store: auditStore}, n: n}
	return e
}

// info is `nats consumer info ORDERS name --json`.
func (e *natsResetEnv) info(t *testing.T, name string) (delivered uint64, paused bool) {
	t.Helper()
	out, err := exec.CommandContext(context.Background(), e.cli, "--server", e.url, "consumer", "info", "ORDERS", name, "--json").Output()
	if err != nil {
		t.Fatalf("nats consumer info: %v", err)
	}
	var ci struct {
		Delivered struct {
			Stream uint64 `json:"stream_seq"`
		} `json:"delivered"`
		Paused bool `json:"paused"`
	}
	if err := json.Unmarshal(out, &ci); err != nil {
		t.Fatal(err)
	}
	return ci.Delivered.Stream, ci.Paused
}

// site serves e's cluster through a real collector polling every 300 ms,
// with auth as given and e's consumer actions.
func (e *natsResetEnv) site(t *testing.T, auth config.Auth) *Server {
	t.Helper()
	src, err := collnats.New(collnats.Options{Cluster: e.cluster})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	col := collectors.New([]collectors.Source{src}, collectors.Options{
		Interval: 300 * time.Millisecond, Timeout: 5 * time.Second, History: time.Hour, Evaluator: alerts.NewEvaluator(alerts.StatusOptions{Window: 5}),
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { col.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	s := New(Options{Monitor: col, Metrics: col.Handler(prometheus.NewRegistry()), Auth: auth, Offsets: e.actions})
	seen := func() bool {
		for _, snap := range col.Snapshots() {
			if _, ok := snap.Consumer("ORDERS", "billing"); ok {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(20 * time.Second)
	for !seen() {
		if time.Now().After(deadline) {
			t.Fatal("the collector did not see consumer billing")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return s
}

// checkConsumerActionsAPI sends the consumer reset and pause endpoints
// the requests TestAPIMatchesOpenAPI validates against the document: a
// success and errors for each.
func checkConsumerActionsAPI(t *testing.T, a *apiChecker, alice, victor reqOpt) {
	e := newNATSResetEnv(t)
	s := e.site(t, authConfig(t, config.AuthBasic))
	base := "/nats/consumers/{cluster}/{stream}/{consumer}"
	billing := "/api/v1/nats/consumers/js/ORDERS/billing"
	a.check(s, "POST", base+"/offsets/plan", billing+"/offsets/plan", `{"to":"earliest"}`, alice)
	a.check(s, "POST", base+"/offsets/plan", billing+"/offsets/plan", `{"to":"offset:3","topics":["OTHER"]}`, alice)
	a.check(s, "POST", base+"/offsets/plan", billing+"/offsets/plan", `{"to":"earliest"}`, victor)
	a.check(s, "POST", base+"/offsets/plan", "/api/v1/nats/consumers/js/ORDERS/nobody/offsets/plan", `{"to":"earliest"}`, alice)
	var plan offsets.Plan
	rec := a.check(s, "POST", base+"/offsets/plan", billing+"/offsets/plan", `{"to":"offset:5"}`, alice)
	if err := json.Unmarshal(rec.Body.Bytes(), &plan); err != nil || plan.ID == "" {
		t.Fatalf("plan: %v %s", err, rec.Body)
	}
	a.check(s, "POST", base+"/offsets/apply", billing+"/offsets/apply", `{"plan_id":"nope"}`, alice)
	if rec := a.check(s, "POST", base+"/offsets/apply", billing+"/offsets/apply", `{"plan_id":"`+plan.ID+`"}`, alice); rec.Code != http.StatusOK {
		t.Errorf("apply: %d %s", rec.Code, rec.Body)
	}
	if got, _ := e.info(t, "billing"); got != 4 {
		t.Errorf("nats says delivered %d after the API apply, want 4", got)
	}
	a.check(s, "GET", base+"/offsets/resets", billing+"/offsets/resets", "", victor)
	a.check(s, "GET", base+"/offsets/resets", billing+"/offsets/resets?limit=0", "", victor)
	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	a.check(s, "POST", base+"/pause", billing+"/pause", `{"pause_until":"`+until+`"}`, alice)
	if _, paused := e.info(t, "billing"); !paused {
		t.Error("nats says billing is not paused after the API pause")
	}
	a.check(s, "POST", base+"/pause", billing+"/pause", `{"pause_until":"2001-01-01T00:00:00Z"}`, alice)
	a.check(s, "POST", base+"/pause", billing+"/pause", `{}`, alice)
	a.check(s, "POST", base+"/pause", billing+"/pause", `{"pause_until":"`+until+`"}`, victor)
	a.check(s, "POST", base+"/resume", billing+"/resume", ``, alice)
	if _, paused := e.info(t, "billing"); paused {
		t.Error("nats says billing is paused after the API resume")
	}
	a.check(s, "POST", base+"/resume", billing+"/resume", ``, victor)
	a.check(s, "POST", base+"/resume", "/api/v1/nats/consumers/js/ORDERS/nobody/resume", ``, alice)
	list, err := e.actions.store.OffsetResets(context.Background(), "js", "ORDERS/billing", 10)
	if err != nil || len(list) != 4 || list[0].Result != "resumed" || list[1].Result != "failed" || list[2].Result != "paused" || list[3].Result != "ok" || list[3].Who != "alice" {
		t.Errorf("audit log: %+v %v", list, err)
	}
}

// TestConsumerPageButtons: an operator sees Reset… and Pause… on a
// consumer's page, a viewer neither.
func TestConsumerPageButtons(t *testing.T) {
	e := newNATSResetEnv(t)
	s := e.site(t, authConfig(t, config.AuthBasic))
	get := func(opt reqOpt) string {
		r := httptest.NewRequest("GET", "/nats/js/streams/ORDERS/consumers/billing", nil)
		opt(r)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		return rec.Body.String()
	}
	op, viewer := get(basic("alice", "wonderland")), get(basic("victor", "viewer-pw"))
	for _, b := range []string{"data-reset-open", "data-pause-open", `id="reset"`, `id="pause"`} {
		if !strings.Contains(op, b) {
			t.Errorf("operator's page lacks %s", b)
		}
		if strings.Contains(viewer, b) {
			t.Errorf("viewer's page has %s", b)
		}
	}
}

// TestBrowserConsumerReset walks a JetStream consumer's reset on its page
// (form, review with pending before → after, typed name, receipt), then
// pauses it (the deadline shown) and resumes it, each checked with
// `nats consumer info`. With QW_OFFSET_SHOTS=dir it saves screenshots.
func TestBrowserConsumerReset(t *testing.T) {
	b := newBrowser(t, 1280, 860)
	e := newNATSResetEnv(t)
	ts := httptest.NewServer(e.site(t, config.Auth{}))
	t.Cleanup(ts.Close)
	shot := func(name string) {
		dir := os.Getenv("QW_OFFSET_SHOTS")
		if dir == "" {
			return
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	page := ts.URL + "/nats/js/streams/ORDERS/consumers/billing"
	b.run(t, chromedp.Navigate(page))
	b.waitJS(t, "the reset button", `document.querySelector('[data-reset-open]')`, 20*time.Second)
	b.run(t, chromedp.Click(chromedp.CSS("[data-reset-open]")))
	b.waitJS(t, "the form", `document.getElementById('reset').open && !document.getElementById('r-step-form').hidden`, 5*time.Second)
	evalJS[bool](t, b, `(() => { const k = document.getElementById('r-kind'); k.value = 'offset'; k.dispatchEvent(new Event('change')); return true })()`)
	if s := evalJS[string](t, b, `document.getElementById('r-n-label').textContent`); s != "Stream sequence" {
		t.Errorf("number label %q", s)
	}
	b.run(t, chromedp.SendKeys(chromedp.ID("r-n"), "5"))
	shot("nats-form")
	b.run(t, chromedp.Click(chromedp.ID("r-plan")))
	b.waitJS(t, "the review", `!document.getElementById('r-step-review').hidden`, 10*time.Second)
	if s := evalJS[string](t, b, `document.getElementById('r-summary').textContent`); s != "Re-process 8 messages: next sequence 13 → 5. Pending 8 → 16 messages." {
		t.Errorf("summary %q", s)
	}
	rows := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#r-rows tr')).map(tr => Array.from(tr.cells).slice(0, 5).map(td => td.textContent).join(' '))`)
	if strings.Join(rows, "|") != "ORDERS 0 13 5 -8" {
		t.Errorf("review rows %q", rows)
	}
	b.run(t, chromedp.SendKeys(chromedp.ID("r-typed"), "billing"))
	shot("nats-review")
	b.run(t, chromedp.Click(chromedp.ID("r-apply")))
	b.waitJS(t, "the receipt", `!document.getElementById('r-step-receipt').hidden`, 10*time.Second)
	if s := evalJS[string](t, b, `document.getElementById('r-result').textContent`); !strings.Contains(s, "Reset: the consumer delivers sequence 5 next") {
		t.Errorf("receipt %q", s)
	}
	shot("nats-receipt")
	if got, _ := e.info(t, "billing"); got != 4 {
		t.Errorf("nats says delivered %d after the reset, want 4", got)
	}

	b.run(t, chromedp.Navigate(page))
	b.waitJS(t, "the pause button", `document.querySelector('[data-pause-open]')`, 10*time.Second)
	b.run(t, chromedp.Click(chromedp.CSS("[data-pause-open]")))
	b.waitJS(t, "the pause dialog", `document.getElementById('pause').open`, 5*time.Second)
	shot("nats-pause")
	b.run(t, chromedp.Click(chromedp.ID("p-go")))
	b.waitJS(t, "the deadline", `document.getElementById('pause-until') && document.querySelector('[data-resume]')`, 10*time.Second)
	if s := evalJS[string](t, b, `document.getElementById('pause-until').textContent`); !strings.Contains(s, "left") {
		t.Errorf("pause deadline %q", s)
	}
	if _, paused := e.info(t, "billing"); !paused {
		t.Error("nats says billing is not paused after Pause")
	}
	shot("nats-paused")
	b.run(t, chromedp.Click(chromedp.CSS("[data-resume]")))
	b.waitJS(t, "the pause button back", `document.querySelector('[data-pause-open]') && !document.getElementById('pause-until')`, 10*time.Second)
	if _, paused := e.info(t, "billing"); paused {
		t.Error("nats says billing is still paused after Resume")
	}
	b.checkClean(t)
}
