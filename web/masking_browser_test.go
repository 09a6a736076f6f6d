package web

import (
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
	amqp "github.com/rabbitmq/amqp091-go"
	"golang.org/x/crypto/bcrypt"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/inspect"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/jsonpath"
	"github.com/queuewatch/queuewatch/masking"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// TestBrowserMaskedMessage: real RabbitMQ dead letters holding a card
// number and an email, a masking rule for them, and chromium. Operator
// alice opens the message panel: the DOM holds neither value (body, hex,
// headers, preview), the filter finds nothing by the card number, and she
// is offered no clear view. Admin ada asks for one message in clear: the
// page reopens on it, shows it, and the replays page lists her clear read
// beside alice's masked ones. QW_MASK_SHOTS=dir saves the panels.
func TestBrowserMaskedMessage(t *testing.T) {
	b := newBrowser(t, 1280, 860)
	w := newRabbitWorld(t, testenv.Rabbit(t))
	w.pair("payments")
	body := `{"payment":88,"card":{"number":"` + clearCard + `","exp":"12/29"},"customer":{"email":"` + clearEmail + `","country":"NL"}}`
	w.deadLetter("payments",
		amqp.Publishing{
			MessageId: "p-1", ContentType: "application/json", Timestamp: time.Now(), Body: []byte(body),
			Headers: amqp.Table{"x-card": clearCard, "x-tenant": "acme"},
		},
		amqp.Publishing{MessageId: "p-2", ContentType: "text/plain", Timestamp: time.Now(), Body: []byte("refund to " + clearEmail)},
	)

	st := newStack(t, w.vh)
	auditStore, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = auditStore.Close() })
	card, _ := jsonpath.Parse("$.card.number")
	email, _ := jsonpath.Parse("$..email")
	auth := authConfig(t, config.AuthBasic)
	h, _ := bcrypt.GenerateFromPassword([]byte("lovelace"), bcrypt.MinCost)
	auth.Users = append(auth.Users, config.User{Name: "ada", PasswordHash: string(h), Role: config.RoleAdmin})
	ts := httptest.NewServer(New(Options{
		Monitor: st.col, Metrics: st.col.Handler(prometheus.NewRegistry()), DLQs: st.svc, Auth: auth,
		Inspect: inspect.New(inspect.Options{Reads: auditStore, Masker: masking.New([]masking.Rule{
			{Fields: []jsonpath.Path{card}, Headers: []string{"x-card"}, Mode: masking.Last4},
			{Fields: []jsonpath.Path{email}, Mode: masking.Redact},
		}, nil)}),
	}))
	t.Cleanup(ts.Close)
	id := dlqreplay.Ref{Broker: queue.RabbitMQ, Cluster: "main", VHost: w.vh, Name: "payments.dlq"}.ID()
	page := ts.URL + "/dlq/" + url.PathEscape(id)
	shot := func(name string) {
		if dir := os.Getenv("QW_MASK_SHOTS"); dir != "" {
			png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
			}
			if err != nil {
				t.Error(err)
			}
		}
	}
	openP1 := func() {
		b.run(t, chromedp.Click(chromedp.CSS(`#messages tr[data-id="p-1"] td.mid`)))
		b.waitJS(t, "p-1 open", `(() => { const s = document.querySelector('.insp:not([hidden])'); return s && s.querySelector('.insp-title').textContent === 'p-1' })()`, 5*time.Second)
	}

	asUser(t, b, "alice", "wonderland")
	b.run(t, chromedp.Navigate(page))
	b.waitJS(t, "two dead letters", rowsJS+` === 2`, 20*time.Second)
	openP1()
	panel := evalJS[string](t, b, `document.querySelector('.insp:not([hidden])').innerText`)
	if !strings.Contains(panel, "****1111") || !strings.Contains(panel, "3 masked") || strings.Contains(panel, "Show clear values") {
		t.Errorf("alice's panel:\n%s", panel)
	}
	shot("masked")
	for _, tab := range []string{"hex", "headers", "props"} {
		b.run(t, chromedp.Click(chromedp.CSS(`.insp:not([hidden]) button[data-itab="`+tab+`"]`)))
	}
	html := evalJS[string](t, b, `document.documentElement.outerHTML`)
	noSecret(t, "alice's DOM", []byte(html))
	if strings.Contains(strings.ReplaceAll(html, " ", ""), "41313131") { // "4111" in the hex dump
		t.Error("the hex tab shows the card number's bytes")
	}
	b.run(t, chromedp.SendKeys(chromedp.ID("msgfilter"), clearCard))
	b.waitJS(t, "the filter finds nothing", `!document.getElementById('nomatch').hidden`, 5*time.Second)

	asUser(t, b, "ada", "lovelace")
	b.run(t, chromedp.Navigate(page))
	b.waitJS(t, "two dead letters", rowsJS+` === 2`, 20*time.Second)
	openP1()
	b.run(t, chromedp.Click(chromedp.CSS(`.insp:not([hidden]) a.unmask`)))
	b.waitJS(t, "p-1 in clear", `(() => { const s = document.querySelector('.insp:not([hidden])'); return s && s.innerText.includes('`+clearCard+`') })()`, 20*time.Second)
	if other := evalJS[string](t, b, `document.querySelector('#messages tr[data-id="p-2"]').innerText`); strings.Contains(other, clearEmail) {
		t.Errorf("p-2 is shown in clear too: %s", other)
	}
	shot("clear")

	b.run(t, chromedp.Navigate(ts.URL+"/replays"))
	b.waitJS(t, "the read log", `document.getElementById('readlog')`, 10*time.Second)
	reads := evalJS[string](t, b, `document.getElementById('readlog').innerText`)
	if !strings.Contains(reads, "ada") || !strings.Contains(reads, "clear") || !strings.Contains(reads, "alice") {
		t.Errorf("read log:\n%s", reads)
	}
	shot("reads")
	b.checkClean(t)
}
