package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// publishDead publishes m straight into dlq with an x-death as the broker
// writes it (reason, from queue orders), confirmed.
func (w *rabbitWorld) publishDead(dlq, reason string, m amqp.Publishing) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if m.Headers == nil {
		m.Headers = amqp.Table{}
	}
	m.Headers["x-death"] = []any{amqp.Table{
		"count": int64(1), "reason": reason, "queue": "orders", "exchange": "",
		"routing-keys": []any{"orders"}, "time": time.Now().Add(-time.Hour),
	}}
	m.DeliveryMode = amqp.Persistent
	dc, err := w.ch.PublishWithDeferredConfirmWithContext(ctx, "", dlq, true, false, m)
	if err != nil {
		w.t.Fatal(err)
	}
	if ok, err := dc.WaitContext(ctx); !ok || err != nil {
		w.t.Fatalf("publish not confirmed: %v", err)
	}
}

// auditJobs is what GET /api/v1/audit lists for one DLQ: its jobs, and
// the events (every action) that name it.
func auditJobs(t *testing.T, base, id string) (jobs []dlqreplay.Job, events int) {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/audit?dlq=" + url.QueryEscape(id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Jobs   []dlqreplay.Job   `json:"jobs"`
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("audit = %d %s (%v)", resp.StatusCode, b, err)
	}
	return out.Jobs, len(out.Events)
}

// TestBrowserDLQDryRunAndGroups drives the DLQ page against a real broker
// (issue 38, items 4 and 5): failure groups count the whole DLQ, not the
// 50 messages shown, and say so; "Replay group…" names the group and its
// count in the DLQ; opening a dialog writes nothing to the audit log; the
// Dry run button runs a dry run — labelled, counted as would move · would
// skip · poison-guarded, every message's outcome listed — recorded once.
func TestBrowserDLQDryRunAndGroups(t *testing.T) {
	b := newBrowser(t, 1280, 900)
	w := newRabbitWorld(t, testenv.Rabbit(t))
	w.pair("orders")
	// 44 rejected by a consumer, one rejected message replayed 5 times
	// already (max_replays is 5: poison), then 15 expired: 60 messages,
	// of which the page shows the first 50 (45 rejected, 5 expired).
	var rejected []amqp.Publishing
	for i := range 44 {
		rejected = append(rejected, amqp.Publishing{
			MessageId: fmt.Sprintf("r-%02d", i), ContentType: "application/json", DeliveryMode: amqp.Persistent,
			Timestamp: time.Now(), Body: fmt.Appendf(nil, `{"order":%d}`, 9000+i),
		})
	}
	w.deadLetter("orders", rejected...)
	w.publishDead("orders.dlq", "rejected", amqp.Publishing{
		MessageId: "poison-1", ContentType: "application/json", Body: []byte(`{"order":1}`),
		Headers: amqp.Table{queue.HeaderReplayCount: int64(5)},
	})
	for i := range 15 {
		w.publishDead("orders.dlq", "expired", amqp.Publishing{
			MessageId: fmt.Sprintf("x-%02d", i), ContentType: "application/json", Body: fmt.Appendf(nil, `{"order":%d}`, 7000+i),
		})
	}
	w.waitDepth("orders.dlq", 60)

	st := newStack(t, w.vh)
	base := st.serve(t, config.Auth{Mode: config.AuthNone})
	id := dlqreplay.Ref{Broker: queue.RabbitMQ, Cluster: "main", VHost: w.vh, Name: "orders.dlq"}.ID()
	b.run(t, chromedp.Navigate(base+"/dlq/"+url.PathEscape(id)))
	b.waitJS(t, "the first 50 messages", rowsJS+` === 50`, 20*time.Second)

	groupCount := func(reason string) string {
		return evalJS[string](t, b, `(() => { for (const tr of document.querySelectorAll('#groups tbody tr')) {
			if (tr.querySelector('.reason').textContent.trim() === `+jsQuote(reason)+`) return tr.querySelector('td.num').textContent.trim(); }
			return 'none' })()`)
	}
	shotDir := os.Getenv("QW_SHOTS_DRYRUN")
	shot := func(name string) {
		if shotDir == "" {
			return
		}
		if err := os.MkdirAll(shotDir, 0o755); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shotDir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("failure groups count the whole DLQ and say so", func(t *testing.T) {
		if got := groupCount("expired"); got != "15" {
			t.Errorf("the expired group counts %s, want 15 (the whole DLQ, not the 5 shown)", got)
		}
		if got := groupCount("rejected"); got != "45" {
			t.Errorf("the rejected group counts %s, want 45", got)
		}
		scope := evalJS[string](t, b, `document.querySelector('.fgroups h2').textContent`)
		if !strings.Contains(scope, "of all 60 messages in the DLQ") {
			t.Errorf("groups heading %q, want it to say they count all 60 messages", scope)
		}
		shot("dlq-groups")
	})

	t.Run("Replay group… names the group and its count, and records nothing", func(t *testing.T) {
		b.run(t, chromedp.Evaluate[chromedp.Void](`Array.from(document.querySelectorAll('#groups tbody tr')).find(tr => tr.querySelector('.reason').textContent.trim() === 'expired').querySelector('button[data-group]').click()`))
		b.waitJS(t, "the group's receipt", `!document.getElementById('c-ok').disabled`, 60*time.Second)
		title := evalJS[string](t, b, `document.getElementById('c-title').textContent`)
		if want := "Replay failure group expired ← orders · 15 messages in the DLQ"; title != want {
			t.Errorf("dialog title %q, want %q", title, want)
		}
		receipt := evalJS[string](t, b, `document.getElementById('c-receipt').textContent`)
		if want := "Replay 15 messages from orders.dlq → orders (default exchange), at most 200/s"; receipt != want {
			t.Errorf("receipt %q, want %q", receipt, want)
		}
		shot("dlq-group-dialog")
		b.run(t, chromedp.Click(chromedp.ID("c-cancel")))
		b.run(t, chromedp.Click(chromedp.CSS(`#dhead button[data-all]`)))
		// A preview answers within the server's dry-run wait (20 s) on a
		// loaded machine; the dialog shows it when it comes.
		b.waitJS(t, "replay all's receipt", `!document.getElementById('c-ok').disabled`, 60*time.Second)
		if receipt := evalJS[string](t, b, `document.getElementById('c-receipt').textContent`); !strings.HasPrefix(receipt, "Replay 59 messages from orders.dlq") {
			t.Errorf("replay all's receipt %q, want 59 messages (one is poison)", receipt)
		}
		b.run(t, chromedp.Click(chromedp.ID("c-cancel")))
		if jobs, events := auditJobs(t, base, id); len(jobs) != 0 || events != 0 {
			t.Fatalf("opening two dialogs wrote %d jobs and %d events to the audit log: %+v", len(jobs), events, jobs)
		}
		if w.depth("orders.dlq") != 60 || w.depth("orders") != 0 {
			t.Fatal("a dialog moved something")
		}
	})

	t.Run("Dry run is a dry run, recorded once", func(t *testing.T) {
		w.waitDepth("orders.dlq", 60)
		b.run(t, chromedp.Navigate(base+"/dlq/"+url.PathEscape(id)))
		b.waitJS(t, "the first 50 messages", rowsJS+` === 50`, 20*time.Second)
		b.run(t,
			chromedp.Click(chromedp.CSS(`#messages tr[data-id="r-00"] input.pick`)),
			chromedp.Click(chromedp.CSS(`#messages tr[data-id="r-01"] input.pick`)),
			chromedp.Click(chromedp.CSS(`#messages tr[data-id="poison-1"] input.pick`)),
			chromedp.Click(chromedp.CSS(`#actions button[data-action="dryrun"]`)),
		)
		b.waitJS(t, "the dry run's result", `!document.getElementById('c-ok').disabled`, 60*time.Second)
		text := func(id string) string {
			return evalJS[string](t, b, `((document.getElementById(`+jsQuote(id)+`) || {}).textContent || '').trim()`)
		}
		if got, want := text("c-title"), "Dry run: replay 3 selected messages"; got != want {
			t.Errorf("title %q, want %q", got, want)
		}
		if got, want := text("c-receipt"), "Dry run — nothing moved"; got != want {
			t.Errorf("result %q, want %q", got, want)
		}
		if got, want := text("c-sum"), "would move 2 · would skip 0 · poison-guarded 1"; got != want {
			t.Errorf("counts %q, want %q", got, want)
		}
		rows := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#c-outcome-rows tr')).map(tr => Array.from(tr.cells).map(c => c.textContent).join(' | '))`)
		want := []string{
			"r-00 | would move | → orders (default exchange)",
			"r-01 | would move | → orders (default exchange)",
			"poison-1 | poison-guarded | replayed 5 times (max_replays 5)",
		}
		if strings.Join(rows, "\n") != strings.Join(want, "\n") {
			t.Errorf("outcomes\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
		}
		if got, want := text("c-ok"), "Replay 2 messages"; got != want {
			t.Errorf("confirm button %q, want %q", got, want)
		}
		shot("dlq-dryrun-result")
		jobs, _ := auditJobs(t, base, id)
		if len(jobs) != 1 || !jobs[0].DryRun || jobs[0].Progress.WouldMove != 2 || jobs[0].Progress.Skipped != 1 {
			t.Fatalf("audit log after one dry run: %+v, want that one dry-run job", jobs)
		}
		if got := text("c-job"); got != jobs[0].ID {
			t.Errorf("the dialog names job %q, the audit log %q", got, jobs[0].ID)
		}
		b.run(t, chromedp.Click(chromedp.ID("c-cancel")))
		w.waitDepth("orders.dlq", 60)
		if w.depth("orders") != 0 {
			t.Fatal("the dry run moved something")
		}
	})
	b.checkClean(t)
}
