package app

import (
	"context"
	"errors"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestBrowserDemoResetsAStoppedGroup is what a newcomer does in the demo:
// open billing-stopped's page, plan a reset to the earliest offsets,
// review it, type the group's name and apply it. The demo's Kafka and NATS
// clusters are both "demo"; the reset is Kafka's all the same.
func TestBrowserDemoResetsAStoppedGroup(t *testing.T) {
	testenv.Slow(t, "the demo in a real browser")
	base := startDemo(t)
	demoPolled(t, base)
	ctx := chromium(t)
	do := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(c, actions...); err != nil {
			t.Fatal(err)
		}
	}
	eval := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return v
	}
	wait := func(what, js string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); eval("String(!!("+js+"))") != "true"; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; page: %.1500s", what, eval("document.body.innerText"))
			}
		}
	}
	do(chromedp.Navigate(base + "/kafka/demo/groups/billing-stopped"))
	wait("the reset button", `document.querySelector('[data-reset-open]')`)
	do(chromedp.Click(chromedp.CSS("[data-reset-open]")))
	wait("the form", `document.getElementById('reset').open && !document.getElementById('r-step-form').hidden`)
	eval(`(() => { const k = document.getElementById('r-kind'); k.value = 'earliest'; k.dispatchEvent(new Event('change')); return '' })()`)
	do(chromedp.Click(chromedp.ID("r-plan")))
	wait("the review", `!document.getElementById('r-step-review').hidden || document.querySelector('#reset .error:not([hidden])')`)
	if s := eval(`document.getElementById('r-summary').textContent`); !strings.Contains(s, "Re-process") {
		t.Fatalf("review: %q; dialog: %.800s", s, eval(`document.getElementById('reset').innerText`))
	}
	do(chromedp.SendKeys(chromedp.ID("r-typed"), "billing-stopped"))
	do(chromedp.Click(chromedp.ID("r-apply")))
	wait("the receipt", `!document.getElementById('r-step-receipt').hidden`)
	if s := eval(`document.getElementById('r-result').textContent`); !strings.Contains(s, "Committed 3 of 3 partitions") {
		t.Errorf("receipt: %q", s)
	}
}

// demoPolled waits for the demo's first poll to show billing-stopped.
func demoPolled(t *testing.T, base string) {
	t.Helper()
	eventually(t, "the demo's groups polled", func() bool {
		resp, err := http.Get(base + "/api/v1/groups/demo/billing-stopped")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// startDemo runs the demo (embedded Kafka, NATS and outbox; no RabbitMQ
// or SQS) until the test ends and returns its address.
func startDemo(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Demo(ctx, DemoOptions{Listen: "127.0.0.1:0", Listening: func(a string) { addr <- a }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Logf("the demo stopped: %v", err)
		}
	})
	select {
	case a := <-addr:
		return "http://" + a
	case err := <-done:
		t.Fatalf("the demo stopped before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the demo did not listen")
	}
	return ""
}

// chromium is a headless chromium tab, closed when the test ends.
func chromium(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		testenv.Require(t, "chromium (apt-get install chromium)", errors.New("not found on PATH"))
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(path), chromedp.Flag("headless", true), chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	// The first action starts the browser; on ctx itself, so that a
	// later action's timeout does not end it.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	return ctx
}
