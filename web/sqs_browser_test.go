package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/alerts"
	brokersqs "github.com/queuewatch/queuewatch/brokers/sqs"
	"github.com/queuewatch/queuewatch/collectors"
	sqscol "github.com/queuewatch/queuewatch/collectors/sqs"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// sqsWorld is a real ElasticMQ account made with the aws CLI, polled every
// second by a real SQS collector behind the web server.
type sqsWorld struct {
	s                   *testenv.ElasticMQServer
	base                string
	col                 *collectors.Collector
	orders, dlq, mailer string
	ordersPage, dlqID   string
}

// newSQSWorld creates, under a unique prefix, orders (redrive policy to
// orders-dlq after 1 receive) and mailer (no consumer), dead-letters two
// orders by receiving them past maxReceiveCount, then leaves orders with
// 2 visible, 1 in flight and 1 delayed message.
func newSQSWorld(t *testing.T) *sqsWorld {
	t.Helper()
	s := testenv.ElasticMQ(t)
	// Plain names, so the screenshots read like a shop's account: this
	// package's ElasticMQ serves no other test, and the queues are deleted
	// after, so a rerun (-count) starts afresh.
	p := "shop-"
	w := &sqsWorld{s: s, orders: p + "orders", dlq: p + "orders-dlq", mailer: p + "mailer"}
	t.Cleanup(func() {
		// t.Context is done by now: the CLI runs on its own.
		for _, q := range []string{w.orders, w.dlq, w.mailer} {
			cmd := exec.Command("aws", "--endpoint-url", s.Endpoint, "sqs", "delete-queue", "--queue-url", s.QueueURL(q))
			cmd.Env = s.AWSEnv()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("delete %s: %v: %s", q, err, out)
			}
		}
	})
	w.ordersPage = queue.SQSQueuePage("local", w.orders)
	w.dlqID = (queue.DLQRef{Broker: queue.SQS, Cluster: "local", Name: w.dlq}).ID()
	s.AWS(t, "sqs", "create-queue", "--queue-name", w.dlq)
	policy, err := json.Marshal(map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + s.QueueARN(w.dlq) + `","maxReceiveCount":"1"}`})
	if err != nil {
		t.Fatal(err)
	}
	s.AWS(t, "sqs", "create-queue", "--queue-name", w.orders, "--attributes", string(policy))
	s.AWS(t, "sqs", "create-queue", "--queue-name", w.mailer)
	for _, body := range []string{"order 1 (poison)", "order 2 (poison)"} {
		s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(w.orders), "--message-body", body)
	}
	// A consumer that fails: it receives and never deletes; the receive
	// after maxReceiveCount moves a message to the DLQ.
	for i := 0; w.depth(t, w.dlq) < 2; i++ {
		if i == 20 {
			t.Fatal("the orders were not dead-lettered after 20 receives")
		}
		s.AWS(t, "sqs", "receive-message", "--queue-url", s.QueueURL(w.orders), "--max-number-of-messages", "10", "--visibility-timeout", "0")
	}
	for _, body := range []string{"order 3", "order 4", "order 5"} {
		s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(w.orders), "--message-body", body)
	}
	s.AWS(t, "sqs", "receive-message", "--queue-url", s.QueueURL(w.orders), "--visibility-timeout", "300")
	s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(w.orders), "--message-body", "later", "--delay-seconds", "300")
	s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(w.mailer), "--message-body", "mail 1")

	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	cl, err := brokersqs.New(config.SQS{Name: "local", Region: testenv.ElasticMQRegion, Endpoint: s.Endpoint, Queues: config.SQSQueues{Prefix: p}})
	if err != nil {
		t.Fatal(err)
	}
	// A read every 8 s, polled every second: a status judged from two
	// reads (stop) then lasts longer than the page's 5 s refresh.
	src, err := sqscol.New(sqscol.Options{Cluster: cl, Interval: 8 * time.Second, Tick: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.col = collectors.New([]collectors.Source{src}, collectors.Options{
		Interval: time.Second, Timeout: 5 * time.Second, History: time.Hour,
		Evaluator: alerts.NewEvaluator(alerts.StatusOptions{Window: 5}),
	})
	var wg sync.WaitGroup
	wg.Go(func() { w.col.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	ts := httptest.NewServer(New(Options{Monitor: w.col, Metrics: w.col.Handler(prometheus.NewRegistry())}))
	t.Cleanup(ts.Close)
	w.base = ts.URL
	return w
}

// depth is a queue's visible messages, read with the aws CLI.
func (w *sqsWorld) depth(t *testing.T, name string) int {
	t.Helper()
	var out struct{ Attributes map[string]string }
	if err := json.Unmarshal(w.s.AWS(t, "sqs", "get-queue-attributes", "--queue-url", w.s.QueueURL(name), "--attribute-names", "ApproximateNumberOfMessages"), &out); err != nil {
		t.Fatal(err)
	}
	var n int
	_, _ = fmt.Sscan(out.Attributes["ApproximateNumberOfMessages"], &n)
	return n
}

// sqsCellsJS reads a queue's row of the SQS tab as
// "status visible inflight delayed dead-letters-to".
const sqsCellsJS = `((name) => {
	const r = Array.from(document.querySelectorAll('#sqs tbody tr')).find(r => r.getAttribute('data-queue') === name);
	if (!r) return '';
	const c = r.querySelectorAll('td');
	return [r.getAttribute('data-status'), c[4].textContent, c[5].textContent, c[6].textContent, c[8].textContent.trim()].join('|');
})`

// TestBrowserSQS: on a real ElasticMQ, the overview's SQS tab lists the
// queues with their real counts and DLQ, a queue that gains messages with
// no consumer becomes stop with a "Needs attention" line, and the queue
// page renders its redrive policy, the DLQ's sources and the chart.
func TestBrowserSQS(t *testing.T) {
	b := newBrowser(t, 1280, 900)
	w := newSQSWorld(t)

	b.run(t, chromedp.Navigate(w.base+"/?tab=sqs"))
	b.waitJS(t, "three SQS queues", `document.querySelectorAll('#sqs tbody tr').length === 3`, 30*time.Second)
	if got, want := evalJS[string](t, b, sqsCellsJS+`(`+jsString(w.orders)+`)`), "ok|2|1|1|"+w.dlq+" after 1 receive"; got != want {
		t.Errorf("orders row %q, want %q", got, want)
	}
	if got, want := evalJS[string](t, b, sqsCellsJS+`(`+jsString(w.dlq)+`)`), "ok|2|0|0|"; got != want {
		t.Errorf("DLQ row %q, want %q", got, want)
	}
	dlqHref := "/dlq/" + url.PathEscape(w.dlqID)
	links := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#sqs a')).map(a => a.getAttribute('href'))`)
	for _, want := range []string{w.ordersPage, dlqHref} {
		if !strings.Contains(strings.Join(links, " "), want) {
			t.Errorf("SQS tab links %q, want %q among them", links, want)
		}
	}

	// Nothing receives from mailer: once it grows between two reads it is
	// stop, and "Needs attention" opens its page.
	w.s.AWS(t, "sqs", "send-message", "--queue-url", w.s.QueueURL(w.mailer), "--message-body", "mail 2")
	mailerPage := queue.SQSQueuePage("local", w.mailer)
	b.waitJS(t, "mailer stopped and needing attention",
		`document.querySelector(`+jsString(`#sqs tr[data-queue="`+w.mailer+`"][data-status="stop"]`)+`) && document.querySelector(`+jsString(`.att a[href="`+mailerPage+`"]`)+`)`, 30*time.Second)
	// Since the read before the one that found it: nothing was in
	// flight at either.
	sinceRE := regexp.MustCompile(`no consumer since \d\d:\d\d UTC \(\d+s\): 2 visible, up from 1`)
	if reason := evalJS[string](t, b, `document.querySelector('.att-stop .att-reason').textContent`); !sinceRE.MatchString(reason) {
		t.Errorf("mailer's attention line says %q; want it to match %s", reason, sinceRE)
	}
	var api struct {
		Queues []struct {
			Queue        string     `json:"queue"`
			StatusReason string     `json:"status_reason"`
			StatusSince  *time.Time `json:"status_since"`
		} `json:"queues"`
	}
	if code, body := get(t, w.base, "/api/v1/sqs/queues"); code != 200 || json.Unmarshal([]byte(body), &api) != nil {
		t.Fatalf("GET /api/v1/sqs/queues: %d %s", code, body)
	}
	for _, q := range api.Queues {
		if q.Queue == w.mailer && (q.StatusSince == nil || !sinceRE.MatchString(q.StatusReason)) {
			t.Errorf("API: mailer since %v, %q", q.StatusSince, q.StatusReason)
		}
	}
	shots := os.Getenv("QW_SCREENSHOTS")
	if shots != "" {
		sqsScreenshot(t, b, w.base+"/?tab=sqs", shots, "sqs-overview")
	}

	b.run(t, chromedp.Navigate(w.base+"/?tab=sqs"))
	b.waitJS(t, "orders link", `document.querySelector(`+jsString(`#sqs a[href="`+w.ordersPage+`"]`)+`)`, 10*time.Second)
	b.run(t, chromedp.Click(chromedp.CSS(`#sqs a[href="`+w.ordersPage+`"]`)))
	b.waitJS(t, "orders heading", `document.querySelector('h1') && document.querySelector('h1').textContent === `+jsString(w.orders), 20*time.Second)
	// SQS counts no sends or deletes: the page says the rates are not
	// known rather than show one.
	if note := evalJS[string](t, b, `document.querySelector('[data-note="rates"]').innerText`); !strings.HasPrefix(note, "Consume and produce rates, and so a catch-up ETA, are not known") {
		t.Errorf("rates note %q", note)
	}
	redrive := evalJS[string](t, b, `document.querySelector('#sqsredrive').innerText`)
	if !strings.Contains(redrive, w.dlq+" after 1 receive") || !strings.Contains(redrive, "in that DLQ\n2") {
		t.Errorf("redrive section %q", redrive)
	}
	if href := evalJS[string](t, b, `document.querySelector('#sqsredrive a').getAttribute('href')`); href != dlqHref {
		t.Errorf("DLQ link %q, want %q", href, dlqHref)
	}
	b.waitJS(t, "uPlot canvas and legend", `document.querySelector('#chart[data-chart="sqs"] canvas') && document.querySelector('#chart .u-legend')`, 20*time.Second)
	if labels := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#chart .u-legend .u-series .u-label')).map(e => e.textContent)`); strings.Join(labels, ",") != "Time,visible" {
		t.Errorf("legend %q", labels)
	}
	b.waitJS(t, "visible series drawn", drawnPixelsJS+`('#chart') > 30`, 15*time.Second)
	if shots != "" {
		sqsScreenshot(t, b, w.base+w.ordersPage, shots, "sqs-queue")
	}

	// The DLQ's page names its source queue, linked, and opens its
	// messages.
	b.run(t, chromedp.Navigate(w.base+queue.SQSQueuePage("local", w.dlq)))
	b.waitJS(t, "DLQ's sources", `document.querySelector(`+jsString(`#sqsredrive .sources a[href="`+w.ordersPage+`"]`)+`) && document.querySelector(`+jsString(`#sqsredrive a.btn[href="`+dlqHref+`"]`)+`)`, 20*time.Second)

	if shots != "" {
		sqsScreenshot(t, b, w.base+queue.SQSQueuePage("local", w.dlq), shots, "sqs-dlq-queue")
	}

	// Let a refresh or two run before checking the console.
	time.Sleep(6 * time.Second)
	if e := evalJS[string](t, b, `document.querySelector('#chart').getAttribute('data-error') || ''`); e != "" {
		t.Errorf("chart error: %s", e)
	}
	b.checkClean(t)
}

// sqsScreenshot saves the page at target in both themes, once the chart
// had time to draw, as PNGs named name-light.png and name-dark.png in dir.
func sqsScreenshot(t *testing.T, b *browser, target, dir, name string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, theme := range []string{"light", "dark"} {
		b.run(t,
			chromedp.Navigate(target),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem('qw-theme', %q)`, theme)),
			chromedp.Reload(),
			chromedp.Sleep(2500*time.Millisecond),
		)
		png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+theme+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Back to the theme the rest of the test expects.
	b.run(t, chromedp.Evaluate[chromedp.Void](`localStorage.removeItem('qw-theme')`))
}
