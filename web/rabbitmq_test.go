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
)

// rabbitOddVHost and rabbitOddQueue are a vhost and a queue whose names
// need escaping in a path, an ID and HTML.
const (
	rabbitOddVHost = "a:b/c %2F"
	rabbitOddQueue = "stalled " + hostile
)

// rabbitServer serves one RabbitMQ cluster "main": orders (ok, consuming
// slower than producing, dead-lettering into orders.dlq), orders.dlq (a
// DLQ without consumers: not judged), billing (stop: no consumer) and a
// stalled queue with an odd name in an odd vhost, with a reader history.
// orders.dlq has a message TTL of a day and a head 23h 20m old: its
// oldest letter is deleted in 40m.
func rabbitServer() *Server {
	now := time.Now()
	return New(Options{
		Metrics: http.NotFoundHandler(), GrafanaURL: "https://grafana.example",
		Monitor: historyMonitor{staticMonitor{ready: true, snaps: []*queue.Snapshot{{
			Broker: queue.RabbitMQ, Cluster: "main", Time: now,
			Queues: []queue.Queue{
				{
					Cluster: "main", VHost: "/", Name: "orders", Type: "quorum", Ready: 1200, Unacked: 30, Consumers: 3,
					Utilisation: 0.42, HasUtilisation: true, DeadLetterExchange: "dlx", HasDeadLetter: true,
					Status: queue.StatusOK, ETA: queue.ETA{Known: true, FallingBehind: true, Rates: true, ConsumeRate: 20, ProduceRate: 50},
				},
				{
					Cluster: "main", VHost: "/", Name: "orders.dlq", Type: "classic", Ready: 5, Status: queue.StatusOK, StatusReason: queue.DLQReason,
					MessageTTL: 24 * time.Hour, HeadMessageAge: 23*time.Hour + 20*time.Minute, HasHeadAge: true,
				},
				{
					Cluster: "main", VHost: "/", Name: "billing", Type: "classic", Ready: 12,
					Status: queue.StatusStop, StatusReason: "no consumer since 05:09 UTC (1h 14m), 12 ready", StatusSince: now.Add(-74 * time.Minute),
				},
				{
					Cluster: "main", VHost: rabbitOddVHost, Name: rabbitOddQueue, Type: "classic", Ready: 50, Unacked: 10, Consumers: 1,
					Status: queue.StatusStall, StatusReason: "1 consumer attached and nothing delivered or acknowledged for 45s while 50 are ready",
					ETA: queue.ETA{Known: true, FallingBehind: true, Rates: true},
				},
			},
			DLQs: []queue.DLQ{{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "orders.dlq", Sources: []string{"orders"}, Detection: queue.DetectedTopology, Messages: 5}},
		}}, statuses: []queue.SourceStatus{{Broker: queue.RabbitMQ, Cluster: "main", Up: true, Polled: true, LastPoll: now}}}},
	})
}

// rabbitPage is the page of a queue of rabbitServer.
func rabbitPage(vhost, name string) string { return queue.RabbitMQQueuePage("main", vhost, name) }

// TestRabbitMQQueuePage: a queue's page shows its status and sentence,
// depth, consumers, utilisation, rates and ETA, the chart of its history,
// and links the DLQ its dead letters reach; a DLQ's page shows the DLQ
// state and its sources instead of a status, and no ETA.
func TestRabbitMQQueuePage(t *testing.T) {
	s := rabbitServer()
	page := do(t, s, "GET", rabbitPage("/", "orders")+"?range=6h")
	if page.Code != http.StatusOK {
		t.Fatalf("orders page = %d", page.Code)
	}
	body := page.Body.String()
	for _, want := range []string{
		`<h1 title="orders">orders</h1>`,
		`data-status="ok"`,
		`no missing consumer, stall or rising backlog over the status window`,
		`data-fact="ready" title="1,200 messages waiting to be delivered">1,200</dd>`,
		`data-fact="consumers">3</dd>`,
		`data-fact="utilisation">42%</dd>`,
		`data-fact="eta">falling behind</dd>`,
		`>20/s <span class="muted">/</span> 50/s</dd>`,
		`data-chart="rabbitmq" data-url="/api/v1/rabbitmq/queues/main/%2F/orders/history" data-range="6h"`,
		`href="/dlq/rabbitmq:main:%2F:orders.dlq" data-dlq-link`,
		`via dlx`,
		`href="https://grafana.example/d/queuewatch-consumer-lag?var-rabbitmq_cluster=main&amp;var-rabbitmq_queue=orders&amp;var-rabbitmq_vhost=%2F"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("orders page lacks %q", want)
		}
	}

	dlq := do(t, s, "GET", rabbitPage("/", "orders.dlq")).Body.String()
	for _, want := range []string{`data-state="dlq"`, `<a href="/rabbitmq/main/queues/%2F/orders">orders</a>`, html.EscapeString(queue.DLQReason)} {
		if !strings.Contains(dlq, want) {
			t.Errorf("DLQ page lacks %q", want)
		}
	}
	for _, not := range []string{`data-fact="eta"`, `class="num st-stop" data-fact="consumers"`} {
		if strings.Contains(dlq, not) {
			t.Errorf("DLQ page has %q: a DLQ is not judged by its consumers", not)
		}
	}

	stop := do(t, s, "GET", rabbitPage("/", "billing")).Body.String()
	for _, want := range []string{`data-status="stop"`, `no consumer since 05:09 UTC (1h 14m), 12 ready`, `class="num st-stop" data-fact="consumers">0</dd>`, `no dead-letter exchange`} {
		if !strings.Contains(stop, want) {
			t.Errorf("billing page lacks %q", want)
		}
	}

	odd := do(t, s, "GET", rabbitPage(rabbitOddVHost, rabbitOddQueue))
	if odd.Code != http.StatusOK || strings.Contains(odd.Body.String(), hostile) || !strings.Contains(odd.Body.String(), `data-status="stall"`) {
		t.Errorf("odd queue page = %d, escaped and stall: %.300s", odd.Code, odd.Body.String())
	}
	for _, missing := range []string{rabbitPage("/", "nope"), rabbitPage("other", "orders"), "/rabbitmq/nope/queues/%2F/orders"} {
		if rec := do(t, s, "GET", missing); rec.Code != http.StatusNotFound {
			t.Errorf("%s = %d, want 404", missing, rec.Code)
		}
	}
}

// TestRabbitMQQueuesTab: the queues tab has a status column (the DLQ
// state for a DLQ), each name opens the queue's page, it sorts by harm,
// and a stopped or stalled queue is in "Needs attention" with its page.
func TestRabbitMQQueuesTab(t *testing.T) {
	s := rabbitServer()
	tab := do(t, s, "GET", "/?tab=queues&sort=status&dir=desc").Body.String()
	for _, want := range []string{
		`<a href="/rabbitmq/main/queues/%2F/orders" title="orders">orders</a>`,
		`<tr data-status="ok" data-queue="orders.dlq">`,
	} {
		if !strings.Contains(tab, want) {
			t.Errorf("queues tab lacks %q", want)
		}
	}
	stall, stop := strings.Index(tab, `<tr data-status="stall"`), strings.Index(tab, `<tr data-status="stop" data-queue="billing">`)
	if stop < 0 || stall < 0 || stop > stall {
		t.Errorf("queues by status: stop at %d, stall at %d; want stop first", stop, stall)
	}
	attention := tab[strings.Index(tab, "Needs attention"):]
	if !strings.Contains(attention, `/rabbitmq/main/queues/%2F/billing`) {
		t.Error("a queue without consumers is not in Needs attention, linking its page")
	}
}

// TestRabbitMQQueueAPI: the list is worst first with each queue's status,
// reader ID, rates and ETA in a group's field names; one queue answers
// alone; its history feeds the chart.
func TestRabbitMQQueueAPI(t *testing.T) {
	s := rabbitServer()
	var list struct{ Queues []map[string]any }
	if err := json.Unmarshal(do(t, s, "GET", "/api/v1/rabbitmq/queues").Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, q := range list.Queues {
		order = append(order, q["queue"].(string)+":"+q["status"].(string))
	}
	if want := "billing:stop," + rabbitOddQueue + ":stall,orders:ok,orders.dlq:ok"; strings.Join(order, ",") != want {
		t.Errorf("order %v; want %s", order, want)
	}
	one := do(t, s, "GET", "/api/v1/rabbitmq/queues/main/%2F/orders")
	var q map[string]any
	if err := json.Unmarshal(one.Body.Bytes(), &q); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{
		"id": "rabbitmq:main:/:orders", "consume_rate": 20.0, "produce_rate": 50.0, "falling_behind": true,
		"consumer_utilisation": 0.42, "dead_letter_dlq": "rabbitmq:main:/:orders.dlq", "dead_letter_exchange": "dlx",
	} {
		if q[k] != want {
			t.Errorf("%s = %v; want %v", k, q[k], want)
		}
	}
	odd := do(t, s, "GET", "/api/v1/rabbitmq/queues/main/"+url.PathEscape(rabbitOddVHost)+"/"+url.PathEscape(rabbitOddQueue))
	if !strings.Contains(odd.Body.String(), `"id":"rabbitmq:main:a%3Ab/c %252F:stalled`) {
		t.Errorf("odd queue's ID does not escape its vhost as reader IDs do: %s", odd.Body.String())
	}
	var hist struct{ History []map[string]any }
	if err := json.Unmarshal(do(t, s, "GET", "/api/v1/rabbitmq/queues/main/%2F/orders/history").Body.Bytes(), &hist); err != nil {
		t.Fatal(err)
	}
	if len(hist.History) == 0 || hist.History[len(hist.History)-1]["ready"] == nil {
		t.Errorf("history %v", hist.History)
	}
}

// TestRabbitMQDLQHeadroom: a DLQ whose oldest letter its queue's message
// TTL deletes within alerts.retention_headroom_low says so in its page's
// header, refreshed with it; beyond that the figure is only a fact, and a
// DLQ whose poll tells nothing of its retention (a Kafka DLT) shows
// neither.
func TestRabbitMQDLQHeadroom(t *testing.T) {
	page := "/dlq/" + url.PathEscape((queue.DLQRef{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "orders.dlq"}).ID())
	sentence := html.EscapeString("The broker's retention: the oldest pending dead letter is deleted in 40m (message TTL 1d, or later: the age is from the publish, RabbitMQ's TTL from the dead-lettering). Replay or move what must be kept.")
	fact := `title="oldest pending dead letter is deleted in 40m (message TTL 1d, or later: the age is from the publish, RabbitMQ&#39;s TTL from the dead-lettering)">40m</dd>`
	s := rabbitServer()
	for _, target := range []string{page, page + "?partial=1"} {
		body := do(t, s, "GET", target).Body.String()
		head := body[strings.Index(body, `id="dhead"`):]
		head = head[:strings.Index(head, "</section>")]
		if !strings.Contains(head, `id="dlq-headroom"`) || !strings.Contains(head, sentence) {
			t.Errorf("%s: the header does not say when the oldest letter is deleted:\n%s", target, head)
		}
		if !strings.Contains(head, fact) {
			t.Errorf("%s: the header's facts lack the headroom %q", target, fact)
		}
	}

	// With a threshold of 30m, 40m is no warning, but still a fact.
	calm := New(Options{Monitor: s.opts.Monitor, HeadroomLow: 30 * time.Minute})
	body := do(t, calm, "GET", page).Body.String()
	if strings.Contains(body, `id="dlq-headroom"`) || !strings.Contains(body, fact) {
		t.Errorf("40m with retention_headroom_low 30m: want the fact and no banner")
	}
	kafka := do(t, testServer(true), "GET", "/dlq/"+url.PathEscape("kafka:prod::orders.DLT")).Body.String()
	if !strings.Contains(kafka, `id="dhead"`) || strings.Contains(kafka, "retention headroom") || strings.Contains(kafka, `id="dlq-headroom"`) {
		t.Error("a Kafka DLT, whose retention the poll does not know, shows a headroom")
	}
}
