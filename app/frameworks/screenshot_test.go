package frameworks

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// screenshot saves the DLQ page of id, with its first dead letter's
// death history open, to $QUEUEWATCH_SCREENSHOTS/<name>.png: how the
// pictures of real frameworks' dead letters in docs/tests.md are made. Without
// the variable it does nothing.
func screenshot(t *testing.T, q *queuewatch, id, name string) {
	t.Helper()
	dir := os.Getenv("QUEUEWATCH_SCREENSHOTS")
	if dir == "" {
		return
	}
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(path), chromedp.DisableGPU, chromedp.WindowSize(1400, 1000),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancelC := chromedp.NewContext(actx)
	defer cancelC()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1400, 1000),
		chromedp.Navigate(q.base+"/dlq/"+url.PathEscape(id)),
		chromedp.Click(chromedp.CSS(`#messages tr.msg td.mid`)),
		chromedp.Click(chromedp.CSS(`.insp:not([hidden]) button[data-itab="deaths"]`)),
		chromedp.Sleep(300*time.Millisecond),
	); err != nil {
		t.Fatalf("open the death history of %s: %v", id, err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot of %s: %v", id, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
