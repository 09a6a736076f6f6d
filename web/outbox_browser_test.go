package web

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// drawnPixelsJS counts the pixels of a chart's canvas that have the
// theme's --link colour (the first series' stroke): more than a handful
// means uPlot drew the series, not only the axes and grid.
const drawnPixelsJS = `((sel) => {
	const c = document.querySelector(sel + ' canvas');
	if (!c) return -1;
	const probe = document.createElement('span');
	probe.style.color = getComputedStyle(document.documentElement).getPropertyValue('--link');
	document.body.appendChild(probe);
	const rgb = getComputedStyle(probe).color.match(/\d+/g).map(Number);
	probe.remove();
	// Read a copy, not the chart's canvas: chromium warns after a few
	// readbacks of a canvas not made willReadFrequently, and a test that
	// waits for the drawing reads it again and again.
	const copy = document.createElement('canvas');
	copy.width = c.width; copy.height = c.height;
	const cx = copy.getContext('2d', {willReadFrequently: true});
	cx.drawImage(c, 0, 0);
	const d = cx.getImageData(0, 0, c.width, c.height).data;
	let n = 0;
	for (let i = 0; i < d.length; i += 4) {
		if (d[i+3] > 200 && Math.abs(d[i]-rgb[0]) < 40 && Math.abs(d[i+1]-rgb[1]) < 40 && Math.abs(d[i+2]-rgb[2]) < 40) n++;
	}
	return n;
})`

func TestBrowserOutbox(t *testing.T) {
	b := newBrowser(t, 1280, 900)
	s, _ := outboxWorld(t, 40, true)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)

	b.run(t, chromedp.Navigate(ts.URL+"/"))
	b.waitJS(t, "outbox cards", `document.querySelectorAll('#outboxes article.obox').length === 3`, 20*time.Second)
	order := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#outboxes article.obox')).map(a => a.getAttribute('data-source') + '=' + a.getAttribute('data-status'))`)
	if want := []string{"orders-db=stop", "billing-db=error", hostileSource + "=ok"}; strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("cards %q, want %q", order, want)
	}
	if n := evalJS[int](t, b, `document.querySelectorAll('img').length`); n != 0 {
		t.Errorf("%d <img> elements: a name was parsed as markup", n)
	}
	// Following the hostile card's link reaches its page, named as text.
	b.run(t, chromedp.Click(chromedp.CSS(`#outboxes article.obox:last-child a.obox-name`)))
	b.waitJS(t, "hostile source heading", `document.querySelector('h1') && document.querySelector('h1').textContent === `+jsString(hostileSource), 10*time.Second)
	b.waitJS(t, "hostile source chart", `document.querySelector('[data-table="outbox"] canvas')`, 20*time.Second)

	b.run(t, chromedp.Navigate(ts.URL+"/outbox/orders-db"))
	for _, sel := range []string{`[data-table="outbox"]`, `[data-table="audit_outbox"]`, `[data-table="<script>alert(1)</script>"]`, `[data-slots="1"]`} {
		b.waitJS(t, "chart "+sel, fmt.Sprintf(`document.querySelector(%s + ' canvas') && document.querySelector(%s + ' .u-legend')`, jsString(sel), jsString(sel)), 20*time.Second)
	}
	b.waitJS(t, "pending rows drawn", drawnPixelsJS+`('[data-table="outbox"]') > 30`, 10*time.Second)
	b.waitJS(t, "slot lag drawn", drawnPixelsJS+`('[data-slots="1"]') > 30`, 10*time.Second)
	legend := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('[data-slots="1"] .u-legend .u-label')).map(e => e.textContent)`)
	if strings.Join(legend, ",") != "Time,debezium,analytics" {
		t.Errorf("slot chart legend %q", legend)
	}
	if e := evalJS[string](t, b, `document.querySelector('[data-chart="outbox"]').getAttribute('data-error') || ''`); e != "" {
		t.Errorf("history load failed: %s", e)
	}

	b.run(t, chromedp.Click(chromedp.CSS(`button[data-range="15m"]`)))
	if loc := evalJS[string](t, b, `location.search`); !strings.Contains(loc, "range=15m") {
		t.Errorf("range not kept in the URL: %q", loc)
	}
	// The kept range survives a reload (the URL is bookmarkable).
	b.run(t, chromedp.Reload())
	b.waitJS(t, "15m button active after reload", `document.querySelector('button[data-range="15m"]').classList.contains('active')`, 10*time.Second)

	// Let a live refresh run before checking the console.
	time.Sleep(6 * time.Second)
	if n := evalJS[int](t, b, `document.querySelectorAll('[data-chart="outbox"] canvas').length`); n != 4 {
		t.Errorf("%d chart canvases after a refresh, want 4", n)
	}
	b.checkClean(t)

	if dir := os.Getenv("QW_SCREENSHOTS"); dir != "" {
		docs, _ := outboxWorld(t, 120, false)
		ds := httptest.NewServer(docs)
		t.Cleanup(ds.Close)
		outboxScreenshots(t, b, ds.URL, dir)
	}
}

// outboxScreenshots saves the overview's outbox cards and an outbox page
// in both themes, for the docs.
func outboxScreenshots(t *testing.T, b *browser, base, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{
		"outbox-overview": base + "/",
		"outbox":          base + "/outbox/" + url.PathEscape("orders-db"),
	}
	for _, theme := range []string{"light", "dark"} {
		for name, target := range pages {
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
	}
}
