package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// pubsubServer serves a Kafka cluster and a Pub/Sub project read with
// Cloud Monitoring: orders (a backlog and two traps) dead-lettering into
// orders-dlq, pay whose dead-letter topic nobody subscribes to, and an
// export in RESOURCE_ERROR; and a DLQ counted without Monitoring.
func pubsubServer() *Server {
	now := time.Now()
	at := now.Add(-3 * time.Minute)
	return New(Options{
		Metrics: http.NotFoundHandler(),
		Monitor: staticMonitor{ready: true, snaps: []*queue.Snapshot{{
			Broker: queue.Kafka, Cluster: "prod", Time: now,
			Groups: []queue.ConsumerGroup{{Cluster: "prod", Name: "ok-group", State: "Stable", Members: 1, Status: queue.StatusOK}},
		}, {
			Broker: queue.PubSub, Cluster: "gcp", Time: now,
			PubSub: &queue.PubSubProject{Project: "orders-prod", Monitoring: true, ReadAt: now, ReadEvery: time.Minute},
			PubSubSubscriptions: []queue.PubSubSubscription{
				{
					Cluster: "gcp", Name: "orders", Topic: "orders", Delivery: "pull", DeadLetterTopic: "orders-dl", MaxDeliveryAttempts: 5,
					DeadLetterQueues: []string{"orders-dlq"}, AckDeadline: 10 * time.Second, Retention: 7 * 24 * time.Hour,
					RetryMin: 10 * time.Second, RetryMax: 10 * time.Minute, Filter: `attributes.region = "eu"`, Ordering: true, State: "ACTIVE",
					Status: queue.StatusWarn, StatusReason: "dead-letter subscription orders-dlq keeps messages 1d, less than this subscription's 7d: dead letters may expire unseen; maxDeliveryAttempts is 5, its floor: a consumer down for a few redeliveries dead-letters healthy messages",
					Lints: []queue.PubSubLint{
						{Kind: "dlq_retention_shorter", Sentence: "dead-letter subscription orders-dlq keeps messages 1d, less than this subscription's 7d: dead letters may expire unseen"},
						{Kind: "max_delivery_attempts_floor", Sentence: "maxDeliveryAttempts is 5, its floor: a consumer down for a few redeliveries dead-letters healthy messages"},
					},
					Monitoring: &queue.PubSubMetrics{At: at, Undelivered: 12400, HasUndelivered: true, OldestAge: 754 * time.Second, HasOldestAge: true, DeadLettered: 3},
				},
				{
					Cluster: "gcp", Name: "orders-dlq", Topic: "orders-dl", Delivery: "pull", DLQ: true, Retention: 24 * time.Hour,
					AckDeadline: 60 * time.Second, Status: queue.StatusOK, StatusReason: queue.DLQReason,
					Monitoring: &queue.PubSubMetrics{At: at, Undelivered: 7, HasUndelivered: true},
				},
				{
					Cluster: "gcp", Name: "pay", Topic: "pay", Delivery: "push", DeadLetterTopic: "pay-dl", MaxDeliveryAttempts: 20,
					AckDeadline: 10 * time.Second, Retention: 7 * 24 * time.Hour, Status: queue.StatusWarn,
					StatusReason: "dead-letter topic pay-dl has no subscription: dead letters are dropped",
					Lints:        []queue.PubSubLint{{Kind: "dead_letters_dropped", Sentence: "dead-letter topic pay-dl has no subscription: dead letters are dropped"}},
					Monitoring:   &queue.PubSubMetrics{At: at, Undelivered: 0, HasUndelivered: true},
				},
				{
					Cluster: "gcp", Name: "to-bq", Topic: "orders", Delivery: "bigquery", State: "RESOURCE_ERROR", AckDeadline: 10 * time.Second,
					Status: queue.StatusStop, StatusReason: "in RESOURCE_ERROR: Pub/Sub cannot deliver to its bigquery destination, and its backlog grows until that is fixed",
					Lints:      []queue.PubSubLint{{Kind: "resource_error", Sentence: "in RESOURCE_ERROR: Pub/Sub cannot deliver to its bigquery destination, and its backlog grows until that is fixed"}},
					Monitoring: &queue.PubSubMetrics{At: at, Undelivered: 88000, HasUndelivered: true, OldestAge: 2 * time.Hour, HasOldestAge: true},
				},
			},
			DLQs: []queue.DLQ{
				{Broker: queue.PubSub, Cluster: "gcp", Name: "orders-dlq", Sources: []string{"orders"}, Detection: queue.DetectedTopology, Messages: 7},
				{Broker: queue.PubSub, Cluster: "gcp", Name: "legacy-dlq", Sources: []string{"legacy"}, Detection: queue.DetectedTopology, Messages: 2, AtLeast: true},
			},
		}}, statuses: []queue.SourceStatus{
			{Broker: queue.Kafka, Cluster: "prod", Up: true, Polled: true, LastPoll: now},
			{Broker: queue.PubSub, Cluster: "gcp", Up: true, Polled: true, LastPoll: now},
		}},
	})
}

// TestPubSubOverview: Pub/Sub subscriptions have their own tab, worst
// first, each with its backlog, traps and where its dead letters go; the
// dropped dead letters say so.
func TestPubSubOverview(t *testing.T) {
	s := pubsubServer()
	body := do(t, s, "GET", "/?tab=pubsub").Body.String()
	if !strings.Contains(body, `Pub/Sub <span class="count">4</span>`) {
		t.Error("the overview has no Pub/Sub tab with 4 subscriptions")
	}
	order := []string{`data-subscription="to-bq"`, `data-subscription="orders"`, `data-subscription="pay"`, `data-subscription="orders-dlq"`}
	last := -1
	for _, o := range order {
		i := strings.Index(body, o)
		if i < 0 || i < last {
			t.Fatalf("%s missing or out of the worst-first order %v", o, order)
		}
		last = i
	}
	for _, want := range []string{"12.4k", "12m 34s", "pay-dl (dropped)", `href="/pubsub/gcp/subscriptions/orders"`, `href="/dlq/pubsub:gcp::orders-dlq"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the Pub/Sub tab lacks %q", want)
		}
	}
}

// TestPubSubSubscriptionPage: a subscription's page shows its policy, its
// traps with their runbooks, its DLQ and where the backlog comes from; a
// DLQ's page names its source; an unknown one is a 404.
func TestPubSubSubscriptionPage(t *testing.T) {
	s := pubsubServer()
	body := do(t, s, "GET", "/pubsub/gcp/subscriptions/orders").Body.String()
	for _, want := range []string{
		`data-lint="dlq_retention_shorter"`, `data-lint="max_delivery_attempts_floor"`, "runbooks.md#queuewatchpubsubdeadletterrisk",
		"topic orders-dl", "after 5 delivery attempts", `href="/dlq/pubsub:gcp::orders-dlq"`, "10s to 10m backoff",
		"The backlog and oldest age are Cloud Monitoring", `data-chart="pubsub"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the subscription page lacks %q", want)
		}
	}
	dlq := do(t, s, "GET", "/pubsub/gcp/subscriptions/orders-dlq").Body.String()
	if !strings.Contains(dlq, `data-state="dlq"`) || !strings.Contains(dlq, `href="/pubsub/gcp/subscriptions/orders"`) {
		t.Error("the DLQ subscription's page shows no DLQ state or no link to its source")
	}
	if code := do(t, s, "GET", "/pubsub/gcp/subscriptions/nope").Code; code != http.StatusNotFound {
		t.Errorf("unknown subscription: %d, want 404", code)
	}
}

// TestPubSubAPI: GET /api/v1/pubsub/subscriptions lists every
// subscription worst first with its traps and Cloud Monitoring's figures.
func TestPubSubAPI(t *testing.T) {
	rec := do(t, pubsubServer(), "GET", "/api/v1/pubsub/subscriptions")
	var got struct {
		Subscriptions []struct {
			Subscription string              `json:"subscription"`
			Status       string              `json:"status"`
			Undelivered  *int64              `json:"undelivered"`
			Lints        []map[string]string `json:"lints"`
			DLQ          string              `json:"dlq"`
		} `json:"subscriptions"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Subscriptions) != 4 || got.Subscriptions[0].Subscription != "to-bq" || got.Subscriptions[0].Status != "stop" ||
		*got.Subscriptions[0].Undelivered != 88000 || got.Subscriptions[3].DLQ != "pubsub:gcp::orders-dlq" {
		t.Errorf("subscriptions = %+v", got.Subscriptions)
	}
}

// TestPubSubDLQPageSaysReplayFansOut: a Pub/Sub DLQ's page says that a
// replay reaches every subscription of the source's topic and names the
// narrow alternative; a Kafka DLQ's page says nothing of the kind.
func TestPubSubDLQPageSaysReplayFansOut(t *testing.T) {
	s := pubsubServer()
	body := do(t, s, "GET", "/dlq/"+url.PathEscape("pubsub:gcp::orders-dlq")).Body.String()
	if !strings.Contains(body, `id="fanout-note"`) || !strings.Contains(body, "every subscription of that topic gets a copy") {
		t.Errorf("the Pub/Sub DLQ page does not say a replay reaches every subscription of the topic:\n%.3000s", body)
	}
	if kafka := do(t, testServer(true), "GET", "/dlq/"+url.PathEscape(testDLQ)).Body.String(); strings.Contains(kafka, `id="fanout-note"`) {
		t.Error("a Kafka DLQ's page warns of a Pub/Sub fan-out")
	}
}
