package web

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/alerts"
	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/demo"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// hostileGroup is a consumer group whose name is markup; it must show as
// text and run nothing.
const hostileGroup = `<img src=x onerror=alert(1)>`

// chromiumPath finds the browser; without one the browser tests cannot
// run, which fails CI and skips on a developer machine.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Require(t, "chromium (apt-get install chromium)", errors.New("not found on PATH"))
	return ""
}

// demoServer runs the demo cluster, a real Kafka collector polling it
// every second, and the web server in front of it.
func demoServer(t *testing.T) (base string, brokers []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := demo.Start(ctx, demo.Options{Speed: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	commitHostileGroup(t, d.Brokers())
	kc, err := brokerkafka.New(config.Kafka{Name: "demo", Brokers: d.Brokers()}, config.Default().DLQ)
	if err != nil {
		t.Fatal(err)
	}
	src, err := kafka.New(kafka.Options{
		Cluster: kc, ReadCommitted: true,
		DLQTopic: func(topic string) (queue.DLQDetection, bool) {
			return queue.DetectedName, strings.HasSuffix(topic, ".DLT") || strings.HasSuffix(topic, ".DLQ")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	ev := alerts.NewEvaluator(alerts.StatusOptions{Window: 5})
	col := collectors.New([]collectors.Source{src}, collectors.Options{
		Interval: time.Second, Timeout: 5 * time.Second, History: time.Hour, Evaluator: ev,
	})
	var wg sync.WaitGroup
	wg.Go(func() { col.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	ts := httptest.NewServer(New(Options{Monitor: col, Metrics: col.Handler(prometheus.NewRegistry())}))
	t.Cleanup(ts.Close)
	return ts.URL, d.Brokers()
}

func commitHostileGroup(t *testing.T, brokers []string) {
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
	if err := kadm.NewClient(cl).CommitAllOffsets(ctx, hostileGroup, os); err != nil {
		t.Fatal(err)
	}
}

func deleteGroup(t *testing.T, brokers []string, group string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).DeleteGroup(ctx, group); err != nil {
		t.Fatal(err)
	}
}

// browser is a headless chromium tab that records every console error and
// warning, uncaught exception, browser log error (CSP violations land
// there) and JavaScript dialog.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string
}

func newBrowser(t *testing.T, width, height int64) *browser {
	t.Helper()
	testenv.Slow(t, "a real browser")
	path := chromiumPath(t)
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(int(width), int(height)),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	b := &browser{ctx: ctx}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatal(err)
	}
	console := chromedp.Console(ctx)
	dialogs := chromedp.Events(ctx, cdppage.JavascriptDialogOpening)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				b.problem(m.String() + " " + m.URL)
			}
		}
	}()
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.problem("dialog opened: " + ev.Message)
			_, _ = chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return b
}

func (b *browser) problem(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, s)
}

func (b *browser) checkClean(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		t.Errorf("browser: %s", p)
	}
}

func (b *browser) run(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// runAgainIfStale runs actions that are safe to repeat on a page reached
// through redirects: chromium may replace the document (and every
// node id chromedp resolved) just after a script saw the element, which
// CDP reports as "Could not find node with given id". The actions are run
// again, up to three times, on the new document.
func (b *browser) runAgainIfStale(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		err := chromedp.Do(ctx, actions...)
		cancel()
		var cdpErr *cdproto.Error
		if err == nil || attempt == 3 || !errors.As(err, &cdpErr) || !strings.Contains(cdpErr.Message, "node with given id") {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Logf("%v: running the actions again", err)
		time.Sleep(200 * time.Millisecond)
	}
}

// navigating reports whether err is CDP's answer to an evaluation in a
// document being replaced.
func navigating(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Inspected target navigated or closed") ||
		strings.Contains(msg, "Execution context was destroyed") ||
		strings.Contains(msg, "Cannot find context with specified id")
}

// evalJS evaluates js in the page and decodes its value.
func evalJS[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitJS polls a boolean expression until it holds. A page on its way
// to the next document (a click that navigates, a redirect) cannot be
// evaluated in ("Inspected target navigated or closed"): that reads as
// not yet, as it would to a user watching the page load.
func (b *browser) waitJS(t *testing.T, what, js string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	holds := func() bool {
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		defer cancel()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+js+")"))
		if err != nil && !navigating(err) {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return err == nil && v
	}
	for !holds() {
		if time.Now().After(deadline) {
			text := evalJS[string](t, b, "document.querySelector('main') ? document.querySelector('main').innerText.slice(0, 2000) : ''")
			t.Fatalf("timed out waiting for %s; page text:\n%s", what, text)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const groupNamesJS = `Array.from(document.querySelectorAll('#groups tbody td.name')).map(td => td.textContent.trim())`

func TestBrowserOverviewAndGroupPage(t *testing.T) {
	b := newBrowser(t, 1280, 800)
	base, brokers := demoServer(t)

	b.run(t, chromedp.Navigate(base+"/"))
	// The demo's stopped and stalled consumers reach their status after a
	// few polls; the page refreshes itself, so no reload is needed.
	b.waitJS(t, "demo groups with statuses", `document.querySelectorAll('#groups tbody tr').length >= 8 &&
		document.querySelector('#groups tr[data-status="stop"]') && document.querySelector('#groups tr[data-status="ok"]')`, 90*time.Second)

	t.Run("hostile group name renders as text", func(t *testing.T) {
		names := evalJS[[]string](t, b, groupNamesJS)
		if !slices.Contains(names, hostileGroup) {
			t.Errorf("hostile group not listed as text; names %q", names)
		}
		imgs := evalJS[int](t, b, `document.querySelectorAll('img').length`)
		if imgs != 0 {
			t.Errorf("%d <img> elements on the page: a name was parsed as markup", imgs)
		}
	})

	t.Run("filter", func(t *testing.T) {
		b.run(t, chromedp.Click(chromedp.CSS("h2")), chromedp.KeyEvent("/"))
		focused := evalJS[string](t, b, `document.activeElement ? document.activeElement.id : ''`)
		if focused != "filter" {
			t.Fatalf("/ focused %q, want the filter box", focused)
		}
		// CDP delivers the "/" character separately from its keydown, so
		// it lands in the box; a real keypress is cancelled by app.js.
		b.run(t, chromedp.Evaluate[chromedp.Void](`document.getElementById('filter').value = ''`),
			chromedp.SendKeys(chromedp.ID("filter"), "billing"))
		b.waitJS(t, "filtered rows", `(() => { const n = `+groupNamesJS+`; return location.search.includes('q=billing') && n.length === 1 && n[0] === 'billing-stopped' })()`, 10*time.Second)
		loc := evalJS[string](t, b, `location.search`)
		if !strings.Contains(loc, "q=billing") {
			t.Errorf("filter not kept in the URL: %q", loc)
		}
		b.run(t, chromedp.KeyEvent("\x1b")) // Escape clears
		b.waitJS(t, "unfiltered rows", `document.querySelectorAll('#groups tbody tr').length >= 8`, 10*time.Second)
	})

	t.Run("sort by clicking a header", func(t *testing.T) {
		before := evalJS[[]string](t, b, groupNamesJS)
		b.run(t, chromedp.Click(chromedp.CSS(`#groups th a[href*="sort=name"]`)))
		b.waitJS(t, "rows sorted by name", `(() => { const n = `+groupNamesJS+`; return location.search.includes('sort=name') && n.join() === [...n].sort().join() })()`, 10*time.Second)
		after := evalJS[[]string](t, b, groupNamesJS)
		if slices.Equal(before, after) {
			t.Errorf("order unchanged after sorting by name: %q", after)
		}
		b.run(t, chromedp.Click(chromedp.CSS(`#groups th a[href*="sort=name"]`)))
		b.waitJS(t, "rows sorted by name descending", `(() => { const n = `+groupNamesJS+`; return location.search.includes('dir=desc') && n.join() === [...n].sort().reverse().join() })()`, 10*time.Second)
	})

	t.Run("theme toggle", func(t *testing.T) {
		const themeJS = `document.documentElement.getAttribute('data-theme')`
		before := evalJS[string](t, b, themeJS)
		b.run(t, chromedp.Click(chromedp.ID("theme")))
		after := evalJS[string](t, b, themeJS)
		if before == after || (after != "dark" && after != "light") {
			t.Errorf("theme %q → %q", before, after)
		}
		b.run(t, chromedp.Reload())
		kept := evalJS[string](t, b, themeJS)
		if kept != after {
			t.Errorf("theme after reload %q, want %q (kept in localStorage)", kept, after)
		}
	})

	t.Run("group page chart", func(t *testing.T) {
		b.run(t, chromedp.Navigate(base+"/kafka/demo/groups/"+url.PathEscape(demo.GroupAnalyticsSlow)))
		b.waitJS(t, "uPlot canvas", `document.querySelector('#chart canvas') && document.querySelector('#chart .u-legend')`, 20*time.Second)
		// Wait rather than sample once: a poll under load can briefly
		// show the group unreadable, and the live refresh swaps the table.
		want := int(demo.Partitions()[demo.TopicEvents])
		b.waitJS(t, fmt.Sprintf("at least %d partition rows", want),
			fmt.Sprintf(`document.querySelectorAll('#partitions tbody tr').length >= %d`, want), 20*time.Second)
		b.run(t, chromedp.Click(chromedp.CSS(`button[data-range="15m"]`)))
		loc := evalJS[string](t, b, `location.search`)
		if !strings.Contains(loc, "range=15m") {
			t.Errorf("range not kept in the URL: %q", loc)
		}
	})

	t.Run("hostile group page", func(t *testing.T) {
		b.run(t, chromedp.Navigate(base+"/kafka/demo/groups/"+url.PathEscape(hostileGroup)))
		b.waitJS(t, "hostile group heading", `document.querySelector('h1') && document.querySelector('h1').textContent === `+jsString(hostileGroup), 10*time.Second)
		imgs := evalJS[int](t, b, `document.querySelectorAll('img').length`)
		if imgs != 0 {
			t.Errorf("%d <img> elements on the hostile group's page", imgs)
		}
		// The chart must load the hostile group's history too.
		b.waitJS(t, "uPlot canvas", `document.querySelector('#chart canvas')`, 20*time.Second)
	})

	// Let a refresh or two run on the page before checking the console.
	time.Sleep(6 * time.Second)
	b.checkClean(t)

	if dir := os.Getenv("QW_SCREENSHOTS"); dir != "" {
		// The docs show the demo as a user sees it, without the test's
		// hostile group.
		deleteGroup(t, brokers, hostileGroup)
		time.Sleep(2 * time.Second)
		screenshots(t, b, base, dir)
	}
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// screenshots saves the overview and a group page in both themes, for the
// docs (QW_SCREENSHOTS=docs/screenshots go test ./web -run Browser).
func screenshots(t *testing.T, b *browser, base, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{
		"overview": base + "/",
		"group":    base + "/kafka/demo/groups/" + url.PathEscape(demo.GroupAnalyticsSlow),
	}
	for _, theme := range []string{"light", "dark"} {
		for name, target := range pages {
			b.run(t,
				chromedp.Navigate(target),
				chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem('qw-theme', %q)`, theme)),
				chromedp.Reload(),
				chromedp.Sleep(2500*time.Millisecond),
			)
			png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+"-"+theme+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
