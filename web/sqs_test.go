package web

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/api"
)

// sqsMailer is a queue with a hostile name: it must stay text everywhere.
const sqsMailer = "mailer " + hostile

func sqsServer() *Server {
	now := time.Now()
	return New(Options{
		Metrics: http.NotFoundHandler(),
		Monitor: staticMonitor{ready: true, snaps: []*queue.Snapshot{{
			Broker: queue.Kafka, Cluster: "prod", Time: now,
			Groups: []queue.ConsumerGroup{{Cluster: "prod", Name: "ok-group", State: "Stable", Members: 1, Status: queue.StatusOK}},
		}, {
			Broker: queue.SQS, Cluster: "prod-eu", Time: now,
			SQSQueues: []queue.SQSQueue{
				{
					Cluster: "prod-eu", Name: "orders", ARN: "arn:aws:sqs:eu-west-1:1:orders", Visible: 1200, InFlight: 3, Delayed: 1,
					VisibilityTimeout: 30 * time.Second, Retention: 96 * time.Hour, DeadLetterQueue: "orders-dlq", MaxReceiveCount: 5,
					Status: queue.StatusOK, StatusReason: "1,200 visible, 3 in flight",
				},
				{
					Cluster: "prod-eu", Name: "orders-dlq", ARN: "arn:aws:sqs:eu-west-1:1:orders-dlq", Visible: 7, VisibilityTimeout: 30 * time.Second,
					OldestAge: 3*time.Hour + 20*time.Minute, OldestAgeBasis: queue.SQSAgeBrowse, Status: queue.StatusOK, StatusReason: "7 visible, 0 in flight",
				},
				{
					Cluster: "prod-eu", Name: sqsMailer, ARN: "arn:aws:sqs:eu-west-1:1:mailer", Visible: 40, Status: queue.StatusStop,
					OldestAge: 10 * time.Minute, OldestAgeBasis: queue.SQSAgeBrowse,
					StatusReason: "no consumer: 40 visible, up from 12 at the last read, and none in flight",
				},
				{
					Cluster: "prod-eu", Name: "pay.fifo", ARN: "arn:aws:sqs:eu-west-1:1:pay.fifo", FIFO: true, Visible: 2, InFlight: queue.SQSInFlightLimit,
					DeadLetterQueue: "pay-dlq.fifo", MaxReceiveCount: 1, Status: queue.StatusStall,
					OldestAge: 754 * time.Second, OldestAgeBasis: queue.SQSAgeCloudWatch,
					StatusReason: "in flight at the SQS limit of 120,000: receives fail until some are deleted",
				},
				{
					Cluster: "prod-eu", Name: "pay-dlq.fifo", ARN: "arn:aws:sqs:eu-west-1:1:pay-dlq.fifo", FIFO: true, DLQ: true, Visible: 2, Status: queue.StatusOK,
					Retention: time.Hour, OldestAge: 20 * time.Minute, OldestAgeBasis: queue.SQSAgeCloudWatch, // deleted in 40m
				},
				{Cluster: "prod-eu", Name: "locked", Err: "get queue attributes locked: AccessDenied", Status: queue.StatusOK},
			},
			DLQs: []queue.DLQ{
				{Broker: queue.SQS, Cluster: "prod-eu", Name: "orders-dlq", Sources: []string{"orders", "gone"}, Detection: queue.DetectedTopology, Messages: 7},
				{Broker: queue.SQS, Cluster: "prod-eu", Name: "pay-dlq.fifo", Sources: []string{"pay.fifo"}, Detection: queue.DetectedTopology, Messages: 2},
			},
		}}, statuses: []queue.SourceStatus{
			{Broker: queue.Kafka, Cluster: "prod", Up: true, Polled: true, LastPoll: now},
			{Broker: queue.SQS, Cluster: "prod-eu", Up: true, Polled: true, LastPoll: now},
		}},
	})
}

// escapedHref is how a path appears in an href attribute.
func escapedHref(p string) string { return `href="` + strings.ReplaceAll(p, "&", "&amp;") + `"` }

// TestSQSOverview: SQS queues have their own tab, worst first, each with
// its counts, type, status, and the DLQ its redrive policy names.
func TestSQSOverview(t *testing.T) {
	s := sqsServer()
	body := do(t, s, "GET", "/").Body.String()
	if !strings.Contains(body, `SQS queues <span class="count">6</span>`) {
		t.Error("the overview has no SQS tab with 6 queues")
	}
	// The browse estimate is a lag age like any other reader's.
	card := body[strings.Index(body, "Worst lag"):]
	if !strings.Contains(card[:min(len(card), 600)], `href="/sqs/prod-eu/queues/orders-dlq">orders-dlq</a>`) {
		t.Error("the worst lag card does not name orders-dlq, the oldest age seen while browsing")
	}

	tab := do(t, s, "GET", "/?tab=sqs").Body.String()
	rows := tab[strings.Index(tab, `id="sqs"`):]
	var order []string
	for _, part := range strings.Split(rows, `data-queue="`)[1:] {
		order = append(order, part[:strings.Index(part, `"`)])
	}
	want := []string{"mailer &lt;script&gt;", "pay.fifo", "locked", "orders", "orders-dlq", "pay-dlq.fifo"}
	if len(order) != len(want) {
		t.Fatalf("rows %q, want %d", order, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(order[i], want[i]) {
			t.Errorf("row %d is %q, want %q (worst first)", i, order[i], want[i])
		}
	}
	ordersDLQ := "/dlq/" + url.PathEscape((queue.DLQRef{Broker: queue.SQS, Cluster: "prod-eu", Name: "orders-dlq"}).ID())
	for _, w := range []string{
		escapedHref("/sqs/prod-eu/queues/orders"),
		escapedHref(queue.SQSQueuePage("prod-eu", sqsMailer)),
		`title="1,200 visible: available to receive">1,200<`,
		`title="3 in flight: received, not yet deleted">3<`,
		`>120k of 120k<`,
		`<td class="muted">FIFO</td>`,
		escapedHref(ordersDLQ) + ` title="the redrive policy moves a message here after 5 receives">orders-dlq</a> <span class="muted">after 5 receives</span>`,
		`<a class="tag" ` + escapedHref(ordersDLQ),
		`title="unknown: SQS tells a message&#39;s age only through CloudWatch`,
		`title="at least 12,000 s: the oldest SentTimestamp a browse or job of this queue received`,
		`>≥ 3h 20m<`,
		`<td class="num" title="754 s: CloudWatch&#39;s ApproximateAgeOfOldestMessage`,
		"no consumer: 40 visible, up from 12 at the last read",
	} {
		if !strings.Contains(rows, w) {
			t.Errorf("SQS tab lacks %q", w)
		}
	}
	if strings.Contains(tab, "<script>alert") {
		t.Error("a queue name was rendered as markup")
	}

	// The filter box reaches a DLQ by name and a queue by its DLQ.
	filtered := do(t, s, "GET", "/?tab=sqs&q=pay-dlq").Body.String()
	if !strings.Contains(filtered, `data-queue="pay.fifo"`) || strings.Contains(filtered, `data-queue="orders"`) {
		t.Error("filtering by a DLQ's name does not keep just its source and itself")
	}
}

// TestSQSNeedsAttention: an SQS queue whose consumers are not ok counts in
// the stopped banner and gets a "Needs attention" line that opens its page,
// as groups and JetStream consumers do.
func TestSQSNeedsAttention(t *testing.T) {
	body := do(t, sqsServer(), "GET", "/").Body.String()
	att := body[strings.Index(body, "Needs attention"):]
	for _, w := range []string{
		"2 consumers are stalled or stopped",
		`<span class="big">2</span> <span class="muted">of 7</span>`,
	} {
		if !strings.Contains(body, w) {
			t.Errorf("overview lacks %q", w)
		}
	}
	mailer, pay, locked := strings.Index(att, escapedHref(queue.SQSQueuePage("prod-eu", sqsMailer))), strings.Index(att, escapedHref("/sqs/prod-eu/queues/pay.fifo")), strings.Index(att, escapedHref("/sqs/prod-eu/queues/locked"))
	if mailer < 0 || pay < 0 || locked < 0 {
		t.Fatalf("needs attention lacks an SQS queue (mailer %d, pay.fifo %d, locked %d)", mailer, pay, locked)
	}
	if mailer > pay || pay > locked {
		t.Error("needs attention does not rank stop, stall, error")
	}
	for _, w := range []string{"sqs:prod-eu", "40 pending", "in flight at the SQS limit of 120,000", "AccessDenied", ">≥ 10m<", "old or more (seen while browsing)"} {
		if !strings.Contains(att, w) {
			t.Errorf("needs attention lacks %q", w)
		}
	}
}

// TestSQSQueuePage: a queue's page shows its attributes, status sentence,
// redrive policy and chart; a DLQ's page its sources; unknown queues 404.
func TestSQSQueuePage(t *testing.T) {
	s := sqsServer()
	rec := do(t, s, "GET", "/sqs/prod-eu/queues/orders")
	if rec.Code != 200 {
		t.Fatalf("queue page %d", rec.Code)
	}
	body := rec.Body.String()
	ordersDLQ := "/dlq/" + url.PathEscape((queue.DLQRef{Broker: queue.SQS, Cluster: "prod-eu", Name: "orders-dlq"}).ID())
	for _, w := range []string{
		"<h1 title=\"orders\">orders</h1>",
		"1,200 visible, 3 in flight — no sign of a missing or stuck consumer",
		"sqs:prod-eu", ">standard<", ">1,200<", ">30s<", ">4d<", `title="345,600 s"`,
		escapedHref(ordersDLQ) + ` title="open the DLQ's messages">orders-dlq</a> <span class="muted">after 5 receives</span>`,
		`title="7 messages">7<`,
		`data-chart="sqs" data-url="/api/v1/sqs/queues/prod-eu/orders/history"`,
	} {
		if !strings.Contains(body, w) {
			t.Errorf("queue page lacks %q", w)
		}
	}
	if strings.Contains(body, "dead letters of") || strings.Contains(body, `class="tag"`) {
		t.Error("a queue that is no DLQ lists sources")
	}

	dlq := do(t, s, "GET", "/sqs/prod-eu/queues/orders-dlq").Body.String()
	for _, w := range []string{
		"no redrive policy", "dead letters of",
		`<a class="badge st-neutral big-badge" ` + escapedHref(ordersDLQ) + ` title="`,
		escapedHref("/sqs/prod-eu/queues/orders") + `>orders</a>`,
		`<span title="not among the watched queues">gone</span>`,
		escapedHref(ordersDLQ) + ` title="7 messages">inspect 7</a>`,
		`title="not reported by this server">—<`,
		">≥ 3h 20m (seen while browsing)<",
	} {
		if !strings.Contains(dlq, w) {
			t.Errorf("DLQ's queue page lacks %q", w)
		}
	}

	stalled := do(t, s, "GET", "/sqs/prod-eu/queues/pay.fifo?partial=1").Body.String()
	for _, w := range []string{`hx-swap-oob="true"`, "in flight at the SQS limit of 120,000", `class="num st-stall"`, ">FIFO<", "after 1 receive<"} {
		if !strings.Contains(stalled, w) {
			t.Errorf("stalled queue's refresh lacks %q", w)
		}
	}
	hostilePage := do(t, s, "GET", queue.SQSQueuePage("prod-eu", sqsMailer)).Body.String()
	if strings.Contains(hostilePage, "<script>alert") || !strings.Contains(hostilePage, "no consumer: 40 visible") {
		t.Error("the hostile queue's page is not its text")
	}
	if locked := do(t, s, "GET", "/sqs/prod-eu/queues/locked").Body.String(); !strings.Contains(locked, "AccessDenied") {
		t.Error("an unread queue's page does not say why")
	}
	for _, target := range []string{"/sqs/prod-eu/queues/nope", "/sqs/nope/queues/orders", "/sqs/prod/queues/orders"} {
		if rec := do(t, s, "GET", target); rec.Code != 404 {
			t.Errorf("%s: %d", target, rec.Code)
		}
	}
}

// TestSQSAPI: the queue list is worst first with its counts and DLQ, and
// the history is the reader history's visible messages.
func TestSQSAPI(t *testing.T) {
	s := sqsServer()
	var list struct {
		Queues []api.SqsQueueJSON `json:"queues"`
	}
	if err := json.Unmarshal(do(t, s, "GET", "/api/v1/sqs/queues").Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Queues) != 6 || list.Queues[0].Queue != sqsMailer || list.Queues[0].Status != queue.StatusStop {
		t.Fatalf("queues %+v", list.Queues)
	}
	for _, q := range list.Queues {
		switch q.Queue {
		case "orders":
			if q.Visible != 1200 || q.InFlight != 3 || q.Delayed != 1 || q.DeadLetterQueue != "orders-dlq" || q.MaxReceiveCount != 5 ||
				q.RetentionSeconds == nil || *q.RetentionSeconds != 345600 || q.DLQ != "" || q.OldestAgeSeconds != nil || q.OldestAgeBasis != "" {
				t.Errorf("orders %+v", q)
			}
		case "orders-dlq":
			if q.DLQ != "sqs:prod-eu::orders-dlq" || q.RetentionSeconds != nil ||
				q.OldestAgeSeconds == nil || *q.OldestAgeSeconds != 12000 || q.OldestAgeBasis != queue.SQSAgeBrowse {
				t.Errorf("orders-dlq %+v", q)
			}
		}
	}
	var h struct {
		Queue   string             `json:"queue"`
		History []api.SqsPointJSON `json:"history"`
	}
	if err := json.Unmarshal(do(t, s, "GET", "/api/v1/sqs/queues/prod-eu/orders/history").Body.Bytes(), &h); err != nil {
		t.Fatal(err)
	}
	if h.Queue != "orders" || len(h.History) != 1 || h.History[0].Visible != 5 {
		t.Errorf("history %+v", h)
	}
}

// TestSQSDLQHeadroom: an SQS DLQ's page says when SQS deletes its oldest
// letter — MessageRetentionPeriod less its age (a FIFO DLQ's letters start
// a new clock when moved) — and says nothing when the server does not
// report the retention (orders-dlq, as ElasticMQ).
func TestSQSDLQHeadroom(t *testing.T) {
	page := func(name string) string {
		return "/dlq/" + url.PathEscape((queue.DLQRef{Broker: queue.SQS, Cluster: "prod-eu", Name: name}).ID())
	}
	body := do(t, sqsServer(), "GET", page("pay-dlq.fifo")).Body.String()
	want := html.EscapeString("The broker's retention: the oldest pending dead letter is deleted in 40m (MessageRetentionPeriod 1h). Replay or move what must be kept.")
	if !strings.Contains(body, `id="dlq-headroom"`) || !strings.Contains(body, want) {
		t.Errorf("the DLQ page lacks %q", want)
	}
	unknown := do(t, sqsServer(), "GET", page("orders-dlq")).Body.String()
	if !strings.Contains(unknown, `id="dhead"`) || strings.Contains(unknown, `id="dlq-headroom"`) || strings.Contains(unknown, "retention headroom") {
		t.Error("a DLQ whose retention is not reported shows a headroom")
	}
}
