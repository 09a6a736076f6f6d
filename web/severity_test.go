package web

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// worstFirst is queue's severity order, worst first, as every list of the
// web package must show it.
var worstFirst = []string{"stop", "stall", "error", "rewind", "warn", "ok"}

// severityGroups has one group per status, each with the same lag so that
// only the status decides the order, plus a group that could not be read
// although an earlier evaluation left "stop" on it: it must show as error.
func severityGroups() []queue.ConsumerGroup {
	lag := []queue.PartitionLag{{Topic: "t", Lag: 50, LagSeconds: 5, HasCommit: true}}
	return []queue.ConsumerGroup{
		{Cluster: "c", Name: "g-ok", Status: queue.StatusOK, Partitions: lag},
		{Cluster: "c", Name: "g-warn", Status: queue.StatusWarn, StatusReason: "lag rising", Partitions: lag},
		{Cluster: "c", Name: "g-error", Status: queue.StatusStop, Err: "not authorized", Partitions: lag},
		{Cluster: "c", Name: "g-rewind", Status: queue.StatusRewind, StatusReason: "went back", Partitions: lag},
		{Cluster: "c", Name: "g-stop", Status: queue.StatusStop, StatusReason: "no members", Partitions: lag},
		{Cluster: "c", Name: "g-stall", Status: queue.StatusStall, StatusReason: "stuck", Partitions: lag},
	}
}

func severityServer() *Server {
	now := time.Now()
	return New(Options{
		Metrics: http.NotFoundHandler(),
		Monitor: staticMonitor{ready: true, snaps: []*queue.Snapshot{{
			Broker: queue.Kafka, Cluster: "c", Time: now, Groups: severityGroups(),
			DLQs: []queue.DLQ{{Broker: queue.Kafka, Cluster: "c", Name: "d", Messages: 10_000}},
		}}, statuses: []queue.SourceStatus{{Broker: queue.Kafka, Cluster: "c", Up: true, Polled: true, LastPoll: now}}},
	})
}

func rowsOf(groups []queue.ConsumerGroup) []components.GroupRow {
	rows := make([]components.GroupRow, len(groups))
	for i := range groups {
		g := &groups[i]
		rows[i] = components.GroupRow{G: g, Status: g.EffectiveStatus(), Lag: g.TotalLag(), LagSec: g.MaxLagSeconds()}
	}
	return rows
}

func TestWorstFirstIsQueueSeverityOrder(t *testing.T) {
	want := slices.Clone(queue.Statuses)
	slices.Reverse(want)
	var got []string
	for _, s := range want {
		got = append(got, string(s))
	}
	if !slices.Equal(got, worstFirst) {
		t.Fatalf("queue severity order, worst first, is %v; the web tests pin %v", got, worstFirst)
	}
}

// TestGroupTableSortsBySeverity: the overview's status column, sorted the
// way its header sorts it first (descending), is the severity order.
func TestGroupTableSortsBySeverity(t *testing.T) {
	rows := rowsOf(severityGroups())
	view.SortRows(rows, view.GroupSorts["status"], "desc", view.CompareGroupNames)
	var got []string
	for _, r := range rows {
		got = append(got, string(r.Status))
	}
	if !slices.Equal(got, worstFirst) {
		t.Errorf("status column sorted desc: %v; want %v", got, worstFirst)
	}
}

// TestAPIGroupsBySeverity: GET /api/v1/groups lists groups worst first,
// with the effective status (a group that could not be read is error).
func TestAPIGroupsBySeverity(t *testing.T) {
	rec := do(t, severityServer(), "GET", "/api/v1/groups")
	var out struct {
		Groups []struct {
			Group        string `json:"group"`
			Status       string `json:"status"`
			StatusReason string `json:"status_reason"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	var got []string
	for _, g := range out.Groups {
		got = append(got, g.Status)
	}
	if !slices.Equal(got, worstFirst) {
		t.Errorf("API group statuses in order %v; want %v", got, worstFirst)
	}
}

// TestAttentionBySeverity: "Needs attention" lists groups worst first; a
// non-empty DLQ ranks with warn (messages wait, none are lost) and after the
// groups of that rank; healthy groups are left out.
func TestAttentionBySeverity(t *testing.T) {
	groups := severityGroups()
	dlqs := []components.DLQRow{{D: &queue.DLQ{Broker: queue.Kafka, Cluster: "c", Name: "d", Messages: 10_000}}}
	s := severityServer()
	readers := make([]queue.Reader, len(groups))
	for i := range groups {
		readers[i] = groups[i].Reader()
	}
	items, more := s.ui.Attention(s.opts.Monitor, readers, dlqs)
	var got []string
	for _, a := range items {
		got = append(got, a.Class)
	}
	want := []string{"stop", "stall", "error", "rewind", "warn", "dlq"}
	if !slices.Equal(got, want) || more != 0 {
		t.Errorf("needs attention classes %v (+%d more); want %v", got, more, want)
	}
	for _, a := range items {
		if a.Class == "error" && a.Reason != "not authorized" {
			t.Errorf("error line reason %q; want the read error", a.Reason)
		}
	}
}

// TestAttentionOrderStable: between two polls every backlog changes and no
// status does; "Needs attention" keeps its order (by severity, then the
// latest onset first, then the name), where ordering by backlog swapped it
// every poll. A DLQ's count does not move it either.
func TestAttentionOrderStable(t *testing.T) {
	now := time.Now()
	poll := func(lags ...int64) ([]queue.Reader, []components.DLQRow) {
		g := func(name string, st queue.Status, since time.Duration, lag int64) queue.Reader {
			return (&queue.ConsumerGroup{
				Cluster: "c", Name: name, Status: st, StatusSince: now.Add(-since),
				Partitions: []queue.PartitionLag{{Topic: "t", Lag: lag}},
			}).Reader()
		}
		readers := []queue.Reader{
			g("old-stop", queue.StatusStop, time.Hour, lags[0]),
			g("new-stop", queue.StatusStop, 5*time.Minute, lags[1]),
			g("stall", queue.StatusStall, 2*time.Hour, lags[2]),
			g("a-warn", queue.StatusWarn, 10*time.Minute, lags[3]),
			g("b-warn", queue.StatusWarn, 10*time.Minute, lags[4]),
		}
		dlqs := []components.DLQRow{
			{D: &queue.DLQ{Broker: queue.Kafka, Cluster: "c", Name: "orders.dlq", Messages: lags[5]}},
			{D: &queue.DLQ{Broker: queue.Kafka, Cluster: "c", Name: "billing.dlq", Messages: lags[6]}},
		}
		return readers, dlqs
	}
	s := severityServer()
	names := func(readers []queue.Reader, dlqs []components.DLQRow) []string {
		items, _ := s.ui.Attention(s.opts.Monitor, readers, dlqs)
		var out []string
		for _, a := range items {
			out = append(out, a.Name)
		}
		return out
	}
	want := []string{"new-stop", "old-stop", "stall", "a-warn", "b-warn", "billing.dlq", "orders.dlq"}
	first := names(poll(100, 900, 50, 10, 20, 3, 1))
	second := names(poll(900, 100, 5000, 20, 10, 1, 3))
	if !slices.Equal(first, want) || !slices.Equal(second, want) {
		t.Errorf("needs attention\n poll 1 %v\n poll 2 %v\nwant both %v", first, second, want)
	}
}
