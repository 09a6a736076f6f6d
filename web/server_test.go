package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/api"
)

// staticMonitor serves fixed snapshots: handler tests check rendering and
// routing, the collectors have their own tests against real brokers.
type staticMonitor struct {
	snaps    []*queue.Snapshot
	statuses []queue.SourceStatus
	ready    bool
}

func (m staticMonitor) Snapshots() []*queue.Snapshot   { return m.snaps }
func (m staticMonitor) Statuses() []queue.SourceStatus { return m.statuses }
func (m staticMonitor) Ready() bool                    { return m.ready }
func (m staticMonitor) ReaderHistory(k queue.ReaderKey) []queue.ReaderPoint {
	return []queue.ReaderPoint{{At: time.Unix(100, 0), Backlog: 5}}
}
func (m staticMonitor) DLQHistory(id string) []queue.DLQPoint { return nil }
func (m staticMonitor) OutboxHistory(source, table string) []queue.OutboxPoint {
	return nil
}
func (m staticMonitor) SlotHistory(source, slot string) []queue.SlotPoint { return nil }

const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)>`

func testServer(ready bool) *Server {
	now := time.Now()
	return New(Options{
		Metrics: http.NotFoundHandler(),
		Monitor: staticMonitor{ready: ready, snaps: []*queue.Snapshot{{
			Broker: queue.Kafka, Cluster: "prod", Time: now,
			Groups: []queue.ConsumerGroup{
				{Cluster: "prod", Name: "ok-group", State: "Stable", Members: 1, Status: queue.StatusOK},
				{
					Cluster: "prod", Name: "stuck/group %2F", State: "Stable", Members: 2, Status: queue.StatusStall,
					StatusReason: "committed offset has not moved for 6m", StatusSince: now.Add(-74 * time.Minute),
					ETA:        queue.ETA{Known: true, FallingBehind: true, Rates: true, ConsumeRate: 0, ProduceRate: 12.5},
					Partitions: []queue.PartitionLag{{Topic: "orders", Partition: 0, Committed: 10, HasCommit: true, End: 110, Lag: 100, LagSeconds: 60}},
					Judged:     []queue.PartitionStatus{{Topic: "orders", Partition: 0, Status: queue.StatusStall, Lag: 100, HasCommit: true}},
					Headroom:   queue.Headroom{Seconds: 1200, Known: true, Limit: "retention.ms 1h", Where: "orders/0"},
				},
				{
					Cluster: "prod", Name: hostile, State: hostile, Status: queue.StatusWarn, StatusReason: hostile,
					Partitions: []queue.PartitionLag{{Topic: hostile, Lag: 1, Member: hostile}},
					Judged:     []queue.PartitionStatus{{Topic: hostile, Status: queue.StatusWarn, Lag: 1, Polls: 3}},
				},
			},
			DLQs: []queue.DLQ{{Broker: queue.Kafka, Cluster: "prod", Name: "orders.DLT", Sources: []string{"orders"}, Messages: 12}},
		}}, statuses: []queue.SourceStatus{{Broker: queue.Kafka, Cluster: "prod", Up: true, Polled: true, LastPoll: now}}},
	})
}

func do(t *testing.T, s *Server, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

func TestHealthEndpoints(t *testing.T) {
	if rec := do(t, testServer(false), "GET", "/readyz"); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("readyz before first poll: %d", rec.Code)
	}
	if rec := do(t, testServer(true), "GET", "/readyz"); rec.Code != http.StatusOK {
		t.Errorf("readyz after polls: %d", rec.Code)
	}
	if rec := do(t, testServer(false), "GET", "/healthz"); rec.Code != http.StatusOK {
		t.Errorf("healthz: %d", rec.Code)
	}
}

func TestOverviewSortsWorstFirstAndEscapes(t *testing.T) {
	rec := do(t, testServer(true), "GET", "/")
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("overview %d", rec.Code)
	}
	if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
		t.Error("a group name was rendered as markup")
	}
	if !strings.Contains(body, "&lt;script&gt;") {
		t.Error("hostile group name missing from the page (escaped)")
	}
	stall, ok := strings.Index(body, "stuck/group"), strings.Index(body, "ok-group")
	if stall < 0 || ok < 0 || stall > ok {
		t.Error("a stalled group is not listed before a healthy one")
	}
	if !strings.Contains(body, `href="/kafka/prod/groups/stuck%2Fgroup%20%252F"`) {
		t.Error("group link is not path-escaped")
	}
	for h, want := range map[string]string{
		"X-Content-Type-Options": "nosniff",
		"X-Frame-Options":        "DENY",
	} {
		if got := rec.Header().Get(h); got != want {
			t.Errorf("%s = %q", h, got)
		}
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q", csp)
	}
}

func TestGroupPage(t *testing.T) {
	s := testServer(true)
	rec := do(t, s, "GET", "/kafka/prod/groups/"+url.PathEscape("stuck/group %2F"))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "committed offset has not moved for 6m") {
		t.Errorf("group page %d", rec.Code)
	}
	// Slow consumer or traffic spike: the page says both rates.
	if body := rec.Body.String(); !strings.Contains(body, `consume / produce</dt><dd class="num">0/s <span class="muted">/</span> 12.5/s</dd>`) {
		t.Error("group page lacks the consume and produce rates")
	}
	rec = do(t, s, "GET", "/api/v1/groups/prod/"+url.PathEscape("stuck/group %2F"))
	if body := rec.Body.String(); !strings.Contains(body, `"consume_rate":0,"produce_rate":12.5`) {
		t.Errorf("group API lacks the rates: %s", body)
	}
	for _, target := range []string{"/kafka/prod/groups/nope", "/kafka/nope/groups/ok-group", "/kafka/prod/groups/" + url.PathEscape(hostile+"x")} {
		rec := do(t, s, "GET", target)
		// The product's page with the sentence and the way back, nothing
		// of the URL rendered as markup.
		body := rec.Body.String()
		if rec.Code != 404 || strings.Contains(body, "<script>alert") || strings.Contains(body, "<img") ||
			!strings.Contains(body, "no such consumer group") || !strings.Contains(body, `href="/">Back to the overview`) {
			t.Errorf("%s: %d %q", target, rec.Code, body)
		}
	}
}

func TestAPIGroups(t *testing.T) {
	rec := do(t, testServer(true), "GET", "/api/v1/groups")
	var out struct{ Groups []api.GroupJSON }
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != 200 {
		t.Fatalf("%d %v", rec.Code, err)
	}
	if len(out.Groups) != 3 || out.Groups[0].Status != queue.StatusStall || out.Groups[0].Lag != 100 {
		t.Errorf("groups %+v", out.Groups)
	}
}

func TestAPIGroup(t *testing.T) {
	s := testServer(true)
	rec := do(t, s, "GET", "/api/v1/groups/prod/"+url.PathEscape("stuck/group %2F"))
	var g api.GroupJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &g); err != nil || rec.Code != 200 {
		t.Fatalf("%d %v: %s", rec.Code, err, rec.Body.String())
	}
	if len(g.Partitions) != 1 || *g.Partitions[0].Committed != 10 || g.Partitions[0].LagSeconds == nil || *g.Partitions[0].LagSeconds != 60 || len(g.History) != 1 || len(g.Topics) != 1 {
		t.Errorf("group %+v", g)
	}
	rec = do(t, s, "GET", "/api/v1/groups/prod/missing")
	if rec.Code != 404 || rec.Header().Get("Content-Type") != "application/json" || !strings.Contains(rec.Body.String(), `"error"`) {
		t.Errorf("missing group: %d %s %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
}

func TestAPIDLQs(t *testing.T) {
	rec := do(t, testServer(true), "GET", "/api/v1/dlqs")
	body, _ := io.ReadAll(rec.Body)
	var out struct{ DLQs []api.DLQJSON }
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.DLQs) != 1 || out.DLQs[0].ID != "kafka:prod::orders.DLT" || out.DLQs[0].Messages != 12 || out.DLQs[0].OldestAgeSeconds != nil {
		t.Errorf("dlqs %s", body)
	}
}

func TestUnknownRoutes(t *testing.T) {
	s := testServer(true)
	for _, target := range []string{"/api/v1/nope", "/nope", "/static/../../etc/passwd"} {
		if rec := do(t, s, "GET", target); rec.Code != 404 {
			t.Errorf("%s: %d", target, rec.Code)
		}
	}
	if rec := send(s, "POST", "/api/v1/groups"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST groups: %d", rec.Code)
	}
	if rec := do(t, s, "GET", "/static/app.css"); rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Type"), "text/css") {
		t.Errorf("css: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
}

// TestAPIRetentionHeadroom: every reader's JSON carries retention_headroom
// in one shape where its poll knows it, and leaves it out (never null)
// where it does not.
func TestAPIRetentionHeadroom(t *testing.T) {
	stuck := "stuck/group %2F"
	groupH := api.HeadroomJSON{Seconds: 1200, Limit: "retention.ms 1h", Where: "orders/0"}
	dlqH := api.HeadroomJSON{Seconds: 2400, Limit: "MessageRetentionPeriod 1h"}
	ttlH := api.HeadroomJSON{Seconds: 2400, Limit: "message TTL 1d"}
	for _, tc := range []struct {
		name, path string
		s          *Server
		// list is the answer's array ("" for one reader), key the field
		// that names a reader, known the reader with a headroom.
		list, key, known string
		want             api.HeadroomJSON
	}{
		{"groups", "/api/v1/groups", testServer(true), "groups", "group", stuck, groupH},
		{"group", "/api/v1/groups/prod/" + url.PathEscape(stuck), testServer(true), "", "group", stuck, groupH},
		{"other group", "/api/v1/groups/prod/ok-group", testServer(true), "", "group", "", groupH},
		{"nats", "/api/v1/nats/consumers", natsServer(), "consumers", "consumer", "invoicing/stalled " + hostile, api.HeadroomJSON{Seconds: 300, Projected: true, Limit: "max_msgs 1,000, discard old"}},
		{"sqs", "/api/v1/sqs/queues", sqsServer(), "queues", "queue", "pay-dlq.fifo", dlqH},
		{"rabbitmq", "/api/v1/rabbitmq/queues", rabbitServer(), "queues", "queue", "orders.dlq", ttlH},
		{"rabbitmq queue", "/api/v1/rabbitmq/queues/main/%2F/orders.dlq", rabbitServer(), "", "queue", "orders.dlq", ttlH},
		{"rabbitmq dead-lettering", "/api/v1/rabbitmq/queues/main/%2F/orders", rabbitServer(), "", "queue", "", ttlH},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, tc.s, "GET", tc.path)
			if rec.Code != http.StatusOK {
				t.Fatalf("%d %s", rec.Code, rec.Body.String())
			}
			readers := []map[string]json.RawMessage{decode[map[string]json.RawMessage](t, rec)}
			if tc.list != "" {
				if err := json.Unmarshal(readers[0][tc.list], &readers); err != nil || len(readers) < 2 {
					t.Fatalf("%s: %v (%d readers)", tc.list, err, len(readers))
				}
			}
			found := false
			for _, r := range readers {
				var name string
				_ = json.Unmarshal(r[tc.key], &name)
				raw, ok := r["retention_headroom"]
				switch {
				case name != tc.known && ok:
					t.Errorf("%s has retention_headroom %s, want none", name, raw)
				case name == tc.known && !ok:
					t.Errorf("%s has no retention_headroom", name)
				case ok:
					found = true
					var h api.HeadroomJSON
					if err := json.Unmarshal(raw, &h); err != nil || h != tc.want {
						t.Errorf("%s: retention_headroom %s, want %+v (%v)", name, raw, tc.want, err)
					}
				}
			}
			if tc.known != "" && !found {
				t.Errorf("no reader named %q", tc.known)
			}
		})
	}
}
