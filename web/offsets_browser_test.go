package web

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
)

// resetSite serves e's cluster through a real collector, with auth (none
// when not given: everyone is admin), e's offset resets and a replay
// service over the same audit store.
func resetSite(t *testing.T, e *resetEnv, auth ...config.Auth) string {
	t.Helper()
	src, err := kafka.New(kafka.Options{Cluster: testenv.KafkaCluster(t, "prod", e.c.ListenAddrs())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	col := collectors.New([]collectors.Source{src}, collectors.Options{
		Interval: time.Second, Timeout: 5 * time.Second, History: time.Hour, Evaluator: alerts.NewEvaluator(alerts.StatusOptions{Window: 5}),
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { col.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	// The replay service shares the audit store, as in serve.
	dlqs, err := dlqreplay.New(dlqreplay.Options{Store: e.resets.store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dlqs.Close)
	a := config.Auth{Mode: config.AuthNone}
	if len(auth) > 0 {
		a = auth[0]
	}
	ts := httptest.NewServer(New(Options{Monitor: col, Metrics: col.Handler(prometheus.NewRegistry()), DLQs: dlqs, Offsets: e.resets, Auth: a}))
	t.Cleanup(ts.Close)
	// The group page exists once the first poll saw the group.
	deadline := time.Now().Add(20 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/api/v1/groups/prod/billing", nil)
		req.SetBasicAuth("victor", "viewer-pw")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the collector did not see group billing")
		}
		time.Sleep(200 * time.Millisecond)
	}
	return ts.URL
}

// asUser sends user's basic credentials with every request of b.
func asUser(t *testing.T, b *browser, user, pw string) {
	t.Helper()
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
	if _, err := chromedp.Call(b.ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": auth}}); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserOffsetReset walks the whole reset as operator alice on a
// server with basic auth: the form, the review of the plan (before /
// after / Δ and the totals), the typed group name, the receipt, the
// entry in the audit store and the apply listed on the replays page. With
// QW_OFFSET_SHOTS=dir it saves the steps there.
func TestBrowserOffsetReset(t *testing.T) {
	b := newBrowser(t, 1280, 860)
	e := newResetEnv(t)
	base := resetSite(t, e, authConfig(t, config.AuthBasic))
	asUser(t, b, "alice", "wonderland")
	shots := os.Getenv("QW_OFFSET_SHOTS")
	shot := func(name string) {
		if shots == "" {
			return
		}
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	b.run(t, chromedp.Navigate(base+"/kafka/prod/groups/billing"))
	b.waitJS(t, "the reset button", `document.querySelector('[data-reset-open]')`, 20*time.Second)
	b.run(t, chromedp.Click(chromedp.CSS("[data-reset-open]")))
	b.waitJS(t, "the form", `document.getElementById('reset').open && !document.getElementById('r-step-form').hidden`, 5*time.Second)
	evalJS[bool](t, b, `(() => { const k = document.getElementById('r-kind'); k.value = 'shift'; k.dispatchEvent(new Event('change')); return true })()`)
	b.run(t, chromedp.SendKeys(chromedp.ID("r-n"), "-3"))
	shot("form")
	b.run(t, chromedp.Click(chromedp.ID("r-plan")))
	b.waitJS(t, "the review", `!document.getElementById('r-step-review').hidden`, 10*time.Second)
	if s := evalJS[string](t, b, `document.getElementById('r-summary').textContent`); !strings.Contains(s, "Re-process 6 messages on 2 partitions") {
		t.Errorf("summary %q", s)
	}
	planID := evalJS[string](t, b, `document.getElementById('r-plan-id').textContent`)
	rows := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#r-rows tr')).map(tr => Array.from(tr.cells).slice(0, 5).map(td => td.textContent).join(' '))`)
	if strings.Join(rows, "|") != "orders 0 4 1 -3|orders 1 10 7 -3" {
		t.Errorf("review rows %q", rows)
	}
	if evalJS[bool](t, b, `!document.getElementById('r-apply').disabled`) {
		t.Error("Apply enabled before the group name was typed")
	}
	b.run(t, chromedp.SendKeys(chromedp.ID("r-typed"), "billin"))
	if evalJS[bool](t, b, `!document.getElementById('r-apply').disabled`) {
		t.Error("Apply enabled by a part of the group name")
	}
	b.run(t, chromedp.SendKeys(chromedp.ID("r-typed"), "g"))
	shot("review")
	b.run(t, chromedp.Click(chromedp.ID("r-apply")))
	b.waitJS(t, "the receipt", `!document.getElementById('r-step-receipt').hidden`, 10*time.Second)
	if s := evalJS[string](t, b, `document.getElementById('r-result').textContent`); !strings.Contains(s, "Committed 2 of 2 partitions") {
		t.Errorf("receipt %q", s)
	}
	if n := evalJS[int](t, b, `document.querySelectorAll('#r-receipt-rows td.res-committed').length`); n != 2 {
		t.Errorf("%d partitions committed in the receipt", n)
	}
	shot("receipt")
	got, err := e.adm.FetchOffsets(context.Background(), "billing")
	if err != nil || got["orders"][0].At != 1 || got["orders"][1].At != 7 {
		t.Errorf("committed: %+v %v", got, err)
	}

	logged, err := e.resets.store.OffsetResets(context.Background(), "prod", "billing", 10)
	switch {
	case err != nil:
		t.Fatal(err)
	case len(logged) != 1:
		t.Fatalf("audit store holds %d resets of billing, want 1", len(logged))
	case logged[0].Who != "alice" || logged[0].Result != string(offsets.ResultOK) || logged[0].PlanID != planID || planID == "":
		t.Errorf("audit entry: who %q, result %q, plan %q (the review showed %q)", logged[0].Who, logged[0].Result, logged[0].PlanID, planID)
	}

	b.run(t, chromedp.Navigate(base+"/replays"))
	b.waitJS(t, "the resets section", `document.getElementById('resets-table')`, 10*time.Second)
	if s := evalJS[string](t, b, `document.getElementById('resets-table').innerText`); !strings.Contains(s, "billing") || !strings.Contains(s, "shift:-3") || !strings.Contains(s, "2 / 2") || !strings.Contains(s, "alice") {
		t.Errorf("replays page resets: %q", s)
	}
	shot("replays")
	b.checkClean(t)
}

// TestBrowserOffsetResetViewer: on a server with basic auth, viewer victor
// sees the group page without "Reset offsets…" (nor the dialog), the
// API refuses his plan and apply with 403 even from the page itself, and
// nothing is committed or recorded; operator alice, on the same server,
// sees the button.
func TestBrowserOffsetResetViewer(t *testing.T) {
	e := newResetEnv(t)
	base := resetSite(t, e, authConfig(t, config.AuthBasic))
	vb := newBrowser(t, 1280, 860)
	asUser(t, vb, "victor", "viewer-pw")
	vb.run(t, chromedp.Navigate(base+"/kafka/prod/groups/billing"))
	vb.waitJS(t, "the group page", `document.querySelector('.ghead-title h1')?.textContent === 'billing'`, 20*time.Second)
	if who := evalJS[string](t, vb, `document.querySelector('.who').textContent`); !strings.Contains(who, "victor") || !strings.Contains(who, "viewer") {
		t.Errorf("header shows %q", who)
	}
	if n := evalJS[int](t, vb, `document.querySelectorAll('[data-reset-open], #reset, #r-apply').length`); n != 0 {
		t.Errorf("the viewer sees %d reset controls", n)
	}
	if s := evalJS[string](t, vb, `document.body.innerText`); strings.Contains(s, "Reset offsets") {
		t.Error("the viewer's page offers Reset offsets")
	}
	if dir := os.Getenv("QW_OFFSET_SHOTS"); dir != "" {
		png, err := chromedp.Run(vb.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "viewer.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vb.checkClean(t)
	// The page's own origin, as a script on it would call: still 403
	// (the browser logs both; the page was checked clean above).
	evalJS[bool](t, vb, `(() => {
		const post = (path, body) => fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)}).then(r => r.status);
		Promise.all([post('/api/v1/groups/prod/billing/offsets/plan', {to: 'earliest'}),
			post('/api/v1/groups/prod/billing/offsets/apply', {plan_id: '000000000000000000000000'})]).then(c => { window.qwCodes = c });
		return true;
	})()`)
	vb.waitJS(t, "the viewer's API answers", `Array.isArray(window.qwCodes)`, 10*time.Second)
	codes := evalJS[[]int](t, vb, `window.qwCodes`)
	if len(codes) != 2 || codes[0] != http.StatusForbidden || codes[1] != http.StatusForbidden {
		t.Errorf("viewer plan, apply: %v, want 403 403", codes)
	}
	got, err := e.adm.FetchOffsets(context.Background(), "billing")
	if err != nil || got["orders"][0].At != 4 || got["orders"][1].At != 10 {
		t.Errorf("committed after the viewer's requests: %+v %v", got, err)
	}
	if logged, err := e.resets.store.OffsetResets(context.Background(), "", "", 10); err != nil || len(logged) != 0 {
		t.Errorf("audit after the viewer's requests: %+v %v", logged, err)
	}

	ob := newBrowser(t, 1280, 860)
	asUser(t, ob, "alice", "wonderland")
	ob.run(t, chromedp.Navigate(base+"/kafka/prod/groups/billing"))
	ob.waitJS(t, "the operator's reset button", `document.querySelector('[data-reset-open]')`, 20*time.Second)
	ob.checkClean(t)
}

// TestBrowserOffsetResetRefused: the review of a group with members says
// plainly that apply will be refused, and offers no Apply.
func TestBrowserOffsetResetRefused(t *testing.T) {
	b := newBrowser(t, 1280, 860)
	e := newResetEnv(t)
	e.join(t, "live")
	base := resetSite(t, e)
	b.run(t, chromedp.Navigate(base+"/kafka/prod/groups/live"))
	b.waitJS(t, "the reset button", `document.querySelector('[data-reset-open]')`, 20*time.Second)
	b.run(t, chromedp.Click(chromedp.CSS("[data-reset-open]")), chromedp.Click(chromedp.ID("r-plan")))
	b.waitJS(t, "the review", `!document.getElementById('r-step-review').hidden`, 10*time.Second)
	if s := evalJS[string](t, b, `document.getElementById('r-refused').hidden ? '' : document.getElementById('r-refused').textContent`); !strings.Contains(s, "Apply will be refused") || !strings.Contains(s, "stop its consumers first") {
		t.Errorf("refusal %q", s)
	}
	if evalJS[bool](t, b, `!document.getElementById('r-apply').disabled || !document.getElementById('r-typed-field').hidden`) {
		t.Error("Apply offered for a group with members")
	}
	if dir := os.Getenv("QW_OFFSET_SHOTS"); dir != "" {
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "refused.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.checkClean(t)
}
