package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// kinesisHostile is an application name a page must escape.
const kinesisHostile = "app<script>x</script>"

func kinesisServer() *Server {
	now := time.Now()
	return New(Options{
		Metrics: http.NotFoundHandler(),
		Monitor: staticMonitor{ready: true, snaps: []*queue.Snapshot{{
			Broker: queue.Kinesis, Cluster: "prod-eu", Time: now,
			Kinesis: &queue.KinesisAccount{ReadAt: now, ReadEvery: time.Minute},
			KinesisStreams: []queue.KinesisStream{{
				Cluster: "prod-eu", Name: "orders", Retention: 24 * time.Hour, Consumers: []string{"search-efo"},
				Shards: []queue.KinesisShard{{ID: "shardId-000000000000"}, {ID: "shardId-000000000001", Open: true}, {ID: "shardId-000000000002", Open: true}},
			}},
			KinesisApps: []queue.KinesisApplication{
				{
					Cluster: "prod-eu", Name: "billing", Stream: "orders", LeaseTable: "billing", FailoverTime: 10 * time.Second, Retention: 24 * time.Hour,
					Leases: []queue.KinesisLease{
						{Shard: "shardId-000000000000", Owner: "worker-a", Counter: 40, Checkpoint: "SHARD_END", HasLag: true, Children: []string{"shardId-000000000001", "shardId-000000000002"}},
						{Shard: "shardId-000000000001", Owner: "worker-a", Counter: 12, Checkpoint: "49680924585215835643310522592695021973715603426671329282", HasLag: true, Behind: 42 * time.Second, Arrival: now.Add(-time.Hour), Open: true, Parents: []string{"shardId-000000000000"}},
						{Shard: "shardId-000000000002", Owner: "worker-b", Counter: 12, Checkpoint: "TRIM_HORIZON", HasLag: true, Open: true, Parents: []string{"shardId-000000000000"}},
					},
					Status: queue.StatusStall, StatusReason: "checkpoint of shardId-000000000001 unmoved since the last read, 42s behind the newest record",
				},
				{Cluster: "prod-eu", Name: kinesisHostile, Stream: "orders", LeaseTable: "other", Status: queue.StatusOK, StatusReason: "no leases"},
				{Cluster: "prod-eu", Name: "gone", Stream: "orders", LeaseTable: "gone", Err: "scan lease table gone: ResourceNotFoundException"},
			},
		}}},
	})
}

// TestKinesisOverview: KCL applications have their own tab, worst first,
// and a stalled one is a "Needs attention" line linking to its page.
func TestKinesisOverview(t *testing.T) {
	s := kinesisServer()
	body := do(t, s, "GET", "/").Body.String()
	if !strings.Contains(body, `KCL applications <span class="count">3</span>`) {
		t.Error("the overview has no KCL application tab with 3 applications")
	}
	if !strings.Contains(body, escapedHref(queue.KinesisApplicationPage("prod-eu", "billing"))) || !strings.Contains(body, "checkpoint of shardId-000000000001 unmoved") {
		t.Error("the stalled application has no needs-attention line linking to its page")
	}
	tab := do(t, s, "GET", "/?tab=kinesis").Body.String()
	i := strings.Index(tab, `id="kinesis"`)
	if i < 0 {
		t.Fatal("no KCL application table")
	}
	if strings.Contains(tab, "<script>x") {
		t.Error("an application name is not escaped")
	}
	var order []string
	for _, part := range strings.Split(tab[i:], `data-application="`)[1:] {
		order = append(order, part[:strings.Index(part, `"`)])
	}
	if want := "billing gone app&lt;script&gt;x&lt;/script&gt;"; strings.Join(order, " ") != want {
		t.Errorf("rows %q; want %q (worst first)", order, want)
	}
}

// TestKinesisAppPage: an application's page shows its leases with owner,
// counter, checkpoint and lag, the stream's shards and EFO consumers, and
// says why no count of records behind is shown.
func TestKinesisAppPage(t *testing.T) {
	s := kinesisServer()
	body := do(t, s, "GET", queue.KinesisApplicationPage("prod-eu", "billing")).Body.String()
	for _, want := range []string{
		"worker-a", "worker-b", "SHARD_END", "TRIM_HORIZON", "…426671329282", "42s", "2 open of 3", "search-efo",
		"sequence numbers are not dense", `data-chart="kinesis"`, "checkpoint of shardId-000000000001 unmoved",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("billing's page lacks %q", want)
		}
	}
	body = do(t, s, "GET", queue.KinesisApplicationPage("prod-eu", kinesisHostile)).Body.String()
	if strings.Contains(body, "<script>x") || !strings.Contains(body, "No leases in other for orders") {
		t.Error("the leaseless application's page: name not escaped or no empty state")
	}
	if rec := do(t, s, "GET", queue.KinesisApplicationPage("prod-eu", "nope")); rec.Code != http.StatusNotFound {
		t.Errorf("unknown application: %d; want 404", rec.Code)
	}
	if rec := do(t, s, "GET", queue.KinesisApplicationPage("prod-eu", "billing")+"?partial=1"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `hx-swap-oob="true"`) {
		t.Errorf("partial refresh: %d", rec.Code)
	}
}

// TestKinesisAPI: GET /api/v1/kinesis/applications lists every
// application worst first with its leases; an unread one has its error
// and a null lag.
func TestKinesisAPI(t *testing.T) {
	s := kinesisServer()
	rec := do(t, s, "GET", "/api/v1/kinesis/applications")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET: %d %s", rec.Code, rec.Body)
	}
	var got struct {
		Applications []struct {
			Application  string   `json:"application"`
			Status       string   `json:"status"`
			LagSeconds   *float64 `json:"lag_seconds"`
			ShardsBehind int64    `json:"shards_behind"`
			Workers      int      `json:"workers"`
			Leases       []struct {
				Shard      string   `json:"shard"`
				LagSeconds *float64 `json:"lag_seconds"`
			} `json:"leases"`
			Error string `json:"error"`
		} `json:"applications"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	a := got.Applications
	if len(a) != 3 || a[0].Application != "billing" || a[0].Status != "stall" || a[0].LagSeconds == nil || *a[0].LagSeconds != 42 ||
		a[0].ShardsBehind != 1 || a[0].Workers != 2 || len(a[0].Leases) != 3 || a[1].Application != "gone" || a[1].Error == "" || a[1].LagSeconds != nil {
		t.Errorf("applications %+v", a)
	}
	if rec := do(t, s, "GET", "/api/v1/kinesis/applications/prod-eu/billing/history"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"application":"billing"`) {
		t.Errorf("history: %d %s", rec.Code, rec.Body)
	}
}
