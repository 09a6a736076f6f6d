package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/api"
)

// connectHostile is a connector name that would run in a page if it were
// not escaped.
const connectHostile = "sink/<script>x</script>"

const connectTrace = "org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded in error handler"

// connectServer serves a Kafka cluster whose Connect cluster "main" has a
// running sink (its group watched), a sink whose task failed, a paused
// source and a connector that could not be read.
func connectServer() *Server {
	return New(Options{
		Metrics: http.NotFoundHandler(),
		Monitor: staticMonitor{ready: true, snaps: []*queue.Snapshot{{
			Broker: queue.Kafka, Cluster: "prod", Time: time.Now(),
			Groups: []queue.ConsumerGroup{{Cluster: "prod", Name: "connect-payments-sink", State: "Stable", Members: 1, Status: queue.StatusOK}},
			Connectors: []queue.Connector{
				{
					Cluster: "prod", Connect: "main", Name: "payments-sink", Type: "sink", State: queue.ConnectRunning, WorkerID: "10.0.0.7:8083",
					Tasks: []queue.ConnectTask{{ID: 0, State: queue.ConnectRunning, WorkerID: "10.0.0.7:8083"}},
					Group: "connect-payments-sink", Lag: 12, LagKnown: true, Topics: []string{"payments"},
					Status: queue.StatusOK, StatusReason: "1 task running",
				},
				{
					Cluster: "prod", Connect: "main", Name: connectHostile, Type: "sink", State: queue.ConnectRunning,
					Tasks: []queue.ConnectTask{{ID: 0, State: queue.ConnectRunning}, {ID: 1, State: queue.ConnectFailed, Trace: connectTrace}},
					Group: "connect-" + connectHostile, DLQTopic: "orders-dlq", Topics: []string{"orders"},
					Status: queue.StatusStop, StatusReason: "task 1 failed: " + connectTrace,
				},
				{
					Cluster: "prod", Connect: "main", Name: "cdc", Type: "source", State: queue.ConnectPaused,
					Tasks:  []queue.ConnectTask{{ID: 0, State: queue.ConnectPaused}},
					Status: queue.StatusWarn, StatusReason: "paused by an operator: its tasks read nothing until it is resumed",
				},
				{Cluster: "prod", Connect: "main", Name: "gone", Err: "Connect gave no status"},
			},
		}}},
	})
}

// TestConnectOverview: connectors have their own tab, worst first, and a
// failed task is a "Needs attention" line with its trace, linking to the
// connector's page.
func TestConnectOverview(t *testing.T) {
	s := connectServer()
	body := do(t, s, "GET", "/").Body.String()
	if !strings.Contains(body, `Connectors <span class="count">4</span>`) {
		t.Error("the overview has no connector tab with 4 connectors")
	}
	if !strings.Contains(body, escapedHref(queue.ConnectorPage("prod", "main", connectHostile))) || !strings.Contains(body, "task 1 failed: "+connectTrace) {
		t.Error("the failed connector has no needs-attention line linking to its page")
	}
	if strings.Contains(body, "<script>x") {
		t.Error("a connector name is not escaped")
	}
	tab := do(t, s, "GET", "/?tab=connect").Body.String()
	i := strings.Index(tab, `id="connectors"`)
	if i < 0 {
		t.Fatal("no connector table")
	}
	var order []string
	for _, part := range strings.Split(tab[i:], `/connectors/`)[1:] {
		order = append(order, part[:strings.Index(part, `"`)])
	}
	want := "sink%2F%3Cscript%3Ex%3C%2Fscript%3E gone cdc payments-sink"
	if strings.Join(order, " ") != want {
		t.Errorf("rows %q; want %q (worst first)", order, want)
	}
	if !strings.Contains(tab, "1 running · 1 failed") {
		t.Error("the failed connector's tasks are not counted by state")
	}
}

// TestConnectorPage: a connector's page shows its type, state, worker,
// tasks with the failed one's trace line, its consumer group (linked when
// watched), its dead-letter topic and how to restart it.
func TestConnectorPage(t *testing.T) {
	s := connectServer()
	body := do(t, s, "GET", queue.ConnectorPage("prod", "main", connectHostile)).Body.String()
	for _, want := range []string{"sink connector", "task 1 failed: " + connectTrace, "FAILED", "orders-dlq", "restart?includeTasks=true&amp;onlyFailed=true", `data-chart="connect"`} {
		if !strings.Contains(body, want) {
			t.Errorf("failed connector's page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>x") {
		t.Error("a connector name is not escaped")
	}
	body = do(t, s, "GET", queue.ConnectorPage("prod", "main", "payments-sink")).Body.String()
	for _, want := range []string{escapedHref(queue.GroupPage("prod", "connect-payments-sink")), "10.0.0.7:8083", ">12<"} {
		if !strings.Contains(body, want) {
			t.Errorf("running connector's page lacks %q", want)
		}
	}
	if rec := do(t, s, "GET", queue.ConnectorPage("prod", "other", "payments-sink")); rec.Code != http.StatusNotFound {
		t.Errorf("connector of another Connect cluster: %d; want 404", rec.Code)
	}
	if rec := do(t, s, "GET", queue.ConnectorPage("prod", "main", "cdc")+"?partial=1"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `hx-swap-oob="true"`) {
		t.Errorf("partial refresh: %d", rec.Code)
	}
}

// TestConnectAPI: GET /api/v1/kafka/connectors lists every connector
// worst first with its tasks, a null lag for a group not watched, and the
// history of one.
func TestConnectAPI(t *testing.T) {
	s := connectServer()
	rec := do(t, s, "GET", "/api/v1/kafka/connectors")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	var got struct {
		Connectors []api.ConnectorJSON `json:"connectors"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Connectors) != 4 || got.Connectors[0].Connector != connectHostile || got.Connectors[0].Status != queue.StatusStop {
		t.Fatalf("connectors %+v", got.Connectors)
	}
	if f := got.Connectors[0]; f.Lag != nil || f.Tasks[1].Trace != connectTrace || f.DLQTopic != "orders-dlq" {
		t.Errorf("failed connector %+v", f)
	}
	if p := got.Connectors[3]; p.Connector != "payments-sink" || p.Lag == nil || *p.Lag != 12 || p.Group != "connect-payments-sink" {
		t.Errorf("running connector %+v", p)
	}
	if rec := do(t, s, "GET", "/api/v1/kafka/connectors/prod/main/payments-sink/history"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"history":`) {
		t.Errorf("history %d %s", rec.Code, rec.Body.String())
	}
	if rec := do(t, s, "GET", "/api/v1/kafka/connectors/prod/main/nope/history"); rec.Code != http.StatusNotFound {
		t.Errorf("unknown connector: %d; want 404", rec.Code)
	}
}

// TestConnectorsScoped: a principal whose grant names team A's readers
// sees team A's connector (kafka:prod:main:team-a-sink) in the list and on
// its page, and neither the list, the overview nor the page shows team
// B's.
func TestConnectorsScoped(t *testing.T) {
	s, _ := scopedServer(t)
	ana := newClient(t, s, basic("ana", "a"))
	rec := ana.do(http.MethodGet, "/api/v1/kafka/connectors", "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "team-a-sink") || strings.Contains(rec.Body.String(), "team-b-sink") {
		t.Errorf("ana's connectors: %d %s", rec.Code, rec.Body.String())
	}
	if rec := ana.do(http.MethodGet, queue.ConnectorPage("prod", "main", "team-a-sink"), ""); rec.Code != http.StatusOK {
		t.Errorf("ana's connector page: %d", rec.Code)
	}
	if rec := ana.do(http.MethodGet, queue.ConnectorPage("prod", "main", "team-b-sink"), ""); rec.Code != http.StatusForbidden && rec.Code != http.StatusNotFound {
		t.Errorf("team B's connector page for ana: %d, want 403 or 404", rec.Code)
	}
	if body := ana.do(http.MethodGet, "/?tab=connect", "").Body.String(); strings.Contains(body, "team-b-sink") || strings.Contains(body, "secret trace") {
		t.Error("ana's overview shows team B's connector")
	}
}
