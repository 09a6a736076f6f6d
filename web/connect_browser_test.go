package web

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserConnect: in chromium, the overview's Connectors tab lists the
// failed sink first with its trace as text, and its page names the failed
// task and its trace; the hostile connector name is text everywhere.
// QW_SCREENSHOTS=dir saves connect-overview.png and connect-connector.png.
func TestBrowserConnect(t *testing.T) {
	b := newBrowser(t, 1280, 800)
	ts := httptest.NewServer(connectServer())
	t.Cleanup(ts.Close)

	b.run(t, chromedp.Navigate(ts.URL+"/?tab=connect"))
	b.waitJS(t, "the connector rows", `document.querySelectorAll('#table tbody tr').length === 4`, 20*time.Second)
	first := evalJS[string](t, b, `document.querySelector('#table tbody tr').innerText`)
	if !strings.Contains(first, connectHostile) {
		t.Errorf("first row %q; want the failed sink %q first", first, connectHostile)
	}
	if n := evalJS[int](t, b, `document.querySelectorAll('script:not([src])').length`); n != 0 {
		t.Errorf("%d inline scripts: a connector name was parsed as markup", n)
	}
	shotIfAsked(t, b, "connect-overview")

	page := ts.URL + "/kafka/prod/connect/main/connectors/" + url.PathEscape(connectHostile)
	b.run(t, chromedp.Navigate(page))
	b.waitJS(t, "the connector's heading", `document.querySelector('h1') && document.querySelector('h1').textContent === `+jsString(connectHostile), 10*time.Second)
	body := evalJS[string](t, b, `document.querySelector('main').innerText`)
	for _, want := range []string{"task 1 failed", connectTrace, "orders-dlq", "POST /connectors/" + url.PathEscape(connectHostile) + "/restart"} {
		if !strings.Contains(body, want) {
			t.Errorf("the connector page does not say %q:\n%s", want, body)
		}
	}
	shotIfAsked(t, b, "connect-connector")
	b.checkClean(t)
}

// TestBrowserConnectRestart: operator alice opens the failed connector's
// page, asks for the restart, reads what it does in the dialog and
// confirms; Connect gets the one restart of failed tasks and the page
// reloads. QW_SCREENSHOTS=dir saves connect-restart.png (the dialog).
func TestBrowserConnectRestart(t *testing.T) {
	b := newBrowser(t, 1280, 800)
	s, fc := restartServer(t)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	asUser(t, b, "alice", "wonderland")

	b.run(t, chromedp.Navigate(ts.URL+"/kafka/prod/connect/main/connectors/"+url.PathEscape(connectHostile)))
	b.waitJS(t, "the restart button", `!!document.querySelector('[data-restart-open]')`, 10*time.Second)
	b.run(t, chromedp.Click(chromedp.CSS("[data-restart-open]")))
	b.waitJS(t, "the restart dialog", `document.getElementById('restart').open`, 5*time.Second)
	if text := evalJS[string](t, b, `document.getElementById('restart').innerText`); !strings.Contains(text, "only its failed tasks (1 of 2)") {
		t.Errorf("the dialog does not say what restarts:\n%s", text)
	}
	shotIfAsked(t, b, "connect-restart")
	evalJS[bool](t, b, `window.beforeRestart = true`)
	b.run(t, chromedp.Click(chromedp.ID("rs-go")))
	// The page reloads once the server answered: the marker is gone.
	b.waitJS(t, "the reload after the restart", `window.beforeRestart === undefined && document.readyState === 'complete'`, 20*time.Second)
	if seen := fc.seen(); len(seen) != 1 || !strings.Contains(seen[0], "/restart?includeTasks=true&onlyFailed=true") {
		t.Errorf("Connect saw %v, want one restart of failed tasks", seen)
	}
	b.checkClean(t)
}
