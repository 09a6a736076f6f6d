package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	gpubsub "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/queuewatch/queuewatch/alerts"
	brokerpubsub "github.com/queuewatch/queuewatch/brokers/pubsub"
	"github.com/queuewatch/queuewatch/collectors"
	pubsubcol "github.com/queuewatch/queuewatch/collectors/pubsub"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	dlqpubsub "github.com/queuewatch/queuewatch/dlqreplay/pubsub"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// pubsubPublishPy publishes argv[1] messages to topic argv[2] with the
// Python client.
const pubsubPublishPy = `
import sys
from google.cloud import pubsub_v1
pub = pubsub_v1.PublisherClient()
topic = pub.topic_path("` + testenv.PubSubProject + `", sys.argv[2])
for f in [pub.publish(topic, b"order %d" % i) for i in range(int(sys.argv[1]))]:
    f.result()
`

// fakeMonitoring answers Cloud Monitoring's projects.timeSeries.list in
// its documented shape (no local server answers it) with a backlog
// growing with each call and an oldest age for one subscription, so the
// page's chart has points; other metrics have no series.
func fakeMonitoring(t *testing.T, sub string) string {
	t.Helper()
	var mu sync.Mutex
	n := int64(1200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		filter := r.URL.Query().Get("filter")
		w.Header().Set("Content-Type", "application/json")
		mu.Lock()
		n += 15
		v := n
		mu.Unlock()
		value := ""
		switch {
		case strings.Contains(filter, "num_undelivered_messages"):
			value = fmt.Sprint(v)
		case strings.Contains(filter, "oldest_unacked_message_age"):
			// Flat, so its line does not lie on the backlog's.
			value = "754"
		default:
			_, _ = w.Write([]byte(`{}`))
			return
		}
		end := time.Now().Add(-2 * time.Minute).UTC().Format(time.RFC3339)
		fmt.Fprintf(w, `{"timeSeries": [{"resource": {"type": "pubsub_subscription", "labels": {"project_id": %q, "subscription_id": %q}},
			"metricKind": "GAUGE", "valueType": "INT64", "points": [{"interval": {"endTime": %q}, "value": {"int64Value": %q}}]}]}`,
			testenv.PubSubProject, sub, end, value)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// pubsubWorld is a real emulator project polled every second by a real
// Pub/Sub collector behind the web server: shop-orders dead-letters into
// shop-orders-dlq (kept 1d against 7d, at 5 attempts: two traps), and
// shop-pay's dead-letter topic has no subscription.
type pubsubWorld struct {
	base, ordersPage, dlqID string
}

func newPubSubWorld(t *testing.T) *pubsubWorld {
	t.Helper()
	emu := testenv.PubSub(t)
	// Plain names, so the screenshots read like a shop's project: this
	// package's emulator serves no other test, and everything is deleted
	// after, so a rerun (-count) starts afresh.
	p := "shop"
	w := &pubsubWorld{ordersPage: queue.PubSubSubscriptionPage("local", p+"-orders")}
	w.dlqID = (queue.DLQRef{Broker: queue.PubSub, Cluster: "local", Name: p + "-orders-dlq"}).ID()
	cl, err := brokerpubsub.New(config.PubSub{
		Name: "local", Project: emu.Project, Endpoint: emu.Host,
		Monitoring: config.PubSubMonitoring{Enabled: true, Endpoint: fakeMonitoring(t, p+"-orders")},
	})
	if err != nil {
		t.Fatal(err)
	}
	client, err := cl.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	top := func(id string) string { return "projects/" + emu.Project + "/topics/" + id }
	sub := func(id string) string { return "projects/" + emu.Project + "/subscriptions/" + id }
	for _, id := range []string{p + "-orders", p + "-orders-dl", p + "-pay", p + "-pay-dl"} {
		if _, err := client.TopicAdminClient.CreateTopic(t.Context(), &pubsubpb.Topic{Name: top(id)}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = client.TopicAdminClient.DeleteTopic(context.Background(), &pubsubpb.DeleteTopicRequest{Topic: top(id)})
		})
	}
	week := durationpb.New(7 * 24 * time.Hour)
	for _, s := range []*pubsubpb.Subscription{
		{
			Name: sub(p + "-orders"), Topic: top(p + "-orders"), MessageRetentionDuration: week, AckDeadlineSeconds: 30,
			DeadLetterPolicy: &pubsubpb.DeadLetterPolicy{DeadLetterTopic: top(p + "-orders-dl"), MaxDeliveryAttempts: 5},
		},
		{Name: sub(p + "-orders-dlq"), Topic: top(p + "-orders-dl"), MessageRetentionDuration: durationpb.New(24 * time.Hour)},
		{
			Name: sub(p + "-pay"), Topic: top(p + "-pay"), MessageRetentionDuration: week,
			DeadLetterPolicy: &pubsubpb.DeadLetterPolicy{DeadLetterTopic: top(p + "-pay-dl"), MaxDeliveryAttempts: 20},
		},
	} {
		if _, err := client.SubscriptionAdminClient.CreateSubscription(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = client.SubscriptionAdminClient.DeleteSubscription(context.Background(), &pubsubpb.DeleteSubscriptionRequest{Subscription: s.Name})
		})
	}
	src, err := pubsubcol.New(pubsubcol.Options{Cluster: cl, Include: func(n string) bool { return strings.HasPrefix(n, p) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	col := collectors.New([]collectors.Source{src}, collectors.Options{
		Interval: time.Second, Timeout: 5 * time.Second, History: time.Hour,
		Evaluator: alerts.NewEvaluator(alerts.StatusOptions{Window: 5}),
	})
	var wg sync.WaitGroup
	wg.Go(func() { col.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait(); src.Close() })
	// The DLQ pages browse through the real replay backend, over a store
	// as in serve.
	be, err := dlqpubsub.New(t.Context(), dlqpubsub.Options{Cluster: "local", Project: emu.Project, ClientOptions: cl.ClientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dlqs, err := dlqreplay.New(dlqreplay.Options{Store: st, Backends: []dlqreplay.Backend{be}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dlqs.Close(); _ = be.Close(); _ = st.Close() })
	ts := httptest.NewServer(New(Options{Monitor: col, Metrics: col.Handler(prometheus.NewRegistry()), DLQs: dlqs}))
	t.Cleanup(ts.Close)
	w.base = ts.URL

	// Two poison orders: a subscriber nacks them until they are
	// dead-lettered and the DLQ counts both.
	emu.Python(t, pubsubPublishPy, "2", p+"-orders")
	rctx, stop := context.WithCancel(t.Context())
	var rwg sync.WaitGroup
	rwg.Go(func() {
		_ = client.Subscriber(p+"-orders").Receive(rctx, func(_ context.Context, m *gpubsub.Message) { m.Nack() })
	})
	defer func() { stop(); rwg.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for dlqDepth(col, w.dlqID) != 2 {
		if time.Now().After(deadline) {
			t.Fatal("the DLQ did not count 2 dead letters in 60s")
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-t.Context().Done():
			t.FailNow()
		}
	}
	return w
}

// TestBrowserPubSub: on the real emulator, the overview's Pub/Sub tab
// lists the subscriptions with their traps and DLQ, the subscription page
// shows the policy, the traps, the counted DLQ ("≥ 2") and Cloud
// Monitoring's backlog chart, and a DLQ subscription's page names its
// source.
func TestBrowserPubSub(t *testing.T) {
	b := newBrowser(t, 1280, 900)
	w := newPubSubWorld(t)
	b.run(t, chromedp.Navigate(w.base+"/?tab=pubsub"))
	b.waitJS(t, "three subscriptions", `document.querySelectorAll('#pubsub tbody tr').length === 3`, 30*time.Second)
	rows := evalJS[string](t, b, `Array.from(document.querySelectorAll('#pubsub tbody tr')).map(r => r.getAttribute('data-status') + ' ' + r.querySelector('td.dl-to').textContent.trim().replace(/\s+/g, ' ')).join('\n')`)
	for _, want := range []string{"warn shop-pay-dl (dropped) after 20 delivery attempts", "warn shop-orders-dlq after 5 delivery attempts", "ok "} {
		if !strings.Contains(rows, want) {
			t.Errorf("Pub/Sub tab rows:\n%s\nlack %q", rows, want)
		}
	}
	shots := os.Getenv("QW_SCREENSHOTS")
	if shots != "" {
		sqsScreenshot(t, b, w.base+"/?tab=pubsub", shots, "pubsub-overview")
	}

	// The chart reads every point at once: wait for a few before opening
	// the page, so that it is drawn at the first look (each look reads the
	// canvas back, and chromium warns after several).
	hist := "/api/v1/pubsub/subscriptions/local/shop-orders/history"
	for deadline := time.Now().Add(30 * time.Second); ; {
		_, body := get(t, w.base, hist)
		if strings.Count(body, `"undelivered"`) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than 3 points of history in 30s: %s", body)
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-t.Context().Done():
			t.FailNow()
		}
	}
	b.run(t, chromedp.Navigate(w.base+w.ordersPage))
	b.waitJS(t, "the traps", `document.querySelectorAll('[data-lint]').length === 2`, 20*time.Second)
	dl := evalJS[string](t, b, `document.querySelector('#pubsubdl').innerText`)
	if !strings.Contains(dl, "after 5 delivery attempts") || !strings.Contains(dl, "inspect ≥ 2") {
		t.Errorf("dead letters section %q", dl)
	}
	if href := evalJS[string](t, b, `document.querySelector('#pubsubdl a.btn').getAttribute('href')`); href != "/dlq/"+url.PathEscape(w.dlqID) {
		t.Errorf("DLQ link %q", href)
	}
	b.waitJS(t, "uPlot legend", `document.querySelector('#chart[data-chart="pubsub"] canvas') && document.querySelector('#chart .u-legend')`, 20*time.Second)
	if labels := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#chart .u-legend .u-series .u-label')).map(e => e.textContent)`); strings.Join(labels, ",") != "Time,undelivered,oldest unacked" {
		t.Errorf("legend %q", labels)
	}
	b.waitJS(t, "backlog drawn", drawnPixelsJS+`('#chart') > 30`, 20*time.Second)
	if shots != "" {
		sqsScreenshot(t, b, w.base+w.ordersPage, shots, "pubsub-subscription")
	}
	if e := evalJS[string](t, b, `document.querySelector('#chart').getAttribute('data-error') || ''`); e != "" {
		t.Errorf("chart error: %s", e)
	}

	// The DLQ's page shows the two dead letters, browsed without damage,
	// and says where a replay goes.
	b.run(t, chromedp.Navigate(w.base+"/dlq/"+url.PathEscape(w.dlqID)))
	b.waitJS(t, "the two dead letters", `document.querySelectorAll('#messages tbody tr[data-id]').length === 2`, 30*time.Second)
	if note := evalJS[string](t, b, `document.querySelector('#fanout-note').innerText`); !strings.Contains(note, "every subscription of that topic gets a copy") {
		t.Errorf("fan-out note %q", note)
	}
	if shots != "" {
		sqsScreenshot(t, b, w.base+"/dlq/"+url.PathEscape(w.dlqID), shots, "pubsub-dlq")
	}
	b.checkClean(t)
}

// dlqDepth is the depth of the DLQ with the given id in col's snapshots,
// -1 when not listed.
func dlqDepth(col *collectors.Collector, id string) int64 {
	for _, snap := range col.Snapshots() {
		for i := range snap.DLQs {
			if snap.DLQs[i].ID() == id {
				return snap.DLQs[i].Messages
			}
		}
	}
	return -1
}
