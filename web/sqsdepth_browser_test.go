package web

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/queuewatch/queuewatch/queue"
)

// TestBrowserSQSDepthRead: on an account read every 4 minutes, the DLQ
// page says its depth is from the account's read and how often that is;
// once a replay ended, the DLQ page (its 5 s refresh) shows 0 and says the
// depth was re-read after that job, and so does the source queue's page,
// long before the account's next read.
func TestBrowserSQSDepthRead(t *testing.T) {
	st := newSQSStackEvery(t, 4*time.Minute, func(st *sqsStack) { st.deadLetter(t, 3) })
	st.waitListed(t, 3)
	b := newBrowser(t, 1280, 800)
	dlqPage := st.base + "/dlq/" + url.PathEscape(st.id)
	shots := os.Getenv("QW_SCREENSHOTS")

	b.run(t, chromedp.Navigate(dlqPage))
	b.waitJS(t, "the depth's sentence", `!!document.querySelector('#dhead .depth-read')`, 10*time.Second)
	read := evalJS[string](t, b, `document.querySelector('#dhead .depth-read').textContent`)
	if !strings.HasPrefix(read, "depth read ") || !strings.HasSuffix(read, " ago (account read every 4m)") {
		t.Errorf("the DLQ page says %q, want \"depth read … ago (account read every 4m)\"", read)
	}
	if shots != "" {
		shot(t, b, filepath.Join(shots, "sqs-dlq-depth-read.png"))
	}

	resp, err := http.Post(st.base+"/api/v1/dlqs/"+url.PathEscape(st.id)+"/replay", "application/json", strings.NewReader(`{"selection":{"all":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	job := apiJob(t, resp)
	reread := "depth re-read after job " + job.ID + " at "
	waitAcrossReload(t, b, "the DLQ at 0, re-read after the job",
		`document.getElementById('depth') && document.getElementById('depth').textContent === '0' && `+
			`(document.querySelector('#dhead .depth-read') || {}).textContent.startsWith(`+jsString(reread)+`)`, 20*time.Second)
	if shots != "" {
		shot(t, b, filepath.Join(shots, "sqs-dlq-depth-reread.png"))
	}

	b.run(t, chromedp.Navigate(st.base+queue.SQSQueuePage("local", st.src)))
	b.waitJS(t, "the source's page", `!!document.querySelector('#ghead .depth-read')`, 10*time.Second)
	if got := evalJS[string](t, b, `document.querySelector('#ghead .depth-read').textContent`); !strings.HasPrefix(got, reread) || !strings.HasSuffix(got, " ago (account read every 4m)") {
		t.Errorf("the source's page says %q, want %q…", got, reread)
	}
	if got := evalJS[string](t, b, `document.querySelector('#ghead dl.facts').innerText`); !strings.Contains(got, "visible\n3") {
		t.Errorf("the source's facts %q, want 3 visible", got)
	}
	if shots != "" {
		shot(t, b, filepath.Join(shots, "sqs-queue-depth-reread.png"))
	}
	b.checkClean(t)
}
