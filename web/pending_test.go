package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// pendingServer serves one group whose lag is known on both partitions but
// whose lag seconds are still being read on partition 1.
func pendingServer() *Server {
	now := time.Now()
	return New(Options{
		Metrics: http.NotFoundHandler(),
		Monitor: staticMonitor{ready: true, snaps: []*queue.Snapshot{{
			Broker: queue.Kafka, Cluster: "prod", Time: now,
			Groups: []queue.ConsumerGroup{{
				Cluster: "prod", Name: "warming", State: "Stable", Members: 1, Status: queue.StatusOK,
				Partitions: []queue.PartitionLag{
					{Topic: "orders", Partition: 0, Committed: 10, HasCommit: true, End: 110, Lag: 100, LagSeconds: 60},
					{Topic: "orders", Partition: 1, Committed: 5, HasCommit: true, End: 9, Lag: 4, LagSecondsPending: true},
				},
			}},
		}}, statuses: []queue.SourceStatus{{Broker: queue.Kafka, Cluster: "prod", Up: true, Polled: true, LastPoll: now}}},
	})
}

// TestPendingLagSeconds checks that lag seconds still being read are shown
// as pending, never as 0: null with lag_seconds_pending in the API (within
// the OpenAPI document), "pending" on the overview and the group page.
func TestPendingLagSeconds(t *testing.T) {
	s := pendingServer()
	a := &apiChecker{t: t, doc: loadOpenAPI(t), seen: map[string][]int{}}
	rec := a.check(s, "GET", "/groups/{cluster}/{group}", "/api/v1/groups/prod/warming", "")
	var g struct {
		MaxLagSeconds *float64 `json:"max_lag_seconds"`
		Pending       bool     `json:"lag_seconds_pending"`
		Topics        []struct {
			MaxLagSeconds *float64 `json:"max_lag_seconds"`
			Pending       bool     `json:"lag_seconds_pending"`
		} `json:"topics"`
		Partitions []struct {
			LagSeconds *float64 `json:"lag_seconds"`
			Pending    bool     `json:"lag_seconds_pending"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &g); err != nil || rec.Code != 200 {
		t.Fatalf("%d %v: %s", rec.Code, err, rec.Body.String())
	}
	if g.MaxLagSeconds != nil || !g.Pending || len(g.Topics) != 1 || g.Topics[0].MaxLagSeconds != nil || !g.Topics[0].Pending {
		t.Errorf("group and topic: want max_lag_seconds null and pending: %s", rec.Body.String())
	}
	if len(g.Partitions) != 2 || g.Partitions[0].LagSeconds == nil || *g.Partitions[0].LagSeconds != 60 || g.Partitions[0].Pending ||
		g.Partitions[1].LagSeconds != nil || !g.Partitions[1].Pending {
		t.Errorf("partitions: want 60 s known and one pending: %s", rec.Body.String())
	}
	a.check(s, "GET", "/groups", "/api/v1/groups", "")

	for _, page := range []string{"/", "/kafka/prod/groups/warming"} {
		body := do(t, s, "GET", page).Body.String()
		if !strings.Contains(body, ">pending</span>") {
			t.Errorf("%s does not show lag seconds as pending", page)
		}
	}
}
