package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/view"
)

// shardedServer is testServer's replica (it polls kafka:prod) as one of 3
// shards; the other shards poll kafka:eu, nats:edge, sqs:billing and
// outbox:orders. base is shard.peer_url's base, "" for none.
func shardedServer(base string) *Server {
	others := map[queue.Broker]map[string]int{
		queue.Kafka: {"eu": 2}, queue.NATS: {"edge": 1}, queue.SQS: {"billing": 2}, queue.Outbox: {"orders": 1},
	}
	return New(Options{
		Metrics: http.NotFoundHandler(), Monitor: testServer(true).opts.Monitor,
		ShardOwner: func(b queue.Broker, cluster string) (view.ShardPlace, bool) {
			i, ok := others[b][cluster]
			p := view.ShardPlace{Index: i, Count: 3}
			if base != "" {
				p.Base = strings.ReplaceAll(base, "{index}", string(rune('0'+i)))
			}
			return p, ok
		},
	})
}

func TestShardPagesNameTheOwner(t *testing.T) {
	s := shardedServer("http://qw-{index}.qw:8080")
	dlq := queue.DLQRef{Broker: queue.Kafka, Cluster: "eu", Name: "orders.DLT"}.ID()
	for _, tc := range []struct{ path, source string }{
		{"/kafka/eu/groups/billing?range=6h", "kafka:eu"},
		{"/kafka/eu/share-groups/billing", "kafka:eu"},
		{"/nats/edge/streams/ORDERS/consumers/worker", "nats:edge"},
		{"/sqs/billing/queues/invoices", "sqs:billing"},
		{"/outbox/orders", "outbox:orders"},
		{"/dlq/" + url.PathEscape(dlq), "kafka:eu"},
	} {
		rec := do(t, s, http.MethodGet, tc.path)
		body := rec.Body.String()
		owner := map[string]string{"kafka:eu": "2", "nats:edge": "1", "sqs:billing": "2", "outbox:orders": "1"}[tc.source]
		link := `href="http://qw-` + owner + `.qw:8080` + strings.ReplaceAll(tc.path, "&", "&amp;") + `"`
		if rec.Code != http.StatusMisdirectedRequest || !strings.Contains(body, tc.source+" is watched by shard "+owner) || !strings.Contains(body, link) {
			t.Errorf("GET %s: %d, want 421 naming shard %s and linking %s:\n%s", tc.path, rec.Code, owner, link, body)
		}
	}
	for path, want := range map[string]int{
		"/kafka/prod/groups/ok-group":      http.StatusOK,       // this replica's cluster
		"/kafka/nowhere/groups/x":          http.StatusNotFound, // no shard's
		"/api/v1/groups/eu/billing":        http.StatusNotFound, // the API addresses a replica on purpose
		"/nats/prod/streams/S/consumers/c": http.StatusNotFound, // kafka:prod is not nats:prod
	} {
		if rec := do(t, s, http.MethodGet, path); rec.Code != want {
			t.Errorf("GET %s: %d, want %d", path, rec.Code, want)
		}
	}
	rec := do(t, shardedServer(""), http.MethodGet, "/kafka/eu/groups/billing")
	if !strings.Contains(rec.Body.String(), "Set <code>shard.peer_url</code>") || strings.Contains(rec.Body.String(), "Open this page") {
		t.Errorf("without peer_url the page must name the shard and say how to link it:\n%s", rec.Body.String())
	}
}

// TestBrowserShardPage opens another shard's cluster page in a real
// browser: it reads as a page of its own (heading, link to the same page
// on the owner) with no console error or CSP violation.
func TestBrowserShardPage(t *testing.T) {
	b := newBrowser(t, 1280, 600)
	ts := httptest.NewServer(shardedServer("http://qw-{index}.qw:8080"))
	t.Cleanup(ts.Close)
	b.run(t, chromedp.Navigate(ts.URL+"/kafka/eu/groups/billing?range=1h"))
	if h := evalJS[string](t, b, `document.querySelector('h1').innerText`); h != "kafka:eu is watched by shard 2" {
		t.Errorf("heading %q", h)
	}
	href := evalJS[string](t, b, `document.querySelector('.shard-note a.btn').href`)
	if href != "http://qw-2.qw:8080/kafka/eu/groups/billing?range=1h" {
		t.Errorf("link %q", href)
	}
	if vis := evalJS[bool](t, b, `(() => { const r = document.querySelector('.shard-note a.btn').getBoundingClientRect(); return r.width > 0 && r.bottom < innerHeight })()`); !vis {
		t.Error("the link to the owner is not visible without scrolling")
	}
	// Chromium logs the page's own 421 as a failed load; anything else
	// (a CSP violation, a script error) is a problem.
	b.mu.Lock()
	b.problems = slices.DeleteFunc(b.problems, func(p string) bool {
		return strings.Contains(p, "status of 421") && strings.Contains(p, "/kafka/eu/groups/billing")
	})
	b.mu.Unlock()
	b.checkClean(t)
}
