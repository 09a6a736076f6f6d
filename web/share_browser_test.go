package web

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/demo"
	"github.com/queuewatch/queuewatch/queue"
)

// nonZeroLag finds a history point with lag.
var nonZeroLag = regexp.MustCompile(`"lag":[1-9]`)

// TestBrowserShareGroups: the demo's share group (two workers sharing
// orders) has its tab in the overview with its members and lag, and a page
// with its chart, six partitions whose lag the broker reports, both
// members and the sentence on dead letters; a share group deleted on the
// broker leaves the tab and /metrics at the next polls, without a reload.
// QW_SCREENSHOTS=dir saves the page in both themes.
func TestBrowserShareGroups(t *testing.T) {
	b := newBrowser(t, 1280, 900)
	base, brokers := demoServer(t)
	gone := "share-gone"
	joinShareGroup(t, brokers, gone)

	b.run(t, chromedp.Navigate(base+"/?tab=share"))
	b.waitJS(t, "both share groups in the tab", `(() => {
		const names = Array.from(document.querySelectorAll('#shares tbody td.name')).map(td => td.textContent.trim());
		return names.includes(`+jsString(demo.GroupFulfilmentShare)+`) && names.includes(`+jsString(gone)+`);
	})()`, 30*time.Second)
	if tab := evalJS[string](t, b, `document.querySelector('#tabs a[aria-selected="true"]').textContent`); !strings.HasPrefix(tab, "Share groups") {
		t.Errorf("selected tab %q; want Share groups", tab)
	}
	b.waitJS(t, "the workers' row with 2 members", `(() => {
		const row = Array.from(document.querySelectorAll('#shares tbody tr')).find(r => r.querySelector('td.name').textContent.trim() === `+jsString(demo.GroupFulfilmentShare)+`);
		return row && row.children[5].textContent.trim() === '2';
	})()`, 30*time.Second)

	b.run(t, chromedp.Click(chromedp.CSS(`#shares a[href="`+queue.ShareGroupPage("demo", demo.GroupFulfilmentShare)+`"]`)))
	b.waitJS(t, "share group heading", `document.querySelector('h1') && document.querySelector('h1').textContent === `+jsString(demo.GroupFulfilmentShare), 10*time.Second)
	b.waitJS(t, "six partitions with the broker's lag and two members", `
		document.querySelectorAll('#share-partitions tbody tr').length === 6 &&
		Array.from(document.querySelectorAll('#share-partitions tbody tr td:last-child')).every(td => td.textContent.trim() === 'broker') &&
		document.querySelectorAll('#share-members tbody tr').length === 2`, 30*time.Second)
	b.waitJS(t, "the lag chart drawn", `document.querySelector('#chart[data-chart="share"] canvas') && document.querySelector('#chart .u-legend')`, 20*time.Second)
	if text := evalJS[string](t, b, `document.querySelector('#sdetails').innerText`); !strings.Contains(text, "Kafka keeps no copy of records a member rejects") {
		t.Errorf("the page does not say that Kafka keeps no copy: %s", text)
	}
	if dir := os.Getenv("QW_SCREENSHOTS"); dir != "" {
		// A chart with a line: some polls of the workers' backlog. (The
		// history, not the canvas, is polled: repeated canvas readbacks
		// make chromium warn.)
		history := "/api/v1/kafka/share-groups/demo/" + demo.GroupFulfilmentShare + "/history"
		for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(time.Second) {
			_, body := get(t, base, history)
			if strings.Count(body, `"lag":`) >= 15 && nonZeroLag.MatchString(body) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no history with lag in 40s: %s", body)
			}
		}
		for _, theme := range []string{"light", "dark"} {
			b.run(t, chromedp.Evaluate[chromedp.Void](`localStorage.setItem('qw-theme', `+jsString(theme)+`)`), chromedp.Reload(), chromedp.Sleep(2500*time.Millisecond))
			shot(t, b, filepath.Join(dir, "share-group-"+theme+".png"))
		}
	}

	b.run(t, chromedp.Navigate(base+"/?tab=share"))
	b.waitJS(t, "the share tab", `document.querySelector('#shares')`, 10*time.Second)
	deleteGroup(t, brokers, gone)
	b.waitJS(t, "the deleted share group gone from the tab", `(() => {
		const names = Array.from(document.querySelectorAll('#shares tbody td.name')).map(td => td.textContent.trim());
		return names.length > 0 && !names.includes(`+jsString(gone)+`);
	})()`, 30*time.Second)
	code, metrics := get(t, base, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	if !strings.Contains(metrics, `queuewatch_kafka_sharegroup_members{cluster="demo",group="`+demo.GroupFulfilmentShare+`"} 2`) {
		t.Error("/metrics lacks the workers' 2 members")
	}
	if strings.Contains(metrics, `group="`+gone+`"`) {
		t.Errorf("/metrics still has the deleted share group %s", gone)
	}
	b.checkClean(t)
}

// joinShareGroup makes group a share group of the demo cluster with no
// member: a franz-go share consumer joins it, reads a record of orders
// and leaves.
func joinShareGroup(t *testing.T, brokers []string, group string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ShareGroup(group), kgo.ConsumeTopics(demo.TopicOrders))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for n := 0; n == 0 && ctx.Err() == nil; {
		n = len(cl.PollFetches(ctx).Records())
	}
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	listed, err := kadm.NewClient(cl).ListGroups(ctx)
	if err != nil || listed[group].GroupType != "share" {
		t.Fatalf("share group %s not listed: %+v, %v", group, listed[group], err)
	}
}
