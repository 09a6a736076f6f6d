package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/api"
)

// hostileSource is an outbox source name that is markup and has a slash
// and a percent escape in it: it must link, route and render as text.
const hostileSource = `<img src=x onerror=alert(2)>/orders%2F db`

// outboxSource is an outbox source whose polls a test scripts: poll n
// (from 1) returns snap(n), or fails when snap returns nil. It stands in
// for the database so the real collector's scheduler and history run.
type outboxSource struct {
	name string
	snap func(n int, at time.Time) *queue.Snapshot

	mu sync.Mutex
	n  int
	at time.Time
}

func (s *outboxSource) Broker() queue.Broker { return queue.Outbox }
func (s *outboxSource) Cluster() string      { return s.name }
func (s *outboxSource) Poll(context.Context) (*queue.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.at = s.at.Add(15 * time.Second)
	snap := s.snap(s.n, s.at)
	if snap == nil {
		return nil, errors.New("dial tcp 10.0.0.7:5432: connection refused")
	}
	snap.Broker, snap.Cluster, snap.Time = queue.Outbox, s.name, s.at
	return snap, nil
}

// ordersDB drains until poll 4, then its worker stalls: pending grows
// and the table is stall; its CDC slot is inactive (stop).
func ordersDB(n int, _ time.Time) *queue.Snapshot {
	pending := int64(3)
	st, reason := queue.StatusOK, ""
	if n > 4 {
		pending = int64(40 * (n - 4))
		st, reason = queue.StatusStall, "pending rows and no progress for "+queue.HumanSeconds(float64(15*(n-4)))
	}
	return &queue.Snapshot{
		OutboxTables: []queue.OutboxTable{
			{Table: "outbox", Pending: pending, OldestPendingAge: time.Duration(n) * 15 * time.Second, PublishRate: 12.5, HasPublishRate: n > 1, Status: st, StatusReason: reason},
			{Table: "audit_outbox", Pending: 0, Status: queue.StatusOK, HasPublishRate: true},
			{Table: `<script>alert(1)</script>`, Pending: 7, OldestPendingAge: time.Minute, Status: queue.StatusWarn, StatusReason: "backlog growing for 5 polls"},
		},
		Slots: []queue.ReplicationSlot{
			{Slot: "debezium", LagBytes: 3 << 20, Active: false, Status: queue.StatusStop, StatusReason: "slot inactive: no consumer connected"},
			{Slot: "analytics", LagBytes: 2048, Active: true, Status: queue.StatusOK},
		},
	}
}

// billingDB is healthy for three polls and then cannot be reached.
func billingDB(n int, _ time.Time) *queue.Snapshot {
	if n > 3 {
		return nil
	}
	return &queue.Snapshot{OutboxTables: []queue.OutboxTable{{Table: "events", Pending: 1, OldestPendingAge: time.Second, Status: queue.StatusOK}}}
}

// hostileDB is healthy, with a hostile name, and has a physical slot
// whose lag is unknown.
func hostileDB(int, time.Time) *queue.Snapshot {
	return &queue.Snapshot{
		OutboxTables: []queue.OutboxTable{{Table: "outbox", Pending: 2, Status: queue.StatusOK}},
		Slots: []queue.ReplicationSlot{{
			Slot: "standby", LagUnknown: unknownLag, Active: true,
			Status: queue.StatusOK, StatusReason: "active, lag is unknown: " + unknownLag,
		}},
	}
}

const unknownLag = "physical slot that reserves no WAL yet: no standby has streamed from it"

// outboxServer runs the real collector over three outbox sources and a
// Kafka cluster with a stopped group, polled six times, and the web
// server in front of it.
func outboxServer(t *testing.T) (*Server, *collectors.Collector) {
	t.Helper()
	return outboxWorld(t, 6, true)
}

// outboxWorld is outboxServer with polls polls, and without the hostile
// source when hostile is false (the docs' screenshots).
func outboxWorld(t *testing.T, polls int, hostile bool) (*Server, *collectors.Collector) {
	t.Helper()
	start := time.Now().Add(-time.Duration(polls) * 15 * time.Second)
	kafkaSrc := &outboxSource{name: "prod", at: start, snap: func(int, time.Time) *queue.Snapshot {
		return &queue.Snapshot{Groups: []queue.ConsumerGroup{{
			Cluster: "prod", Name: "payments", Status: queue.StatusStop, StatusReason: "no members",
			Partitions: []queue.PartitionLag{{Topic: "t", Lag: 500, LagSeconds: 90}},
		}}}
	}}
	sources := []collectors.Source{
		kafkaBroker{kafkaSrc},
		&outboxSource{name: "billing-db", at: start, snap: billingDB},
		&outboxSource{name: "orders-db", at: start, snap: ordersDB},
	}
	if hostile {
		sources = append(sources, &outboxSource{name: hostileSource, at: start, snap: hostileDB})
	}
	col := collectors.New(sources, collectors.Options{Interval: 15 * time.Second, History: time.Hour})
	for range polls {
		col.PollOnce(context.Background())
	}
	return New(Options{Monitor: col, Metrics: col.Handler(prometheus.NewRegistry())}), col
}

// kafkaBroker makes a scripted source report itself as Kafka.
type kafkaBroker struct{ *outboxSource }

func (kafkaBroker) Broker() queue.Broker { return queue.Kafka }
func (k kafkaBroker) Poll(ctx context.Context) (*queue.Snapshot, error) {
	snap, err := k.outboxSource.Poll(ctx)
	if snap != nil {
		snap.Broker = queue.Kafka
	}
	return snap, err
}

var (
	cardSource = regexp.MustCompile(`<article class="obox [a-z]+" data-source="([^"]*)" data-status="([a-z]+)"`)
	attName    = regexp.MustCompile(`<td class="att-name"><a href="[^"]*">([^<]*)</a>`)
)

func TestOutboxOverviewCards(t *testing.T) {
	s, _ := outboxServer(t)
	rec := do(t, s, "GET", "/")
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("overview: %d", rec.Code)
	}
	markupFree(t, "overview", body)

	// One card per source, worst first: orders-db (stop) and billing-db
	// (down: error) before the healthy one.
	var cards []string
	for _, m := range cardSource.FindAllStringSubmatch(body, -1) {
		cards = append(cards, m[1]+"="+m[2])
	}
	want := []string{"orders-db=stop", "billing-db=error", "&lt;img src=x onerror=alert(2)&gt;/orders%2F db=ok"}
	if !slices.Equal(cards, want) {
		t.Errorf("outbox cards %q, want %q", cards, want)
	}
	for _, c := range []string{
		`href="/outbox/orders-db"`,
		`href="/outbox/%3Cimg%20src=x%20onerror=alert%282%29%3E%2Forders%252F%20db"`,
		"dial tcp 10.0.0.7:5432: connection refused", // the down source says why
		"3 MiB", "inactive", "12.5/s", "&lt;script&gt;alert(1)&lt;/script&gt;",
		"pending rows in outbox · now 80 · peak 80", // sparkline from the kept history
		"2 outbox tables or slots are stalled or stopped",
	} {
		if !strings.Contains(body, c) {
			t.Errorf("overview lacks %q", c)
		}
	}

	// Needs attention: the stopped slot ranks with the stopped group,
	// then the stalled table, then the warn table.
	var att []string
	for _, m := range attName.FindAllStringSubmatch(body, -1) {
		att = append(att, m[1])
	}
	wantAtt := []string{"payments", "slot debezium", "outbox", "&lt;script&gt;alert(1)&lt;/script&gt;"}
	if !slices.Equal(att, wantAtt) {
		t.Errorf("needs attention %q, want %q", att, wantAtt)
	}
	if !strings.Contains(body, "pending rows and no progress for 30s") || !strings.Contains(body, "80 pending") {
		t.Error("the stalled table's line lacks its reason or pending count")
	}

	// The live refresh carries the cards, so they update without a reload.
	if p := do(t, s, "GET", "/?partial=1").Body.String(); !strings.Contains(p, `id="outboxes"`) {
		t.Error("overview partial lacks the outbox cards")
	}
}

func TestOutboxPage(t *testing.T) {
	s, _ := outboxServer(t)
	rec := do(t, s, "GET", "/outbox/orders-db?range=6h")
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("outbox page: %d %s", rec.Code, body)
	}
	markupFree(t, "outbox page", body)
	for _, c := range []string{
		`<h1 title="orders-db">orders-db</h1>`,
		`data-chart="outbox" data-url="/api/v1/outbox/orders-db/history" data-range="6h"`,
		`data-table="outbox"`, `data-table="audit_outbox"`, `data-table="&lt;script&gt;alert(1)&lt;/script&gt;"`,
		`data-slots="1"`, "slot inactive: no consumer connected", "2 KiB",
		"uPlot.iife.min.js",
	} {
		if !strings.Contains(body, c) {
			t.Errorf("outbox page lacks %q", c)
		}
	}
	if !regexp.MustCompile(`<dt>last poll</dt><dd>[^<]+ ago</dd>`).MatchString(body) {
		t.Error("outbox page does not say when its source was last polled")
	}
	// Tables are worst first: stall, warn, ok.
	var tables []string
	for _, m := range regexp.MustCompile(`<tr data-status="([a-z]+)"><td class="name" title="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		tables = append(tables, m[2]+"="+m[1])
	}
	if want := []string{"outbox=stall", "&lt;script&gt;alert(1)&lt;/script&gt;=warn", "audit_outbox=ok", "debezium=stop", "analytics=ok"}; !slices.Equal(tables, want) {
		t.Errorf("rows %q, want %q", tables, want)
	}

	hostile := "/outbox/" + url.PathEscape(hostileSource)
	rec = do(t, s, "GET", hostile)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-url="/api/v1/outbox/%3Cimg%20src=x%20onerror=alert%282%29%3E%2Forders%252F%20db/history"`) {
		t.Errorf("hostile source page: %d", rec.Code)
	}
	markupFree(t, "hostile source page", rec.Body.String())
	if !strings.Contains(rec.Body.String(), `<td class="num" title="lag unknown: `+unknownLag+`">—</td>`) {
		t.Error("a slot of unknown lag must show —, with the reason on hover, not 0 B")
	}

	down := do(t, s, "GET", "/outbox/billing-db").Body.String()
	if !strings.Contains(down, "The last poll of this source failed") || !strings.Contains(down, "connection refused") || !strings.Contains(down, `data-table="events"`) {
		t.Error("a down source's page does not show its error beside its last good data")
	}

	p := do(t, s, "GET", "/outbox/orders-db?partial=1").Body.String()
	if strings.Contains(p, "<html") || !strings.Contains(p, `id="ohead" class="ghead" hx-swap-oob="true"`) || strings.Contains(p, `data-chart=`) {
		t.Error("partial must carry the head out of band and leave the charts alone")
	}
	for target, code := range map[string]int{
		"/outbox/nope":      http.StatusNotFound,
		"/outbox/prod":      http.StatusNotFound, // a Kafka cluster is not an outbox
		"/outbox/%25zz%2F":  http.StatusNotFound,
		"/outbox/orders-db": http.StatusOK,
	} {
		if rec := do(t, s, "GET", target); rec.Code != code {
			t.Errorf("%s: %d, want %d", target, rec.Code, code)
		}
	}
}

func TestOutboxAPI(t *testing.T) {
	s, _ := outboxServer(t)
	rec := do(t, s, "GET", "/api/v1/outbox")
	var out struct {
		Tables []api.OutboxTableJSON `json:"tables"`
		Slots  []api.SlotJSON        `json:"slots"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	var got []string
	for _, tb := range out.Tables {
		got = append(got, tb.Source+"/"+tb.Table+"="+string(tb.Status))
	}
	// Worst first across sources, then most pending; the down source
	// keeps its last good rows (its own status is in /api/v1/sources).
	want := []string{"orders-db/outbox=stall", "orders-db/<script>alert(1)</script>=warn", hostileSource + "/outbox=ok", "billing-db/events=ok", "orders-db/audit_outbox=ok"}
	if !slices.Equal(got, want) {
		t.Errorf("tables %q, want %q", got, want)
	}
	if r := out.Tables[0].PublishRate; r == nil || *r != 12.5 || out.Tables[0].Pending != 80 || out.Tables[0].OldestPendingAgeSeconds != 90 {
		t.Errorf("stalled table %+v", out.Tables[0])
	}
	if !strings.Contains(rec.Body.String(), `"publish_rate":null`) {
		t.Error("an unknown publish rate must be null, not 0")
	}
	if len(out.Slots) != 3 || out.Slots[0].Slot != "debezium" || out.Slots[0].Status != queue.StatusStop || out.Slots[0].Active || out.Slots[0].LagBytes == nil || *out.Slots[0].LagBytes != 3<<20 {
		t.Errorf("slots %+v", out.Slots)
	}
	if sl := out.Slots[2]; sl.Slot != "standby" || sl.LagBytes != nil || !strings.Contains(rec.Body.String(), `"lag_bytes":null`) {
		t.Errorf("a slot of unknown lag: %+v, want lag_bytes null, not 0", sl)
	}

	rec = do(t, s, "GET", "/api/v1/outbox/orders-db/history")
	var h struct {
		Source string                 `json:"source"`
		Tables []api.TableHistoryJSON `json:"tables"`
		Slots  []api.SlotHistoryJSON  `json:"slots"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &h); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	if h.Source != "orders-db" || len(h.Tables) != 3 || h.Tables[0].Table != "outbox" || len(h.Tables[0].History) != 6 {
		t.Fatalf("history %+v", h)
	}
	var pending []int64
	for _, p := range h.Tables[0].History {
		pending = append(pending, p.Pending)
	}
	if !slices.Equal(pending, []int64{3, 3, 3, 3, 40, 80}) {
		t.Errorf("pending history %v", pending)
	}
	if len(h.Slots) != 2 || len(h.Slots[0].History) != 6 || h.Slots[0].History[5].LagBytes != 3<<20 {
		t.Errorf("slot history %+v", h.Slots)
	}
	if rec := do(t, s, "GET", "/api/v1/outbox/"+url.PathEscape(hostileSource)+"/history"); rec.Code != http.StatusOK {
		t.Errorf("hostile source history: %d", rec.Code)
	}
	if rec := do(t, s, "GET", "/api/v1/outbox/nope/history"); rec.Code != http.StatusNotFound {
		t.Errorf("unknown source history: %d", rec.Code)
	}
}
