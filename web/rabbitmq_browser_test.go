package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/alerts"
	brokerrabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	dlqrabbit "github.com/queuewatch/queuewatch/dlqreplay/rabbitmq"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// rabbitQueueWorld is a vhost of the real test broker with orders (a
// producer publishing 20 a second, a consumer acknowledging 8 a second,
// dead-lettering into orders.dlq, which holds two dead letters) and
// billing (three messages, no consumer), polled every second by a real
// RabbitMQ collector behind the web server.
func rabbitQueueWorld(t *testing.T) (base, vh string) {
	t.Helper()
	vh = testenv.Rabbit(t).VHost("qpage")
	ch := testenv.Channel(t, vh)
	testenv.DeadLetter(t, ch, "orders", "orders.dlq", amqp.Publishing{Body: []byte(`{"order":1}`)}, amqp.Publishing{Body: []byte(`{"order":2}`)})
	if _, err := ch.QueueDeclare("billing", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := ch.PublishWithContext(t.Context(), "", "billing", false, false, amqp.Publishing{Body: fmt.Appendf(nil, "invoice %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	sub := testenv.Channel(t, vh)
	if err := sub.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	deliveries, err := sub.Consume("orders", "orders-worker", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	start := time.Now()
	due := func(rate float64) int { return int(rate * time.Since(start).Seconds()) }
	wg.Go(func() {
		for n := 0; ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
			for ; n < due(20); n++ {
				if ch.PublishWithContext(ctx, "", "orders", false, false, amqp.Publishing{Body: fmt.Appendf(nil, `{"order":%d}`, n+3)}) != nil {
					return
				}
			}
		}
	})
	wg.Go(func() {
		for n := 0; ctx.Err() == nil; n++ {
			select {
			case d := <-deliveries:
				for n >= due(8) && ctx.Err() == nil {
					time.Sleep(10 * time.Millisecond)
				}
				if d.Ack(false) != nil {
					return
				}
			case <-ctx.Done():
			}
		}
	})

	cluster, err := brokerrabbit.New(config.RabbitMQ{Name: "main", URL: testenv.DefaultAMQPURL, ManagementURL: testenv.ManagementURL})
	if err != nil {
		t.Fatal(err)
	}
	src, err := rabbitmq.New(rabbitmq.Options{Cluster: cluster, VHosts: []string{vh}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	col := collectors.New([]collectors.Source{src}, collectors.Options{
		Interval: time.Second, Timeout: 5 * time.Second, History: time.Hour,
		// A window of 35 polls spans the 30 s over which a counter the
		// broker refreshed only once (its statistics lag under load) still
		// gives a rate.
		Evaluator: alerts.NewEvaluator(alerts.StatusOptions{Window: 35}),
	})
	wg.Go(func() { col.Run(ctx) })
	// The DLQ link opens a real DLQ page: the replay service over the
	// same cluster.
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	be, err := dlqrabbit.New(dlqrabbit.Options{Cluster: cluster})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := dlqreplay.New(dlqreplay.Options{Store: st, Backends: []dlqreplay.Backend{be}, MaxReplays: 5, FlushInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		svc.Close()
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	ts := httptest.NewServer(New(Options{Monitor: col, Metrics: col.Handler(prometheus.NewRegistry()), DLQs: svc}))
	t.Cleanup(ts.Close)
	return ts.URL, vh
}

// TestBrowserRabbitMQQueuePage: the queues tab shows each queue's status
// (stop for billing, the DLQ state for orders.dlq) and opens a queue's
// page, which shows its consumers, consume and produce rates once two
// polls read the broker's counters, the history chart, and links the DLQ
// its dead letters reach; under the CSP and without a console error.
// QW_SCREENSHOTS=dir saves the pages in both themes.
func TestBrowserRabbitMQQueuePage(t *testing.T) {
	b := newBrowser(t, 1280, 900)
	base, vh := rabbitQueueWorld(t)
	orders, billing := queue.RabbitMQQueuePage("main", vh, "orders"), queue.RabbitMQQueuePage("main", vh, "billing")
	dlqHref := "/dlq/" + url.PathEscape((queue.DLQRef{Broker: queue.RabbitMQ, Cluster: "main", VHost: vh, Name: "orders.dlq"}).ID())

	b.run(t, chromedp.Navigate(base+"/?tab=queues"))
	b.waitJS(t, "billing stopped, orders.dlq in the DLQ state",
		`document.querySelector('#queues tr[data-queue="billing"][data-status="stop"]') && document.querySelector('#queues tr[data-queue="orders.dlq"] [data-state="dlq"]')`, 30*time.Second)
	b.waitJS(t, "billing in Needs attention", `document.querySelector(`+jsString(`.att a[href="`+billing+`"]`)+`)`, 10*time.Second)
	shots := os.Getenv("QW_SCREENSHOTS")
	if shots != "" {
		sqsScreenshot(t, b, base+"/?tab=queues", shots, "rabbitmq-queues")
	}

	b.run(t, chromedp.Click(chromedp.CSS(`#queues a[href="`+orders+`"]`)))
	b.waitJS(t, "orders heading", `document.querySelector('h1') && document.querySelector('h1').textContent === 'orders'`, 20*time.Second)
	b.waitJS(t, "rates known", `/^[0-9.]+\/s \/ [0-9.]+\/s$/.test(document.querySelector('[data-fact="rates"]').textContent.trim())`, 60*time.Second)
	if got := evalJS[string](t, b, `document.querySelector('[data-fact="consumers"]').textContent`); got != "1" {
		t.Errorf("consumers %q, want 1", got)
	}
	if href := evalJS[string](t, b, `document.querySelector('#rdead a[data-dlq-link]').getAttribute('href')`); href != dlqHref {
		t.Errorf("DLQ link %q, want %q", href, dlqHref)
	}
	b.waitJS(t, "uPlot canvas and legend", `document.querySelector('#chart[data-chart="rabbitmq"] canvas') && document.querySelector('#chart .u-legend')`, 20*time.Second)
	if labels := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#chart .u-legend .u-series .u-label')).map(e => e.textContent)`); strings.Join(labels, ",") != "Time,ready,head age" {
		t.Errorf("legend %q", labels)
	}
	b.waitJS(t, "ready series drawn", drawnPixelsJS+`('#chart') > 30`, 20*time.Second)
	if shots != "" {
		sqsScreenshot(t, b, base+orders, shots, "rabbitmq-queue")
	}

	b.run(t, chromedp.Navigate(base+billing))
	b.waitJS(t, "billing stop sentence", `document.querySelector('#ghead [data-status="stop"]') && document.querySelector('.sentence').textContent.startsWith('no consumer')`, 20*time.Second)
	if shots != "" {
		sqsScreenshot(t, b, base+billing, shots, "rabbitmq-queue-stop")
		sqsScreenshot(t, b, base+queue.RabbitMQQueuePage("main", vh, "orders.dlq"), shots, "rabbitmq-dlq-queue")
	}
	b.run(t, chromedp.Navigate(base+orders))
	b.waitJS(t, "orders DLQ link", `document.querySelector('#rdead a[data-dlq-link]')`, 20*time.Second)
	b.run(t, chromedp.Click(chromedp.CSS(`#rdead a[data-dlq-link]`)))
	b.waitJS(t, "the DLQ's page with its two dead letters", `location.pathname === `+jsString(dlqHref)+` && document.querySelector('h1') && document.querySelector('h1').textContent.includes('orders.dlq') && document.querySelectorAll('#messages tr[data-id]').length === 2`, 20*time.Second)

	// Let a refresh or two run before checking the console.
	b.run(t, chromedp.Navigate(base+orders))
	time.Sleep(6 * time.Second)
	if e := evalJS[string](t, b, `document.querySelector('#chart').getAttribute('data-error') || ''`); e != "" {
		t.Errorf("chart error: %s", e)
	}
	b.checkClean(t)
}
