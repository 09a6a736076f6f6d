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

func natsServer() *Server {
	now := time.Now()
	return New(Options{
		Metrics: http.NotFoundHandler(),
		Monitor: staticMonitor{ready: true, snaps: []*queue.Snapshot{{
			Broker: queue.Kafka, Cluster: "prod", Time: now,
			Groups: []queue.ConsumerGroup{{Cluster: "prod", Name: "ok-group", State: "Stable", Members: 1, Status: queue.StatusOK}},
		}, {
			Broker: queue.NATS, Cluster: "local", Time: now,
			Streams: []queue.Stream{{Cluster: "local", Name: "ORDERS", FirstSeq: 1, LastSeq: 10, Messages: 10}},
			Consumers: []queue.StreamConsumer{
				{Cluster: "local", Stream: "ORDERS", Name: "healthy", Pull: true, MaxAckPending: 1000, HasLagSeconds: true, Status: queue.StatusOK, DeliveredSeq: 10, AckFloorSeq: 10},
				{
					Cluster: "local", Stream: "ORDERS", Name: "invoicing/stalled " + hostile, Pull: true, Pending: 7, AckPending: 3, MaxAckPending: 3,
					DeliveredSeq: 3, LagSeconds: 90, HasLagSeconds: true, Status: queue.StatusStall,
					StatusReason: "max_ack_pending reached: 3 delivered messages unacknowledged, so nothing more is delivered while 7 are pending",
				},
				{Cluster: "local", Stream: "ORDERS", Name: "mailer", Pending: 10, Status: queue.StatusStop, StatusReason: "no subscriber bound to its deliver subject, 10 pending"},
			},
			DLQs: []queue.DLQ{{Broker: queue.NATS, Cluster: "local", Name: "notifier", Sources: []string{"ORDERS"}, Detection: queue.DetectedConfig, Messages: 3}},
		}}, statuses: []queue.SourceStatus{{Broker: queue.NATS, Cluster: "local", Up: true, Polled: true, LastPoll: now}}},
	})
}

// TestNATSOverview: JetStream consumers have their own tab, sorted worst
// first, and the ones that need a person are in "Needs attention" with the
// groups, linking to their page.
func TestNATSOverview(t *testing.T) {
	s := natsServer()
	body := do(t, s, "GET", "/").Body.String()
	stalled := "/nats/local/streams/ORDERS/consumers/" + url.PathEscape("invoicing/stalled "+hostile)
	for _, want := range []string{
		`NATS consumers <span class="count">3</span>`,
		`href="` + strings.ReplaceAll(stalled, "&", "&amp;") + `"`,
		"max_ack_pending reached: 3 delivered messages unacknowledged",
		`href="/nats/local/streams/ORDERS/consumers/mailer"`,
		"nats:local · ORDERS",
		"2 consumers are stalled or stopped",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("a consumer name was rendered as markup")
	}
	// mailer (stop) ranks above invoicing (stall) in "Needs attention".
	if m, i := strings.Index(body, "consumers/mailer"), strings.Index(body, "consumers/invoicing"); m < 0 || i < 0 || m > i {
		t.Error("a stopped consumer is not listed before a stalled one")
	}

	tab := do(t, s, "GET", "/?tab=nats").Body.String()
	st, ok := strings.Index(tab, "consumers/mailer"), strings.Index(tab, "consumers/healthy")
	if st < 0 || ok < 0 || st > ok {
		t.Error("the NATS tab does not list a stopped consumer before a healthy one")
	}
	if !strings.Contains(tab, `<span class="st-stop">unbound</span>`) || !strings.Contains(tab, "3 / 3") {
		t.Error("the NATS tab does not show the unbound push consumer and the full in-flight window")
	}
}

func TestNATSConsumerPage(t *testing.T) {
	s := natsServer()
	rec := do(t, s, "GET", "/nats/local/streams/ORDERS/consumers/"+url.PathEscape("invoicing/stalled "+hostile))
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("consumer page %d", rec.Code)
	}
	for _, want := range []string{
		"max_ack_pending reached: 3 delivered messages unacknowledged, so nothing more is delivered while 7 are pending",
		">3 / 3<", ">1m 30s ", "all subjects", "nats:local",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("consumer page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("a consumer name was rendered as markup")
	}
	for _, target := range []string{
		"/nats/local/streams/ORDERS/consumers/nope", "/nats/nope/streams/ORDERS/consumers/healthy",
		"/nats/prod/streams/ORDERS/consumers/healthy",
	} {
		if rec := do(t, s, "GET", target); rec.Code != 404 {
			t.Errorf("%s: %d", target, rec.Code)
		}
	}
}

func TestAPINATSConsumers(t *testing.T) {
	rec := do(t, natsServer(), "GET", "/api/v1/nats/consumers")
	var got struct {
		Consumers []struct {
			Consumer      string   `json:"consumer"`
			Kind          string   `json:"kind"`
			Status        string   `json:"status"`
			Pending       uint64   `json:"pending"`
			AckPending    int      `json:"ack_pending"`
			MaxAckPending int      `json:"max_ack_pending"`
			LagSeconds    *float64 `json:"lag_seconds"`
		} `json:"consumers"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
		t.Fatalf("%d %v: %s", rec.Code, err, rec.Body)
	}
	var order []string
	for _, c := range got.Consumers {
		order = append(order, c.Status+" "+c.Kind+" "+c.Consumer)
	}
	want := []string{"stop push mailer", "stall pull invoicing/stalled " + hostile, "ok pull healthy"}
	if strings.Join(order, "|") != strings.Join(want, "|") {
		t.Errorf("order %q, want %q", order, want)
	}
	if s := got.Consumers[1]; s.Pending != 7 || s.AckPending != 3 || s.MaxAckPending != 3 || s.LagSeconds == nil || *s.LagSeconds != 90 {
		t.Errorf("stalled consumer %+v", s)
	}
	if got.Consumers[0].LagSeconds != nil {
		t.Error("lag seconds present while unknown")
	}
}

// natsHistoryMonitor adds JetStream consumer history to staticMonitor.
type natsHistoryMonitor struct {
	staticMonitor
	points []queue.GroupPoint
}

func (m natsHistoryMonitor) ConsumerHistory(cluster, stream, consumer string) []queue.GroupPoint {
	if cluster == "local" && stream == "ORDERS" && consumer == "mailer" {
		return m.points
	}
	return nil
}

// TestNATSSparklines: with history, the NATS tab and the consumer page draw
// the pending trend; without it they say there is none.
func TestNATSSparklines(t *testing.T) {
	s := natsServer()
	now := time.Now()
	s.opts.Monitor = natsHistoryMonitor{staticMonitor: s.opts.Monitor.(staticMonitor), points: []queue.GroupPoint{
		{At: now.Add(-30 * time.Second), Lag: 2}, {At: now.Add(-15 * time.Second), Lag: 6}, {At: now, Lag: 10, LagSeconds: 40},
	}}
	tab := do(t, s, "GET", "/?tab=nats").Body.String()
	if !strings.Contains(tab, "<title>pending of mailer · now 10 · peak 10</title>") {
		t.Error("the NATS tab has no pending sparkline for mailer")
	}
	page := do(t, s, "GET", "/nats/local/streams/ORDERS/consumers/mailer").Body.String()
	if !strings.Contains(page, "<title>pending of mailer · now 10 · peak 10</title>") || !strings.Contains(page, "<title>lag time of mailer, kept history</title>") {
		t.Error("the consumer page has no pending and lag time sparklines")
	}
	if healthy := do(t, s, "GET", "/nats/local/streams/ORDERS/consumers/healthy").Body.String(); !strings.Contains(healthy, "no history yet") {
		t.Error("a consumer without history does not say so")
	}
}
