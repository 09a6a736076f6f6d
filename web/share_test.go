package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/api"
)

// shareHostile is a share group name that would run in a page if it were
// not escaped.
const shareHostile = "mailer/<script>x</script>"

// shareServer serves a Kafka cluster with a consumer group and three share
// groups: one read with the broker's lag, one stopped whose lag is an
// estimate with a partition not yet fetched, and one that could not be read.
func shareServer() *Server {
	return New(Options{
		Metrics: http.NotFoundHandler(),
		Monitor: staticMonitor{ready: true, snaps: []*queue.Snapshot{{
			Broker: queue.Kafka, Cluster: "prod", Time: time.Now(),
			Groups: []queue.ConsumerGroup{{Cluster: "prod", Name: "ok-group", State: "Stable", Members: 1, Status: queue.StatusOK}},
			ShareGroups: []queue.ShareGroup{
				{
					Cluster: "prod", Name: "workers", State: "Stable",
					Members: []queue.ShareMember{{ID: "m-1", ClientID: "worker-1", Host: "10.0.0.5", Assigned: []queue.TopicPartitions{{Topic: "orders", Partitions: []int32{0, 1}}}}},
					Partitions: []queue.SharePartition{
						{Topic: "orders", Partition: 0, Initialized: true, Start: 40, End: 50, Lag: 7, LagSource: queue.LagFromBroker},
						{Topic: "orders", Partition: 1, Initialized: true, Start: 12, End: 12, LagSource: queue.LagFromBroker},
					},
					Status: queue.StatusOK, StatusReason: "7 records waiting, 1 member",
				},
				{
					Cluster: "prod", Name: shareHostile, State: "Empty",
					Partitions: []queue.SharePartition{
						{Topic: "mail", Partition: 0, Initialized: true, Start: 3, End: 9, Lag: 6, LagSource: queue.LagEstimated},
						{Topic: "mail", Partition: 1, End: 4},
					},
					Status: queue.StatusStop, StatusReason: "no members: 6 records waiting",
				},
				{Cluster: "prod", Name: "locked", Err: "describe: GROUP_AUTHORIZATION_FAILED"},
			},
		}}},
	})
}

// TestShareOverview: share groups have their own tab, worst first, and a
// stopped one is a "Needs attention" line linking to its page.
func TestShareOverview(t *testing.T) {
	s := shareServer()
	body := do(t, s, "GET", "/").Body.String()
	if !strings.Contains(body, `Share groups <span class="count">3</span>`) {
		t.Error("the overview has no share group tab with 3 groups")
	}
	if !strings.Contains(body, escapedHref(queue.ShareGroupPage("prod", shareHostile))) || !strings.Contains(body, "no members: 6 records waiting") {
		t.Error("the stopped share group has no needs-attention line linking to its page")
	}
	if strings.Contains(body, "<script>x") {
		t.Error("a share group name is not escaped")
	}

	tab := do(t, s, "GET", "/?tab=share").Body.String()
	rows := tab[strings.Index(tab, `id="shares"`):]
	var order []string
	for _, part := range strings.Split(rows, `/share-groups/`)[1:] {
		order = append(order, part[:strings.Index(part, `"`)])
	}
	want := []string{url.PathEscape(shareHostile), "locked", "workers"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("rows %q; want %q (worst first)", order, want)
	}
	if !strings.Contains(rows, "≤ 6") {
		t.Error("the estimated lag is not marked")
	}
}

// TestSharePage: a share group's page shows its state, members with their
// assignment, per partition start offset and lag with its source ("—"
// before a member fetched it), and says that Kafka keeps no dead letters.
func TestSharePage(t *testing.T) {
	s := shareServer()
	rec := do(t, s, "GET", queue.ShareGroupPage("prod", "workers"))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{"share group", "Stable", "worker-1", "orders 0, 1", ">40<", ">7<", "Kafka keeps no copy of records", "errors.deadletterqueue.topic.name", `data-chart="share"`, `data-url="/api/v1/kafka/share-groups/prod/workers/history"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	body = do(t, s, "GET", queue.ShareGroupPage("prod", shareHostile)).Body.String()
	for _, want := range []string{"≤ 6", ">estimate<", "not fetched yet", "No members", "no members: 6 records waiting"} {
		if !strings.Contains(body, want) {
			t.Errorf("stopped group's page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>x") {
		t.Error("a share group name is not escaped")
	}
	if rec := do(t, s, "GET", queue.ShareGroupPage("prod", "nope")); rec.Code != http.StatusNotFound {
		t.Errorf("unknown share group: %d; want 404", rec.Code)
	}
	if rec := do(t, s, "GET", queue.ShareGroupPage("prod", "workers")+"?partial=1"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `hx-swap-oob="true"`) {
		t.Errorf("partial refresh: %d", rec.Code)
	}
}

// TestShareAPI: GET /api/v1/kafka/share-groups lists every share group
// worst first, with null start offset and lag for a partition no member
// fetched yet and the lag's source.
func TestShareAPI(t *testing.T) {
	rec := do(t, shareServer(), "GET", "/api/v1/kafka/share-groups")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	var got struct {
		ShareGroups []api.ShareGroupJSON `json:"share_groups"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.ShareGroups) != 3 || got.ShareGroups[0].Group != shareHostile || got.ShareGroups[0].Status != queue.StatusStop {
		t.Fatalf("share groups %+v", got.ShareGroups)
	}
	stopped := got.ShareGroups[0]
	if !stopped.LagEstimated || stopped.Lag != 6 || *stopped.Partitions[0].LagSource != "estimate" || stopped.Partitions[1].StartOffset != nil || stopped.Partitions[1].Lag != nil {
		t.Errorf("stopped group %+v", stopped)
	}
	if w := got.ShareGroups[2]; w.Group != "workers" || len(w.Members) != 1 || w.Members[0].Assignment[0].Topic != "orders" || *w.Partitions[0].StartOffset != 40 {
		t.Errorf("workers %+v", w)
	}
}

// TestShareHistoryAPI: a share group's chart reads its reader history, the
// lag per poll.
func TestShareHistoryAPI(t *testing.T) {
	rec := do(t, shareServer(), "GET", "/api/v1/kafka/share-groups/prod/workers/history")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"lag":5`) {
		t.Errorf("history %d %s; want the monitor's point with lag 5", rec.Code, rec.Body.String())
	}
	if rec := do(t, shareServer(), "GET", "/api/v1/kafka/share-groups/prod/nope/history"); rec.Code != http.StatusNotFound {
		t.Errorf("unknown share group: %d; want 404", rec.Code)
	}
}
