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
