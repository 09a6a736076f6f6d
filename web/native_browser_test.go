package web

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserNativeRedrive redrives an SQS DLQ with SQS's own move task
// from the UI, against ElasticMQ: the DLQ page offers it beside Replay
// all and says what it does not do, the dialog says what will happen, and
// the job bar follows SQS's task until every message is back in the
// source queue.
func TestBrowserNativeRedrive(t *testing.T) {
	b := newBrowser(t, 1280, 800)
	st := newSQSStack(t)
	st.deadLetter(t, 6)
	st.waitListed(t, 6)
	page := st.base + "/dlq/" + url.PathEscape(st.id)

	b.run(t, chromedp.Navigate(page))
	b.waitJS(t, "six dead letters", rowsJS+` === 6`, 20*time.Second)
	b.waitJS(t, "the native button", `!!document.querySelector('#dhead button[data-action="native"]')`, 10*time.Second)
	note := evalJS[string](t, b, `document.getElementById('native-note').textContent`)
	for _, want := range []string{"no replay stamp", "no poison guard", "everything only", "one task per source queue"} {
		if !strings.Contains(note, want) {
			t.Errorf("page note %q lacks %q", note, want)
		}
	}
	if dir := os.Getenv("QW_SCREENSHOTS"); dir != "" {
		shot(t, b, filepath.Join(dir, "sqs-dlq-native.png"))
	}

	b.run(t, chromedp.Click(chromedp.CSS(`#dhead button[data-action="native"]`)))
	b.waitJS(t, "the native dialog", `document.getElementById('native').open`, 5*time.Second)
	receipt := evalJS[string](t, b, `document.querySelector('#native .receipt').textContent.replace(/\s+/g, ' ').trim()`)
	if want := "Have SQS move every message of " + st.dlq + " → " + st.src + ", at most 200/s."; receipt != want {
		t.Errorf("dialog says %q, want %q", receipt, want)
	}
	if dir := os.Getenv("QW_SCREENSHOTS"); dir != "" {
		shot(t, b, filepath.Join(dir, "sqs-dlq-native-dialog.png"))
	}
	if st.depth(t, st.dlq) != 6 {
		t.Fatal("opening the dialog moved something")
	}

	b.run(t, chromedp.Click(chromedp.ID("n-ok")))
	waitAcrossReload(t, b, "job done and list reloaded",
		`document.readyState === 'complete' && /succeeded: native redrive: 6 \/ 6 moved/.test((document.getElementById('job-text') || {}).textContent || '') && `+rowsJS+` === 0`, 40*time.Second)
	if st.depth(t, st.dlq) != 0 || st.depth(t, st.src) != 6 {
		t.Fatalf("dlq %d, source %d after the native redrive", st.depth(t, st.dlq), st.depth(t, st.src))
	}
	b.run(t, chromedp.Navigate(st.base+"/replays"))
	b.waitJS(t, "the job in the audit log", `/native/.test(document.querySelector('table.jobs tbody tr').textContent)`, 10*time.Second)
	b.checkClean(t)
}

// shot saves a screenshot of the page as it is.
func shot(t *testing.T, b *browser, path string) {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
