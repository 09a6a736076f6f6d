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
				{
					Cluster: "local", Stream: "ORDERS", Name: "healthy", Pull: true, MaxAckPending: 1000, HasLagSeconds: true, Status: queue.StatusOK, DeliveredSeq: 10, AckFloorSeq: 10,
					ETA: queue.ETA{Known: true, Rates: true, ConsumeRate: 12.5, ProduceRate: 12},
				},
				{
					Cluster: "local", Stream: "ORDERS", Name: "invoicing/stalled " + hostile, Pull: true, Pending: 7, AckPending: 3, MaxAckPending: 3,
					DeliveredSeq: 3, LagSeconds: 90, HasLagSeconds: true, Status: queue.StatusStall,
					Headroom:     queue.ProjectedHeadroom(600, 2, "max_msgs 1,000, discard old"),
					StatusReason: "max_ack_pending reached: 3 delivered messages unacknowledged, so nothing more is delivered while 7 are pending",
				},
				{Cluster: "local", Stream: "ORDERS", Name: "mailer", Pending: 10, Status: queue.StatusStop, StatusReason: "no subscriber bound to its deliver subject since 05:09 UTC (1h 14m), 10 pending", StatusSince: now.Add(-74 * time.Minute)},
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
	// mailer (stop) ranks above invoicing (stall) in "Needs attention"
	// (the Worst lag card above it links invoicing, the oldest lag).
	attention := body[strings.Index(body, "Needs attention"):]
	if m, i := strings.Index(attention, "consumers/mailer"), strings.Index(attention, "consumers/invoicing"); m < 0 || i < 0 || m > i {
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
		">3 / 3<", ">1m 30s<", "all subjects", "nats:local",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("consumer page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("a consumer name was rendered as markup")
	}
	if healthy := do(t, s, "GET", "/nats/local/streams/ORDERS/consumers/healthy").Body.String(); !strings.Contains(healthy, `<p class="sentence">no stall, stop or rising pending over the status window</p>`) {
		t.Error("an ok consumer's sentence is not the consumer one")
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

// TestNATSConsumerDeadLetters: the consumer page links the DLQ of its
// captured dead letters, named after the consumer or stream.consumer, and
// never another stream's.
func TestNATSConsumerDeadLetters(t *testing.T) {
	s := natsServer()
	snap := s.opts.Monitor.(staticMonitor).snaps[1]
	mailer := queue.DLQ{Broker: queue.NATS, Cluster: "local", Name: "mailer", Sources: []string{"ORDERS"}, Messages: 1284, OldestAge: 2 * time.Hour, HasOldestAge: true}
	snap.DLQs = append(snap.DLQs, mailer,
		queue.DLQ{Broker: queue.NATS, Cluster: "local", Name: "ORDERS.healthy", Sources: []string{"ORDERS"}, Messages: 5},
		queue.DLQ{Broker: queue.NATS, Cluster: "local", Name: "invoicing/stalled " + hostile, Sources: []string{"OTHER"}, Messages: 9})
	page := do(t, s, "GET", "/nats/local/streams/ORDERS/consumers/mailer").Body.String()
	if want := `<a href="/dlq/` + url.PathEscape(mailer.ID()) + `" title="1,284 captured dead letters">1,284 captured</a><span class="muted"> · oldest 2h</span>`; !strings.Contains(page, want) {
		t.Errorf("mailer's page lacks its dead letters %q", want)
	}
	healthyID := queue.DLQRef{Broker: queue.NATS, Cluster: "local", Name: "ORDERS.healthy"}.ID()
	if page := do(t, s, "GET", "/nats/local/streams/ORDERS/consumers/healthy").Body.String(); !strings.Contains(page, `href="/dlq/`+url.PathEscape(healthyID)+`"`) {
		t.Error("healthy's page does not link the DLQ named ORDERS.healthy")
	}
	stalled := do(t, s, "GET", "/nats/local/streams/ORDERS/consumers/"+url.PathEscape("invoicing/stalled "+hostile)).Body.String()
	if strings.Contains(stalled, "captured</a>") || !strings.Contains(stalled, ">none</dd>") {
		t.Error("a consumer's page links the dead letters of a namesake on another stream")
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
	points []queue.ConsumerPoint
}

func (m natsHistoryMonitor) ConsumerHistory(cluster, stream, consumer string) []queue.ConsumerPoint {
	if cluster == "local" && stream == "ORDERS" && consumer == "mailer" {
		return m.points
	}
	return nil
}

// ReaderHistory is mailer's points as the one reader history keeps them.
func (m natsHistoryMonitor) ReaderHistory(k queue.ReaderKey) []queue.ReaderPoint {
	if k != (queue.ReaderKey{Broker: queue.NATS, Cluster: "local", Scope: "ORDERS", Name: "mailer", Unit: queue.UnitMessages}) {
		return m.staticMonitor.ReaderHistory(k)
	}
	out := make([]queue.ReaderPoint, len(m.points))
	for i, p := range m.points {
		out[i] = queue.ReaderPoint{At: p.At, Backlog: p.Pending, LagSeconds: p.LagSeconds, HasLagSeconds: p.HasLagSeconds}
	}
	return out
}

// natsHistoryServer is natsServer with three polls of mailer's history,
// the first before its lag time was known.
func natsHistoryServer(now time.Time) *Server {
	opts := natsServer().opts
	opts.Monitor = natsHistoryMonitor{staticMonitor: opts.Monitor.(staticMonitor), points: []queue.ConsumerPoint{
		{At: now.Add(-30 * time.Second), Pending: 2, AckPending: 1},
		{At: now.Add(-15 * time.Second), Pending: 6, AckPending: 4, LagSeconds: 12.5, HasLagSeconds: true},
		{At: now, Pending: 10, AckPending: 3, LagSeconds: 40, HasLagSeconds: true},
	}}
	return New(opts)
}

// TestNATSConsumerChart: the NATS tab keeps its pending sparkline; the
// consumer page has the group page's chart, reading the consumer's history
// endpoint, instead of sparklines.
func TestNATSConsumerChart(t *testing.T) {
	s := natsHistoryServer(time.Now())
	tab := do(t, s, "GET", "/?tab=nats").Body.String()
	if !strings.Contains(tab, "<title>pending of mailer · now 10 · peak 10</title>") {
		t.Error("the NATS tab has no pending sparkline for mailer")
	}
	page := do(t, s, "GET", "/nats/local/streams/ORDERS/consumers/mailer?range=6h").Body.String()
	for _, want := range []string{
		`<h2>Backlog over time</h2>`,
		`data-chart="consumer" data-url="/api/v1/nats/consumers/local/ORDERS/mailer/history" data-range="6h"`,
		`<button type="button" data-range="6h" class="active">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("consumer page lacks %q", want)
		}
	}
	if strings.Contains(page, "<svg") {
		t.Error("the consumer page still draws sparklines next to its chart")
	}
	hostileURL := "/nats/local/streams/ORDERS/consumers/" + url.PathEscape("invoicing/stalled "+hostile)
	wantURL := "/api/v1/nats/consumers/local/ORDERS/" + url.PathEscape("invoicing/stalled "+hostile) + "/history"
	if h := do(t, s, "GET", hostileURL).Body.String(); !strings.Contains(h, `data-url="`+strings.ReplaceAll(wantURL, "&", "&amp;")+`"`) {
		t.Errorf("the hostile consumer's chart does not read %s", wantURL)
	}
	// The live refresh swaps the facts and sequences, never the chart.
	p := do(t, s, "GET", "/nats/local/streams/ORDERS/consumers/mailer?partial=1").Body.String()
	if strings.Contains(p, "<html") || !strings.Contains(p, `id="ghead" class="ghead" hx-swap-oob="true"`) || !strings.Contains(p, `id="nseqs" hx-swap-oob="true"`) || strings.Contains(p, "data-chart=") {
		t.Errorf("partial refresh: %s", p)
	}
}

// TestAPINATSConsumerHistory: the chart's JSON is the kept history point
// for point, with null lag seconds where a poll did not know them.
func TestAPINATSConsumerHistory(t *testing.T) {
	now := time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)
	s := natsHistoryServer(now)
	rec := do(t, s, "GET", "/api/v1/nats/consumers/local/ORDERS/mailer/history")
	if rec.Code != 200 {
		t.Fatalf("history %d: %s", rec.Code, rec.Body)
	}
	want := `{"cluster":"local","consumer":"mailer","history":[` +
		`{"at":"2026-12-03T16:59:30Z","pending":2,"ack_pending":1,"lag_seconds":null},` +
		`{"at":"2026-12-03T16:59:45Z","pending":6,"ack_pending":4,"lag_seconds":12.5},` +
		`{"at":"2026-12-03T17:00:00Z","pending":10,"ack_pending":3,"lag_seconds":40}],"stream":"ORDERS"}`
	if got := strings.TrimSpace(rec.Body.String()); got != want {
		t.Errorf("history\n got %s\nwant %s", got, want)
	}
	empty := do(t, s, "GET", "/api/v1/nats/consumers/local/ORDERS/healthy/history").Body.String()
	if !strings.Contains(empty, `"history":[]`) {
		t.Errorf("a consumer without history: %s", empty)
	}
	for target, code := range map[string]int{
		"/api/v1/nats/consumers/local/ORDERS/nope/history":     404,
		"/api/v1/nats/consumers/prod/ORDERS/healthy/history":   404,
		"/api/v1/nats/consumers/local/ORDERS/%25zz%2F/history": 404,
	} {
		if rec := do(t, s, "GET", target); rec.Code != code {
			t.Errorf("%s: %d, want %d", target, rec.Code, code)
		}
	}
}
