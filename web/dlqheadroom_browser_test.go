package web

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	amqp "github.com/rabbitmq/amqp091-go"

	brokerrabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	dlqrabbit "github.com/queuewatch/queuewatch/dlqreplay/rabbitmq"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// TestBrowserDLQHeadroom: on the real broker, a DLQ with a message TTL of
// 1h whose letters were published 40m ago (their timestamp property, the
// head's age the management API reports) says in its header, once the
// collector has read it, that its oldest letter is deleted in about 20m —
// below the default retention_headroom_low of 1h — or later: RabbitMQ
// counts the TTL from the dead-lettering, just now, so it deletes them in
// an hour; the page gives the earliest moment and says so. QW_SCREENSHOTS=dir saves
// the page (dlq-headroom.png).
func TestBrowserDLQHeadroom(t *testing.T) {
	b := newBrowser(t, 1280, 800)
	vh := testenv.Rabbit(t).VHost("dlqttl")
	ch := testenv.Channel(t, vh)
	if _, err := ch.QueueDeclare("payments.dlq", true, false, false, false, amqp.Table{"x-message-ttl": int32(time.Hour / time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("payments", true, false, false, false, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "payments.dlq"}); err != nil {
		t.Fatal(err)
	}
	published := time.Now().Add(-40 * time.Minute)
	for _, body := range []string{`{"payment":1}`, `{"payment":2}`} {
		if err := ch.PublishWithContext(t.Context(), "", "payments", false, false, amqp.Publishing{Body: []byte(body), Timestamp: published}); err != nil {
			t.Fatal(err)
		}
		d, ok, err := ch.Get("payments", false)
		if err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
		if err := d.Reject(false); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	cluster, err := brokerrabbit.New(config.RabbitMQ{Name: "main", URL: testenv.DefaultAMQPURL, ManagementURL: testenv.ManagementURL})
	if err != nil {
		t.Fatal(err)
	}
	src, err := rabbitmq.New(rabbitmq.Options{Cluster: cluster, VHosts: []string{vh}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	col := collectors.New([]collectors.Source{src}, collectors.Options{Interval: time.Second, Timeout: 5 * time.Second, History: time.Hour})
	go func() { defer close(done); col.Run(ctx) }()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	be, err := dlqrabbit.New(dlqrabbit.Options{Cluster: cluster})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := dlqreplay.New(dlqreplay.Options{Store: st, Backends: []dlqreplay.Backend{be}, MaxReplays: 5, FlushInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		svc.Close()
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	ts := httptest.NewServer(New(Options{Monitor: col, DLQs: svc}))
	t.Cleanup(ts.Close)

	// The page refreshes its header every 5 s: the sentence appears
	// without a reload once the management API reports the head's age.
	b.run(t, chromedp.Navigate(ts.URL+"/dlq/"+url.PathEscape((queue.DLQRef{Broker: queue.RabbitMQ, Cluster: "main", VHost: vh, Name: "payments.dlq"}).ID())))
	b.waitJS(t, "the headroom banner", `document.getElementById('dlq-headroom')`, 30*time.Second)
	got := evalJS[string](t, b, `document.querySelector('#dlq-headroom div').innerText`)
	const prefix = "The broker's retention: the oldest pending dead letter is deleted in "
	figure, ok := strings.CutPrefix(got, prefix)
	about20m := strings.HasPrefix(figure, "19m") || strings.HasPrefix(figure, "20m")
	if !ok || !about20m || !strings.HasSuffix(got, " (message TTL 1h, or later: the age is from the publish, RabbitMQ's TTL from the dead-lettering). Replay or move what must be kept.") {
		t.Errorf("the header says %q, want %q about 20m (message TTL 1h)", got, prefix)
	}
	if fact := evalJS[string](t, b, `document.querySelector('#dhead dl.facts').innerText`); !strings.Contains(fact, "retention headroom") {
		t.Errorf("the facts %q lack the retention headroom", fact)
	}
	shotIfAsked(t, b, "dlq-headroom")
	b.checkClean(t)
}
