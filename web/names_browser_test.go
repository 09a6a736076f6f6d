package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/demo"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// browserGroupNames are consumer groups committed to the demo cluster.
// "aA-0" is what "a%41-0" decodes to twice: a double decode would land on
// its page instead of failing.
var browserGroupNames = []string{"a%41-0", "aA-0", "%2F", "a/b", "x:y", "two words", "q?x=1&y=2", "h#frag", `<b>x</b>&'"`, "名前-ü"}

// jsQuote makes a JavaScript string literal of s.
func jsQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func commitGroup(t *testing.T, brokers []string, group string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: demo.TopicOrders, Partition: 0, At: 1, LeaderEpoch: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := kadm.NewClient(cl).CommitAllOffsets(ctx, group, os); err != nil {
		t.Fatal(err)
	}
}

// clickLink clicks, with the mouse, the first link under scope whose text
// is name, waiting for the live refresh to list it.
func clickLink(t *testing.T, b *browser, scope, name string) {
	t.Helper()
	find := `Array.from(document.querySelectorAll(` + jsQuote(scope) + `)).find(a => a.textContent.trim() === ` + jsQuote(name) + `)`
	b.waitJS(t, "a link to "+name, find, 60*time.Second)
	rect := evalJS[[]float64](t, b, `(() => { const a = `+find+`; a.scrollIntoView({block: 'center'}); const r = a.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2] })()`)
	b.run(t, chromedp.MouseClickXY(rect[0], rect[1]))
}

// noMarkupFrom checks that nothing a name holds became an element.
func noMarkupFrom(t *testing.T, b *browser) {
	t.Helper()
	if n := evalJS[int](t, b, `document.querySelectorAll('main b, main img, main script, body > script').length`); n != 0 {
		t.Errorf("%d elements on %s came from a name's markup", n, evalJS[string](t, b, `location.href`))
	}
}

// TestBrowserHostileNames clicks the overview's links to groups and to a
// RabbitMQ DLQ whose names need escaping everywhere, lands on their pages,
// and replays from the DLQ with the page's own buttons.
func TestBrowserHostileNames(t *testing.T) {
	b := newBrowser(t, 1280, 900)

	t.Run("kafka groups", func(t *testing.T) {
		base, brokers := demoServer(t)
		for _, g := range browserGroupNames {
			commitGroup(t, brokers, g)
		}
		for _, g := range browserGroupNames {
			b.run(t, chromedp.Navigate(base+"/?sort=name&dir=asc"))
			clickLink(t, b, "#groups td.name a", g)
			want := components.GroupURL("demo", g)
			waitAcrossReload(t, b, "the page of "+g, `location.pathname === `+jsQuote(want)+` && document.querySelector('h1') && document.querySelector('h1').textContent === `+jsQuote(g), 10*time.Second)
			// The chart reads the group's history through the API.
			b.waitJS(t, "the chart of "+g, `document.querySelector('#chart canvas')`, 20*time.Second)
			noMarkupFrom(t, b)
		}
	})

	t.Run("rabbitmq DLQ", func(t *testing.T) {
		const src = `orders a%41:/?#<b>x</b>&'"名`
		dlqName := src + ".dlq"
		w := newRabbitWorldIn(t, testenv.Rabbit(t).VHost(`web a%41:/<b>&'" ü`))
		w.pair(src)
		w.deadLetter(src,
			amqp.Publishing{MessageId: "m-1", Body: []byte(`{"order":1}`)},
			amqp.Publishing{MessageId: "m/%41?#2", Body: []byte(`<b>2</b>`)})
		st := newStack(t, w.vh)
		base := st.serve(t, config.Auth{Mode: config.AuthNone})
		id := queue.DLQRef{Broker: queue.RabbitMQ, Cluster: "main", VHost: w.vh, Name: dlqName}.ID()

		b.run(t, chromedp.Navigate(base+"/?tab=dlqs"))
		clickLink(t, b, "#dlqs td.name a", dlqName)
		waitAcrossReload(t, b, "the DLQ page", `location.pathname === `+jsQuote(components.DLQURL(id))+` && document.getElementById('dlq') && document.getElementById('dlq').dataset.dlq === `+jsQuote(id), 10*time.Second)
		b.waitJS(t, "two dead letters", rowsJS+` === 2`, 20*time.Second)
		if h1 := evalJS[string](t, b, `document.querySelector('h1').textContent`); !strings.Contains(h1, dlqName) {
			t.Errorf("heading %q, want %q", h1, dlqName)
		}
		noMarkupFrom(t, b)

		// The page's own preview and replay: same-origin POSTs to the
		// hostile DLQ's API paths.
		b.run(t,
			chromedp.Click(chromedp.CSS(`#messages tr[data-id="m-1"] input.pick`)),
			chromedp.Click(chromedp.CSS(`#actions button[data-action="replay"]`)),
		)
		b.waitJS(t, "the receipt", `!document.getElementById('c-ok').disabled`, 20*time.Second)
		receipt := evalJS[string](t, b, `document.getElementById('c-receipt').textContent`)
		if !strings.Contains(receipt, "Replay 1 message from "+dlqName+" → "+src) {
			t.Errorf("receipt %q", receipt)
		}
		b.run(t, chromedp.Click(chromedp.ID("c-ok")))
		w.waitDepth(dlqName, 1)
		w.waitDepth(src, 1)
		waitAcrossReload(t, b, "the list without the replayed message", `document.readyState === 'complete' && `+rowsJS+` === 1`, 30*time.Second)

		// The queues tab marks the DLQ and links its page.
		b.run(t, chromedp.Navigate(base+"/?tab=queues"))
		b.waitJS(t, "the DLQ tag", `document.querySelector('#queues a.tag')`, 20*time.Second)
		b.run(t, chromedp.Click(chromedp.CSS(`#queues a.tag`)))
		waitAcrossReload(t, b, "the DLQ page from the queues tab", `location.pathname === `+jsQuote(components.DLQURL(id)), 10*time.Second)
	})
	b.checkClean(t)
}

// TestBrowserCrossSiteRefused: in every auth mode, a page on another site
// that makes the browser POST to the replay API — with the credentials the
// browser holds for queuewatch attached — is refused, while the same POST
// from queuewatch's own page works.
func TestBrowserCrossSiteRefused(t *testing.T) {
	b := newBrowser(t, 1280, 800)
	if _, err := chromedp.Call(b.ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{config.AuthNone, config.AuthBasic, config.AuthTokens, config.AuthProxy} {
		t.Run(mode, func(t *testing.T) {
			auth := authConfig(t, mode)
			headers := network.Headers{}
			switch mode {
			case config.AuthNone:
				auth = config.Auth{Mode: config.AuthNone}
			case config.AuthBasic:
				headers["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:wonderland"))
			case config.AuthTokens:
				headers["Authorization"] = "Bearer " + apiToken
			case config.AuthProxy:
				auth.Proxy.TrustedCIDRs = append(auth.Proxy.TrustedCIDRs, "127.0.0.1")
				headers["X-Forwarded-User"], headers["X-Forwarded-Groups"] = "bob", "sre"
			}
			// The browser sends these with every request, as it sends the
			// basic credentials or the proxy's session cookie it holds.
			if _, err := chromedp.Call(b.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: headers}); err != nil {
				t.Fatal(err)
			}
			f := newFakeDLQ()
			qw := httptest.NewServer(dlqServerAuth(auth, f))
			t.Cleanup(qw.Close)
			replay := qw.URL + apiDLQ(testDLQ) + "/replay"

			// Another site: "localhost" is not the site "127.0.0.1".
			evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, `<!doctype html><form id="f" method="post" enctype="text/plain" action=%q>`+
					`<input name='{"selection":{"all":true},"x":"' value='"}'></form><script>
fetch(%q, {method: 'POST', mode: 'no-cors', credentials: 'include', body: '{"selection":{"all":true}}'})
  .finally(() => document.getElementById('f').submit());
</script>`, replay, replay)
			}))
			t.Cleanup(evil.Close)
			evilURL, _ := url.Parse(evil.URL)
			b.run(t, chromedp.Navigate("http://localhost:"+evilURL.Port()+"/"))
			qwURL, _ := url.Parse(qw.URL)
			b.waitJS(t, "the form's answer", `location.host === `+jsQuote(qwURL.Host)+` && document.body && document.body.innerText.includes('cross-origin request refused')`, 20*time.Second)
			f.mu.Lock()
			started := len(f.started)
			f.mu.Unlock()
			if started != 0 {
				t.Fatalf("a cross-site request started %d jobs", started)
			}

			// The same request from queuewatch's own page goes through.
			b.run(t, chromedp.Navigate(qw.URL+components.DLQURL(testDLQ)))
			ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
			defer cancel()
			status, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`fetch(document.getElementById('dlq').dataset.api, {method: 'POST',
				headers: {'Content-Type': 'application/json'}, body: JSON.stringify({selection: {all: true}, dry_run: true})}).then(r => r.status)`,
				chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			started = len(f.started)
			f.mu.Unlock()
			if status != 200 || started != 1 {
				t.Errorf("same-origin dry run = %v with %d jobs started, want 200 and 1", status, started)
			}
		})
	}
}
