package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// shareResetSite serves e's cluster through a real collector (which lists
// share group workers), with auth none, e's resets and a replay service
// over the same audit store.
func shareResetSite(t *testing.T, e *shareResetEnv) string {
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
	dlqs, err := dlqreplay.New(dlqreplay.Options{Store: e.resets.store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dlqs.Close)
	ts := httptest.NewServer(New(Options{Monitor: col, Metrics: col.Handler(prometheus.NewRegistry()), DLQs: dlqs, Offsets: e.resets}))
	t.Cleanup(ts.Close)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(ts.URL + "/kafka/prod/share-groups/workers")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the collector did not see share group workers")
		}
	}
	return ts.URL
}

// TestBrowserShareOffsetReset walks a share group's reset on its page: the
// form offers only the specs a share group takes, the review shows start
// offsets before / after / Δ and the totals, Apply waits for the typed
// name, the receipt says what the broker holds, and the replays page
// lists it as a share group's. With QW_OFFSET_SHOTS=dir it saves the
// steps there.
func TestBrowserShareOffsetReset(t *testing.T) {
	b := newBrowser(t, 1280, 860)
	e := newShareResetEnv(t)
	base := shareResetSite(t, e)
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

	b.run(t, chromedp.Navigate(base+"/kafka/prod/share-groups/workers"))
	b.waitJS(t, "the reset button", `document.querySelector('[data-reset-open]')`, 20*time.Second)
	b.run(t, chromedp.Click(chromedp.CSS("[data-reset-open]")))
	b.waitJS(t, "the form", `document.getElementById('reset').open && !document.getElementById('r-step-form').hidden`, 5*time.Second)
	if kinds := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#r-kind option')).map(o => o.value)`); strings.Join(kinds, " ") != "earliest latest timestamp offset" {
		t.Errorf("specs offered %v; want those of kafka-share-groups", kinds)
	}
	if s := evalJS[string](t, b, `document.getElementById('r-title').textContent`); !strings.Contains(s, "Reset start offsets of share group") {
		t.Errorf("title %q", s)
	}
	shot("share-form")
	b.run(t, chromedp.Click(chromedp.ID("r-plan")))
	b.waitJS(t, "the review", `!document.getElementById('r-step-review').hidden`, 10*time.Second)
	if s := evalJS[string](t, b, `document.getElementById('r-summary').textContent`); !strings.Contains(s, "Re-process 11 messages on 2 partitions") {
		t.Errorf("summary %q", s)
	}
	rows := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#r-rows tr')).map(tr => Array.from(tr.cells).slice(0, 5).map(td => td.textContent).join(' '))`)
	if strings.Join(rows, "|") != "orders 0 3 0 -3|orders 1 8 0 -8" {
		t.Errorf("review rows %q", rows)
	}
	b.run(t, chromedp.SendKeys(chromedp.ID("r-typed"), "worker"))
	if evalJS[bool](t, b, `!document.getElementById('r-apply').disabled`) {
		t.Error("Apply enabled by a part of the group name")
	}
	b.run(t, chromedp.SendKeys(chromedp.ID("r-typed"), "s"))
	shot("share-review")
	b.run(t, chromedp.Click(chromedp.ID("r-apply")))
	b.waitJS(t, "the receipt", `!document.getElementById('r-step-receipt').hidden`, 10*time.Second)
	if s := evalJS[string](t, b, `document.getElementById('r-result').textContent`); !strings.Contains(s, "Committed 2 of 2 partitions") {
		t.Errorf("receipt %q", s)
	}
	shot("share-receipt")
	if got := e.starts(); got != [2]int64{0, 0} {
		t.Errorf("start offsets %v after the apply, want [0 0]", got)
	}

	b.run(t, chromedp.Navigate(base+"/replays"))
	b.waitJS(t, "the resets section", `document.getElementById('resets-table')`, 10*time.Second)
	if s := evalJS[string](t, b, `document.getElementById('resets-table').innerText`); !strings.Contains(s, "workers") || !strings.Contains(s, "share group") || !strings.Contains(s, "2 / 2") {
		t.Errorf("replays page resets: %q", s)
	}
	if href := evalJS[string](t, b, `document.querySelector('#resets-table a').getAttribute('href')`); href != "/kafka/prod/share-groups/workers" {
		t.Errorf("the reset links to %q, not the share group's page", href)
	}
	b.checkClean(t)
}
