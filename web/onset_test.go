package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/queue"
)

// TestGroupPageSaysSince: a group memberless for an hour, evaluated poll
// by poll as the collector does, reads "no members since …" with the full
// duration on its page, and its API answer carries the onset.
func TestGroupPageSaysSince(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 5, 9, 0, 0, time.UTC)
	e := alerts.NewEvaluator(alerts.StatusOptions{})
	var latest *queue.Snapshot
	for i := range 75 {
		latest = &queue.Snapshot{
			Broker: queue.Kafka, Cluster: "prod", Time: t0.Add(time.Duration(i) * time.Minute),
			Groups: []queue.ConsumerGroup{{
				Cluster: "prod", Name: "billing", State: "Empty",
				Partitions: []queue.PartitionLag{{Topic: "invoices", Partition: 0, Committed: 10, HasCommit: true, End: 467, Lag: 457}},
			}},
		}
		e.Evaluate(latest)
	}
	s := New(Options{Metrics: http.NotFoundHandler(), Monitor: staticMonitor{ready: true, snaps: []*queue.Snapshot{latest}}})

	rec := do(t, s, "GET", "/kafka/prod/groups/billing")
	if want := "no members since 05:09 UTC (1h 14m), lag 457"; rec.Code != 200 || !strings.Contains(rec.Body.String(), want) {
		t.Errorf("group page %d: want %q in it", rec.Code, want)
	}

	rec = do(t, s, "GET", "/api/v1/groups/prod/billing")
	var g struct {
		Status       string    `json:"status"`
		StatusReason string    `json:"status_reason"`
		StatusSince  time.Time `json:"status_since"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &g); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	if g.Status != "stop" || !g.StatusSince.Equal(t0) {
		t.Errorf("API: %+v; want stop since %v", g, t0)
	}
}
