package web

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
	amqp "github.com/rabbitmq/amqp091-go"

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

// hostileBody is a message body that must never run as script in the UI.
const hostileBody = `<script>alert(1)</script>`

// rabbitWorld is a vhost with a work queue dead-lettering into its DLQ.
type rabbitWorld struct {
	t    *testing.T
	vh   string
	conn *amqp.Connection
	ch   *amqp.Channel
}

func newRabbitWorld(t *testing.T, a *testenv.RabbitAdmin) *rabbitWorld {
	return newRabbitWorldIn(t, a.VHost("web"))
}

// newRabbitWorldIn is a rabbitWorld in an existing vhost.
func newRabbitWorldIn(t *testing.T, vh string) *rabbitWorld {
	w := &rabbitWorld{t: t, vh: vh}
	conn, err := amqp.DialConfig(testenv.DefaultAMQPURL, amqp.Config{Vhost: w.vh})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	w.conn = conn
	if w.ch, err = conn.Channel(); err != nil {
		t.Fatal(err)
	}
	if err := w.ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	return w
}

// pair declares queue q dead-lettering into q.dlq through the default
// exchange.
func (w *rabbitWorld) pair(q string) {
	w.t.Helper()
	if _, err := w.ch.QueueDeclare(q+".dlq", true, false, false, false, nil); err != nil {
		w.t.Fatal(err)
	}
	args := amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": q + ".dlq"}
	if _, err := w.ch.QueueDeclare(q, true, false, false, false, args); err != nil {
		w.t.Fatal(err)
	}
}

// deadLetter publishes msgs to q (confirmed), then rejects each without
// requeue so the broker dead-letters them with a real x-death.
func (w *rabbitWorld) deadLetter(q string, msgs ...amqp.Publishing) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, m := range msgs {
		dc, err := w.ch.PublishWithDeferredConfirmWithContext(ctx, "", q, true, false, m)
		if err != nil {
			w.t.Fatal(err)
		}
		if ok, err := dc.WaitContext(ctx); !ok || err != nil {
			w.t.Fatalf("publish not confirmed: %v", err)
		}
	}
	for range msgs {
		d, ok, err := w.ch.Get(q, false)
		if err != nil || !ok {
			w.t.Fatalf("get from %s: %v %v", q, ok, err)
		}
		if err := d.Reject(false); err != nil {
			w.t.Fatal(err)
		}
	}
	w.waitDepth(q+".dlq", len(msgs))
}

func (w *rabbitWorld) depth(q string) int {
	w.t.Helper()
	ch, err := w.conn.Channel()
	if err != nil {
		w.t.Fatal(err)
	}
	defer ch.Close()
	st, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return st.Messages
}

func (w *rabbitWorld) waitDepth(q string, n int) {
	w.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for w.depth(q) != n {
		if time.Now().After(deadline) {
			w.t.Fatalf("%s has %d messages, want %d", q, w.depth(q), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stack is the real queuewatch: a RabbitMQ collector polling every
// second, the replay service with its audit store, and the web server.
type stack struct {
	col *collectors.Collector
	svc *dlqreplay.Service
}

func newStack(t *testing.T, vh string) *stack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cluster, err := brokerrabbit.New(config.RabbitMQ{Name: "main", URL: testenv.DefaultAMQPURL, ManagementURL: testenv.ManagementURL})
	if err != nil {
		t.Fatal(err)
	}
	src, err := rabbitmq.New(rabbitmq.Options{Cluster: cluster, VHosts: []string{vh}})
	if err != nil {
		t.Fatal(err)
	}
	col := collectors.New([]collectors.Source{src}, collectors.Options{Interval: time.Second, Timeout: 5 * time.Second, History: time.Hour})
	var wg sync.WaitGroup
	wg.Go(func() { col.Run(ctx) })
	auditStore, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	be, err := dlqrabbit.New(dlqrabbit.Options{Cluster: cluster})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := dlqreplay.New(dlqreplay.Options{Store: auditStore, Backends: []dlqreplay.Backend{be}, MaxReplays: 5, FlushInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		svc.Close()
		if err := auditStore.Close(); err != nil {
			t.Error(err)
		}
		src.Close()
	})
	return &stack{col: col, svc: svc}
}

func (st *stack) serve(t *testing.T, auth config.Auth) string {
	ts := httptest.NewServer(New(Options{
		Monitor: st.col, Metrics: st.col.Handler(prometheus.NewRegistry()), DLQs: st.svc,
		ReplayRate: 200, Auth: auth,
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// pageClient calls the API as a script does (no Origin, no
// Sec-Fetch-Site), with basic credentials when user is set.
type pageClient struct {
	hc         *http.Client
	base, user string
	pw         string
}

func newPageClient(base, user, pw string) *pageClient {
	return &pageClient{hc: &http.Client{Timeout: 30 * time.Second}, base: base, user: user, pw: pw}
}

func (c *pageClient) send(t *testing.T, method, path, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if c.user != "" {
		req.SetBasicAuth(c.user, c.pw)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (c *pageClient) expect(t *testing.T, method, path, body string, code int, want string) {
	t.Helper()
	resp := c.send(t, method, path, body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != code || !strings.Contains(string(b), want) {
		t.Errorf("%s %s = %d %s, want %d with %q", method, path, resp.StatusCode, b, code, want)
	}
}

// waitAcrossReload is waitJS for a condition met after the page reloads
// itself: an evaluation that races the navigation is retried.
func waitAcrossReload(t *testing.T, b *browser, what, js string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+js+")"))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (last error %v)", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const rowsJS = `document.querySelectorAll('#messages tbody tr.msg').length`

// TestBrowserDLQReplay replays a dead letter from the UI against the real
// broker: list → inspect a hostile message → select → dry run → confirm →
// progress → the DLQ has one message less and the main queue has it.
func TestBrowserDLQReplay(t *testing.T) {
	b := newBrowser(t, 1280, 800)
	w := newRabbitWorld(t, testenv.Rabbit(t))
	w.pair("orders")
	var msgs []amqp.Publishing
	for i := 1; i <= 5; i++ {
		m := amqp.Publishing{
			MessageId: fmt.Sprintf("m-%d", i), ContentType: "application/json", DeliveryMode: amqp.Persistent,
			Timestamp: time.Now(), Body: fmt.Appendf(nil, `{"order":%d,"total":%d.5}`, 8810+i, i*7),
		}
		if i == 3 {
			m.ContentType, m.Body = "text/html", []byte(hostileBody)
			m.Headers = amqp.Table{"note": hostileImg}
		}
		msgs = append(msgs, m)
	}
	w.deadLetter("orders", msgs...)

	st := newStack(t, w.vh)
	base := st.serve(t, config.Auth{Mode: config.AuthNone})
	id := dlqreplay.Ref{Broker: queue.RabbitMQ, Cluster: "main", VHost: w.vh, Name: "orders.dlq"}.ID()
	page := base + "/dlq/" + url.PathEscape(id)

	b.run(t, chromedp.Navigate(page))
	b.waitJS(t, "five dead letters", rowsJS+` === 5`, 20*time.Second)

	t.Run("hostile message renders as text", func(t *testing.T) {
		b.run(t, chromedp.Click(chromedp.CSS(`#messages tr[data-id="m-3"] td.mid`)))
		b.waitJS(t, "inspector open", `(() => { const s = document.querySelector('.insp:not([hidden])'); return s && s.querySelector('.insp-title').textContent === 'm-3' })()`, 5*time.Second)
		body := evalJS[string](t, b, `document.querySelector('.insp:not([hidden]) pre.body').textContent`)
		if body != hostileBody {
			t.Errorf("inspector body %q, want the markup as text", body)
		}
		b.run(t, chromedp.Click(chromedp.CSS(`.insp:not([hidden]) button[data-itab="headers"]`)))
		headers := evalJS[string](t, b, `document.querySelector('.insp:not([hidden]) [data-ipanel="headers"]').textContent`)
		if !strings.Contains(headers, hostileImg) || !strings.Contains(headers, "x-death") {
			t.Errorf("headers panel %q", headers)
		}
		b.run(t, chromedp.Click(chromedp.CSS(`.insp:not([hidden]) button[data-itab="deaths"]`)))
		deaths := evalJS[string](t, b, `document.querySelector('.insp:not([hidden]) [data-ipanel="deaths"]').innerText`)
		if !strings.Contains(deaths, "rejected in orders") {
			t.Errorf("death timeline %q", deaths)
		}
		if n := evalJS[int](t, b, `document.querySelectorAll('img, main script, body > script').length`); n != 0 {
			t.Errorf("%d img/script elements came from message content", n)
		}
	})

	t.Run("replay one message", func(t *testing.T) {
		b.run(t,
			chromedp.Click(chromedp.CSS(`#messages tr[data-id="m-1"] input.pick`)),
			chromedp.Click(chromedp.CSS(`#actions button[data-action="replay"]`)),
		)
		b.waitJS(t, "the receipt", `!document.getElementById('c-ok').disabled`, 20*time.Second)
		receipt := evalJS[string](t, b, `document.getElementById('c-receipt').textContent`)
		if want := "Replay 1 message from orders.dlq → orders (default exchange), at most 200/s"; receipt != want {
			t.Errorf("receipt %q, want %q", receipt, want)
		}
		if w.depth("orders.dlq") != 5 || w.depth("orders") != 0 {
			t.Fatal("the dialog's check moved something")
		}
		b.run(t, chromedp.Click(chromedp.ID("c-ok")))
		b.waitJS(t, "progress bar", `document.getElementById('jobbar') && !document.getElementById('jobbar').hidden`, 10*time.Second)
		waitAcrossReload(t, b, "job done and list reloaded", `document.readyState === 'complete' && /succeeded: 1 \/ 1 moved/.test((document.getElementById('job-text') || {}).textContent || '') && `+rowsJS+` === 4`, 30*time.Second)
		if n := evalJS[int](t, b, `document.querySelectorAll('#messages tr[data-id="m-1"]').length`); n != 0 {
			t.Error("the replayed message is still listed")
		}
		w.waitDepth("orders.dlq", 4)
		w.waitDepth("orders", 1)
		d, ok, err := w.ch.Get("orders", false)
		if err != nil || !ok || d.MessageId != "m-1" || d.Headers["x-queuewatch-replay-count"] == nil {
			t.Fatalf("orders holds %+v %v %v, want m-1 with a replay count", d.MessageId, ok, err)
		}
		if err := d.Nack(false, true); err != nil {
			t.Fatal(err)
		}
		// The header's depth comes from the collector's next polls.
		b.waitJS(t, "header depth 4", `document.getElementById('depth') && document.getElementById('depth').textContent.trim() === '4'`, 40*time.Second)
	})

	t.Run("a script's dry run needs no token", func(t *testing.T) {
		// curl in auth mode none: no Origin, no Sec-Fetch-Site.
		c := newPageClient(base, "", "")
		c.expect(t, http.MethodPost, apiDLQ(id)+"/replay", `{"selection":{"all":true},"dry_run":true}`, 200, `"result":"would_move"`)
		// The dry run read the messages and gave them back with its last
		// frame; the broker counts them ready again a moment later.
		w.waitDepth("orders.dlq", 4)
		if w.depth("orders") != 1 {
			t.Error("the dry run moved something")
		}
	})

	t.Run("viewer sees no replay button and the API refuses", func(t *testing.T) {
		viewerBase := st.serve(t, authConfig(t, config.AuthBasic))
		vb := newBrowser(t, 1280, 800)
		auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("victor:viewer-pw"))
		if _, err := chromedp.Call(vb.ctx, network.Enable, network.EnableParams{}); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(vb.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": auth}}); err != nil {
			t.Fatal(err)
		}
		vb.run(t, chromedp.Navigate(viewerBase+"/dlq/"+url.PathEscape(id)))
		vb.waitJS(t, "four messages for the viewer", rowsJS+` === 4`, 20*time.Second)
		if n := evalJS[int](t, vb, `document.querySelectorAll('[data-action], input.pick, #actions, #confirm').length`); n != 0 {
			t.Errorf("viewer sees %d action controls", n)
		}
		who := evalJS[string](t, vb, `document.querySelector('.who').textContent`)
		if !strings.Contains(who, "victor") || !strings.Contains(who, "viewer") {
			t.Errorf("header shows %q", who)
		}
		c := newPageClient(viewerBase, "victor", "viewer-pw")
		c.expect(t, http.MethodPost, apiDLQ(id)+"/replay", `{"selection":{"ids":["m-2"]}}`, 403, "needs role operator")
		c.expect(t, http.MethodGet, apiDLQ(id)+"/messages", "", 200, `"id":"m-2"`)
		vb.checkClean(t)
		if w.depth("orders.dlq") != 4 {
			t.Error("a viewer request changed the DLQ")
		}
	})

	time.Sleep(time.Second)
	b.checkClean(t)

	if dir := os.Getenv("QW_SCREENSHOTS"); dir != "" {
		dlqScreenshots(t, b, st, w, base, dir)
	}
}

// dlqScreenshots seeds a realistic DLQ (two failure groups, Spring AMQP
// exception headers), runs a replay and a delete so the replays page has
// receipts and an archive, and captures both pages at 1280×800.
func dlqScreenshots(t *testing.T, b *browser, st *stack, w *rabbitWorld, base, dir string) {
	w.pair("payments")
	// x-death is written here as the broker writes it, so the deaths
	// spread over two hours like a real incident's.
	now := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 36 {
		died := now.Add(-time.Duration(130-i*3) * time.Minute)
		body := fmt.Sprintf(`{"payment_id":"pay_%05d","order":%d,"amount":%d.%02d,"currency":"EUR","customer":{"id":"c-%04d","country":"DE"},"attempt":%d}`,
			41200+i, 8800+i, 10+i*3, i%100, 300+i, 1+i%3)
		reason, count := "rejected", int64(1+i%3)
		h := amqp.Table{
			"x-exception-message":    "payment declined by issuer (code 05)",
			"x-exception-stacktrace": "java.lang.IllegalStateException: payment declined by issuer (code 05)\n\tat com.shop.payments.Charger.charge(Charger.java:88)\n\tat com.shop.payments.Listener.onMessage(Listener.java:41)",
			"x-original-exchange":    "shop", "x-original-routingKey": "payments",
			"traceparent": fmt.Sprintf("00-%032x-%016x-01", i+1, i+7),
		}
		switch {
		case i%7 == 6:
			reason, count = "expired", 1
			h = amqp.Table{"traceparent": fmt.Sprintf("00-%032x-%016x-01", i+1, i+7)}
		case i%9 == 8:
			h["x-exception-message"] = "upstream timeout after 30s"
			h["x-exception-stacktrace"] = "java.net.SocketTimeoutException: upstream timeout after 30s\n\tat com.shop.payments.Gateway.call(Gateway.java:120)"
		}
		h["x-death"] = []any{amqp.Table{
			"count": count, "reason": reason, "queue": "payments", "exchange": "shop",
			"routing-keys": []any{"payments"}, "time": died,
		}}
		h["x-first-death-queue"], h["x-first-death-reason"], h["x-first-death-exchange"] = "payments", reason, "shop"
		m := amqp.Publishing{
			MessageId: fmt.Sprintf("pay-%05d", 41200+i), ContentType: "application/json", DeliveryMode: amqp.Persistent,
			Timestamp: died.Add(-time.Second), AppId: "payments-svc", Body: []byte(body), Headers: h,
		}
		dc, err := w.ch.PublishWithDeferredConfirmWithContext(ctx, "", "payments.dlq", true, false, m)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := dc.WaitContext(ctx); !ok || err != nil {
			t.Fatalf("publish not confirmed: %v", err)
		}
	}
	id := dlqreplay.Ref{Broker: queue.RabbitMQ, Cluster: "main", VHost: w.vh, Name: "payments.dlq"}.ID()
	var replayJob string
	for _, req := range []dlqreplay.Request{
		{DLQ: id, Selection: dlqreplay.Selection{IDs: []string{"pay-41200", "pay-41201", "pay-41202"}}, Who: "alice"},
		{DLQ: id, Selection: dlqreplay.Selection{All: true}, DryRun: true, Who: "alice"},
		{DLQ: id, Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{IDs: []string{"pay-41203", "pay-41204"}}, Who: "bob"},
	} {
		r, err := st.svc.Run(ctx, req)
		if err != nil {
			t.Fatalf("seed job: %v", err)
		}
		if replayJob == "" {
			replayJob = r.Job.ID
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := func(name string) {
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Render the page once the collector knows the DLQ and its source.
	deadline := time.Now().Add(30 * time.Second)
	for d := findSnapDLQ(st.col, id); d == nil || d.Messages != 31 || len(d.Sources) != 1; d = findSnapDLQ(st.col, id) {
		if time.Now().After(deadline) {
			t.Fatalf("collector does not show payments.dlq with 31 messages: %+v", d)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, theme := range []string{"dark", "light"} {
		b.run(t, chromedp.Navigate(base+"/dlq/"+url.PathEscape(id)),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem('qw-theme', %q)`, theme)), chromedp.Reload())
		b.waitJS(t, "payments messages", rowsJS+` === 31`, 20*time.Second)
		b.waitJS(t, "header depth", `document.getElementById('depth') && document.getElementById('depth').textContent.trim() === '31'`, 40*time.Second)
		b.run(t,
			chromedp.Click(chromedp.CSS(`#messages tr[data-id="pay-41210"] td.mid`)),
			chromedp.Click(chromedp.CSS(`#messages tr[data-id="pay-41211"] input.pick`)),
			chromedp.Click(chromedp.CSS(`#messages tr[data-id="pay-41210"] input.pick`)),
			chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`),
			chromedp.Sleep(300*time.Millisecond))
		shot("dlq-" + theme)
		b.run(t, chromedp.Click(chromedp.CSS(`#actions button[data-action="replay"]`)))
		b.waitJS(t, "the receipt", `!document.getElementById('c-ok').disabled`, 20*time.Second)
		shot("dlq-confirm-" + theme)
		b.run(t, chromedp.Click(chromedp.ID("c-cancel")))
		b.run(t, chromedp.Navigate(base+"/replays?job="+url.QueryEscape(replayJob)), chromedp.Sleep(500*time.Millisecond))
		shot("replays-" + theme)
	}
}

func findSnapDLQ(col *collectors.Collector, id string) *queue.DLQ {
	for _, snap := range col.Snapshots() {
		for i := range snap.DLQs {
			if snap.DLQs[i].ID() == id {
				return &snap.DLQs[i]
			}
		}
	}
	return nil
}
