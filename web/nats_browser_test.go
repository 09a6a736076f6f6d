package web

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/alerts"
	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/collectors"
	natscol "github.com/queuewatch/queuewatch/collectors/nats"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/demo"
)

// natsDemoServer runs the demo's embedded nats-server and its consumers, a
// real NATS collector polling it every second, and the web server.
func natsDemoServer(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := demo.StartNATS(ctx, demo.NATSOptions{Speed: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	nc, err := brokernats.New(config.NATS{Name: "demo", URL: d.URL()})
	if err != nil {
		t.Fatal(err)
	}
	src, err := natscol.New(natscol.Options{Cluster: nc})
	if err != nil {
		t.Fatal(err)
	}
	ev := alerts.NewEvaluator(alerts.StatusOptions{Window: 5})
	col := collectors.New([]collectors.Source{src}, collectors.Options{
		Interval: time.Second, Timeout: 5 * time.Second, History: time.Hour, Evaluator: ev,
	})
	var wg sync.WaitGroup
	wg.Go(func() { col.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	ts := httptest.NewServer(New(Options{Monitor: col, Metrics: col.Handler(prometheus.NewRegistry())}))
	t.Cleanup(ts.Close)
	// Wait for a few polls, so the consumers' pages exist and their
	// charts have a line to draw.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if len(col.ConsumerHistory("demo", demo.NATSStream, demo.NATSAnalytics)) >= 3 {
			return ts.URL
		}
		if time.Now().After(deadline) {
			t.Fatal("fewer than 3 polls of the NATS demo in 30s")
		}
	}
}

// TestBrowserNATSConsumerPage: a JetStream consumer's page draws the same
// uPlot chart as a group's, with its three series, from its history
// endpoint, under the CSP and without a console error.
func TestBrowserNATSConsumerPage(t *testing.T) {
	b := newBrowser(t, 1280, 900)
	base := natsDemoServer(t)
	page := base + "/nats/demo/streams/" + url.PathEscape(demo.NATSStream) + "/consumers/" + url.PathEscape(demo.NATSAnalytics)

	b.run(t, chromedp.Navigate(page))
	b.waitJS(t, "consumer heading", `document.querySelector('h1') && document.querySelector('h1').textContent === `+jsString(demo.NATSAnalytics), 20*time.Second)
	b.waitJS(t, "uPlot canvas and legend", `document.querySelector('#chart[data-chart="consumer"] canvas') && document.querySelector('#chart .u-legend')`, 20*time.Second)
	labels := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#chart .u-legend .u-series .u-label')).map(e => e.textContent)`)
	if want := []string{"Time", "pending", "in flight", "lag time"}; strings.Join(labels, ",") != strings.Join(want, ",") {
		t.Errorf("legend %q, want %q", labels, want)
	}
	// The pending series is drawn, not only the axes. (Read once: the
	// canvas warns about repeated readbacks.)
	if n := evalJS[int](t, b, drawnPixelsJS+`('#chart')`); n <= 30 {
		t.Errorf("%d pixels of the pending series drawn", n)
	}
	if e := evalJS[string](t, b, `document.querySelector('#chart').getAttribute('data-error') || ''`); e != "" {
		t.Errorf("chart error: %s", e)
	}
	// Its consume and produce rates, from the stream sequences of the
	// polls, show once two polls saw it.
	b.waitJS(t, "rates known", `/^[0-9.<]+\/s \/ [0-9.<]+\/s$/.test(document.querySelector('[data-fact="rates"]').textContent.trim())`, 20*time.Second)
	if dir := os.Getenv("QW_SCREENSHOTS"); dir != "" {
		sqsScreenshot(t, b, page, dir, "nats-consumer")
		b.run(t, chromedp.Navigate(page))
		b.waitJS(t, "chart again", `document.querySelector('#chart[data-chart="consumer"] canvas')`, 20*time.Second)
	}
	b.run(t, chromedp.Click(chromedp.CSS(`button[data-range="15m"]`)))
	if loc := evalJS[string](t, b, `location.search`); !strings.Contains(loc, "range=15m") {
		t.Errorf("range not kept in the URL: %q", loc)
	}

	// The stalled consumer's page shows its full in-flight window.
	stalled := base + "/nats/demo/streams/" + url.PathEscape(demo.NATSStream) + "/consumers/" + url.PathEscape(demo.NATSInvoicing)
	b.run(t, chromedp.Navigate(stalled))
	b.waitJS(t, "stalled consumer at max_ack_pending", `document.querySelector('#ghead dd.st-stall') && document.querySelector('#chart canvas')`, 30*time.Second)

	// Let a refresh or two run on the page before checking the console.
	time.Sleep(6 * time.Second)
	b.checkClean(t)
}
