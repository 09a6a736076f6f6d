package web

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/inspect"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/jsonpath"
	"github.com/queuewatch/queuewatch/masking"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// TestBrowserSearch: real RabbitMQ dead letters in two DLQs, one with
// card numbers a masking rule hides, and chromium. Operator alice types
// a body path into the header's search box: the results page names the
// one order in the other DLQ, its bounds and each DLQ's line, and the hit
// opens the DLQ page filtered to that message, where she saves the filter
// for everyone. Her search by a clear card
// number finds nothing, and no page shows it. QW_SCREENSHOTS=dir saves
// search-results.png, search-dlq-filtered.png, search-saved-filter.png and
// search-masked.png
// there.
func TestBrowserSearch(t *testing.T) {
	b := newBrowser(t, 1280, 800)
	w := newRabbitWorld(t, testenv.Rabbit(t))
	w.pair("orders")
	w.pair("payments")
	var orders, payments []amqp.Publishing
	for i := range 12 {
		orders = append(orders, amqp.Publishing{
			MessageId: fmt.Sprintf("o-%d", 120+i), ContentType: "application/json", Timestamp: time.Now(),
			Body:    fmt.Appendf(nil, `{"order":{"id":"%d","total":%d.50},"customer":"c-%d"}`, 120+i, 10+i, i%4),
			Headers: amqp.Table{"x-tenant": []string{"acme", "globex"}[i%2]},
		})
		payments = append(payments, amqp.Publishing{
			MessageId: fmt.Sprintf("p-%d", i), ContentType: "application/json", Timestamp: time.Now(),
			Body: fmt.Appendf(nil, `{"payment":%d,"order":{"id":"%d"},"card":{"number":"%s","exp":"12/29"}}`, 900+i, 200+i, clearCard),
		})
	}
	w.deadLetter("orders", orders...)
	w.deadLetter("payments", payments...)

	st := newStack(t, w.vh)
	card, _ := jsonpath.Parse("$.card.number")
	filters, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = filters.Close() })
	ts := httptest.NewServer(New(Options{
		Monitor: st.col, Metrics: st.col.Handler(prometheus.NewRegistry()), DLQs: st.svc, Auth: authConfig(t, config.AuthBasic), Filters: filters,
		Inspect: inspect.New(inspect.Options{Masker: masking.New([]masking.Rule{{Fields: []jsonpath.Path{card}, Mode: masking.Last4}}, nil)}),
	}))
	t.Cleanup(ts.Close)
	ordersID := dlqreplay.Ref{Broker: queue.RabbitMQ, Cluster: "main", VHost: w.vh, Name: "orders.dlq"}.ID()
	paymentsID := dlqreplay.Ref{Broker: queue.RabbitMQ, Cluster: "main", VHost: w.vh, Name: "payments.dlq"}.ID()
	// A search reads the DLQs the last poll counted: wait for the poll.
	deadline := time.Now().Add(30 * time.Second)
	for o, p := findSnapDLQ(st.col, ordersID), findSnapDLQ(st.col, paymentsID); o == nil || p == nil || o.Messages != 12 || p.Messages != 12; o, p = findSnapDLQ(st.col, ordersID), findSnapDLQ(st.col, paymentsID) {
		if time.Now().After(deadline) {
			t.Fatalf("the collector does not count both DLQs: %+v %+v", o, p)
		}
		time.Sleep(200 * time.Millisecond)
	}
	save := func(name string) {
		if dir := os.Getenv("QW_SCREENSHOTS"); dir != "" {
			shot(t, b, filepath.Join(dir, name+".png"))
		}
	}

	asUser(t, b, "alice", "wonderland")
	b.run(t, chromedp.Navigate(ts.URL+"/replays"),
		chromedp.SendKeys(chromedp.CSS(`form.topsearch input`), `$.order.id == "123"`+"\n"))
	b.waitJS(t, "the results", `document.querySelectorAll('#search-hits tr.hit').length === 1`, 20*time.Second)
	hit := evalJS[string](t, b, `document.querySelector('#search-hits tr.hit').innerText`)
	summary := evalJS[string](t, b, `document.getElementById('search-summary').innerText`)
	lines := evalJS[string](t, b, `document.getElementById('search-dlqs').innerText`)
	if !strings.Contains(hit, "orders.dlq") || !strings.Contains(hit, "o-123") || !strings.Contains(hit, `"id":"123"`) {
		t.Errorf("the hit reads %q", hit)
	}
	if !strings.Contains(summary, "1 message in 2 of 2 DLQs") || !strings.Contains(summary, "read 24 messages") ||
		!strings.Contains(summary, "budget 5s · at most 1,000 messages read per DLQ") {
		t.Errorf("the summary reads %q", summary)
	}
	if strings.Count(lines, "all read") != 2 {
		t.Errorf("the DLQs' lines read %q", lines)
	}
	save("search-results")

	b.run(t, chromedp.Click(chromedp.CSS(`#search-hits tr.hit td.mid a`)))
	b.waitJS(t, "the DLQ page on the message", rowsJS+` === 1 && document.querySelector('#messages tr.msg').dataset.id === 'o-123'`, 20*time.Second)
	if where := evalJS[string](t, b, `document.querySelector('#where input[name=where]').value`); where != `id == "o-123"` {
		t.Errorf("the DLQ page is filtered by %q", where)
	}
	save("search-dlq-filtered")
	// Saved for everyone: the page reloads with it among the saved filters.
	b.run(t, chromedp.SendKeys(chromedp.ID("filter-name"), "order 123"), chromedp.Click(chromedp.ID("save-filter")))
	waitAcrossReload(t, b, "the saved filter", `document.readyState === 'complete' && [...document.querySelectorAll('#saved-filters .savedfilter a')].some(a => a.textContent === 'order 123')`, 20*time.Second)
	if saved, err := filters.SavedFilters(t.Context(), ordersID); err != nil || len(saved) != 1 || saved[0].Where != `id == "o-123"` || saved[0].Who != "alice" {
		t.Errorf("the store keeps %+v, %v", saved, err)
	}
	save("search-saved-filter")

	b.run(t, chromedp.Navigate(ts.URL+"/search?q="+clearCard))
	b.waitJS(t, "the answer", `document.getElementById('search-summary') !== null`, 20*time.Second)
	if n := evalJS[int](t, b, `document.querySelectorAll('#search-hits tr.hit').length`); n != 0 {
		t.Errorf("a clear card number found %d messages", n)
	}
	b.run(t, chromedp.Navigate(ts.URL+"/search?mode=path&q="+`%24.card.exp+%3D%3D+%2212%2F29%22`))
	b.waitJS(t, "the payments", `document.querySelectorAll('#search-hits tr.hit').length === 12`, 20*time.Second)
	noSecret(t, "the search page", []byte(evalJS[string](t, b, `document.documentElement.outerHTML`)))
	save("search-masked")
	b.checkClean(t)
}
