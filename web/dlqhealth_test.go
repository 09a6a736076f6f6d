package web

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/queue"
)

// dlqHealthServer serves an SQS account whose DLQ fills with nothing in
// flight, judged as the evaluation judges it (alerts.SQSStatus over two
// reads, the DLQ known from the snapshot's DLQs), and a RabbitMQ cluster
// with a DLQ and a queue, both with ready messages and no consumer.
func dlqHealthServer() *Server {
	now := time.Now()
	sqs := &queue.Snapshot{
		Broker: queue.SQS, Cluster: "prod-eu", Time: now,
		SQSQueues: []queue.SQSQueue{
			{Cluster: "prod-eu", Name: "orders", ARN: "arn:aws:sqs:eu-west-1:1:orders", Visible: 3, InFlight: 1, DeadLetterQueue: "orders-dlq", MaxReceiveCount: 5},
			{Cluster: "prod-eu", Name: "orders-dlq", ARN: "arn:aws:sqs:eu-west-1:1:orders-dlq", Visible: 7},
		},
		DLQs: []queue.DLQ{{Broker: queue.SQS, Cluster: "prod-eu", Name: "orders-dlq", Sources: []string{"orders"}, Detection: queue.DetectedTopology, Messages: 7}},
	}
	for i := range sqs.SQSQueues {
		q := &sqs.SQSQueues[i]
		q.DLQ = !sqs.JudgedAsReader("", q.Name)
		prev := *q
		prev.Visible, prev.InFlight = 2, 0 // grew since the last read, nothing in flight then
		q.Status, q.StatusReason = alerts.SQSStatus(&prev, q)
	}
	rabbit := &queue.Snapshot{
		Broker: queue.RabbitMQ, Cluster: "main", Time: now,
		Queues: []queue.Queue{
			{Cluster: "main", VHost: "/", Name: "billing", Type: "classic", Ready: 3},
			{Cluster: "main", VHost: "/", Name: "billing.dlq", Type: "classic", Ready: 5},
		},
		DLQs: []queue.DLQ{{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "billing.dlq", Sources: []string{"billing"}, Detection: queue.DetectedTopology, Messages: 5}},
	}
	return New(Options{
		Metrics: http.NotFoundHandler(),
		Monitor: staticMonitor{ready: true, snaps: []*queue.Snapshot{sqs, rabbit}, statuses: []queue.SourceStatus{
			{Broker: queue.SQS, Cluster: "prod-eu", Up: true, Polled: true, LastPoll: now},
			{Broker: queue.RabbitMQ, Cluster: "main", Up: true, Polled: true, LastPoll: now},
		}},
	})
}

// row is the table row of body that holds marker, up to the row's end.
func row(t *testing.T, body, marker string) string {
	t.Helper()
	i := strings.Index(body, marker)
	if i < 0 {
		t.Fatalf("no row with %q", marker)
	}
	start := strings.LastIndex(body[:i], "<tr")
	end := strings.Index(body[i:], "</tr>")
	return body[start : i+end]
}

// TestDLQNotJudgedAsReader: a DLQ is not a reader with "no consumer" on
// any page: the SQS queues tab and the DLQ's page show a neutral DLQ state
// that opens its DLQ page, and the RabbitMQ queues tab does not mark a
// DLQ's 0 consumers red (it is muted, and says why), while a queue that is
// no DLQ in the same state still is red: the alert rules leave DLQs out
// the same way.
func TestDLQNotJudgedAsReader(t *testing.T) {
	s := dlqHealthServer()
	dlqPage := "/dlq/" + url.PathEscape((queue.DLQRef{Broker: queue.SQS, Cluster: "prod-eu", Name: "orders-dlq"}).ID())

	tab := do(t, s, "GET", "/?tab=sqs").Body.String()
	r := row(t, tab, `data-queue="orders-dlq"`)
	if strings.Contains(r, "st-stop") || strings.Contains(r, "no consumer") || !strings.Contains(r, `data-status="ok"`) {
		t.Errorf("the SQS tab judges DLQ orders-dlq as a reader without consumer: %s", r)
	}
	if !strings.Contains(r, `class="badge st-neutral" `+escapedHref(dlqPage)) || !strings.Contains(r, `data-state="dlq"`) {
		t.Errorf("the SQS tab shows no neutral DLQ state linking %s: %s", dlqPage, r)
	}

	page := do(t, s, "GET", queue.SQSQueuePage("prod-eu", "orders-dlq")).Body.String()
	if strings.Contains(page, "st-stop") || strings.Contains(page, "no consumer:") || !strings.Contains(page, `data-state="dlq"`) {
		t.Error("the page of DLQ orders-dlq judges it as a reader, or shows no DLQ state")
	}
	if !strings.Contains(page, html.EscapeString(queue.DLQReason)) {
		t.Errorf("the page of DLQ orders-dlq does not say why: %q", queue.DLQReason)
	}

	queues := do(t, s, "GET", "/?tab=queues").Body.String()
	dlq := row(t, queues, `title="billing.dlq"`)
	if strings.Contains(dlq, "st-stop") || !strings.Contains(dlq, `<td class="num muted" title="no consumer: a dead-letter queue`) {
		t.Errorf("the queues tab marks DLQ billing.dlq's 0 consumers red, or not muted with why: %s", dlq)
	}
	if q := row(t, queues, `title="billing"`); !strings.Contains(q, `<td class="num st-stop">0</td>`) {
		t.Errorf("the queues tab does not mark billing's 0 consumers red: %s", q)
	}
}
