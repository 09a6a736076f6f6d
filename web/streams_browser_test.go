package web

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/queuewatch/queuewatch/queue"
)

// TestBrowserStreams: in chromium, the overview's Streams groups tab lists
// the stopped group first, and the running group's page shows its members
// with their process and tasks, the partitions with the repartition topic
// marked internal, the subtopologies and the lag chart; the hostile group
// name is text everywhere. QW_SCREENSHOTS=dir saves streams-overview.png
// and streams-group.png.
func TestBrowserStreams(t *testing.T) {
	b := newBrowser(t, 1280, 900)
	ts := httptest.NewServer(streamsServer())
	t.Cleanup(ts.Close)

	b.run(t, chromedp.Navigate(ts.URL+"/?tab=streams"))
	b.waitJS(t, "the streams group rows", `document.querySelectorAll('#streams tbody tr').length === 3`, 20*time.Second)
	if first := evalJS[string](t, b, `document.querySelector('#streams tbody tr').innerText`); !strings.Contains(first, streamsHostile) || !strings.Contains(first, "stop") {
		t.Errorf("first row %q; want the stopped group %q first", first, streamsHostile)
	}
	if n := evalJS[int](t, b, `document.querySelectorAll('script:not([src])').length`); n != 0 {
		t.Errorf("%d inline scripts: a streams group name was parsed as markup", n)
	}
	shotIfAsked(t, b, "streams-overview")

	b.run(t, chromedp.Click(chromedp.CSS(`#streams a[href="`+queue.StreamsGroupPage("prod", "wordcount")+`"]`)))
	b.waitJS(t, "the streams group's heading", `document.querySelector('h1') && document.querySelector('h1').textContent === 'wordcount'`, 10*time.Second)
	b.waitJS(t, "two members, three partitions, two subtopologies", `
		document.querySelectorAll('#streams-members tbody tr').length === 2 &&
		document.querySelectorAll('#streams-partitions tbody tr').length === 3 &&
		document.querySelectorAll('#streams-subtopologies tbody tr').length === 2`, 10*time.Second)
	b.waitJS(t, "the lag chart drawn", `document.querySelector('#chart[data-chart="streams"] canvas') && document.querySelector('#chart .u-legend')`, 20*time.Second)
	body := evalJS[string](t, b, `document.querySelector('main').innerText`)
	for _, want := range []string{"proc-a", "0: 0, 1 · 1: 0", "internal", "wordcount-counts-changelog", "3 active tasks, 1 standby task on 2 members in 1 process"} {
		if !strings.Contains(body, want) {
			t.Errorf("the streams group page does not say %q:\n%s", want, body)
		}
	}
	shotIfAsked(t, b, "streams-group")
	b.checkClean(t)
}
