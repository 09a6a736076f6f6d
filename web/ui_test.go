package web

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// historyMonitor is a staticMonitor with a history for every group and DLQ.
type historyMonitor struct{ staticMonitor }

func (m historyMonitor) ReaderHistory(k queue.ReaderKey) []queue.ReaderPoint {
	now := time.Now()
	out := make([]queue.ReaderPoint, 90)
	for i := range out {
		out[i] = queue.ReaderPoint{At: now.Add(time.Duration(i-90) * 15 * time.Second), Backlog: int64(i * 10), LagSeconds: float64(i), HasLagSeconds: true}
	}
	return out
}

func (m historyMonitor) DLQHistory(id string) []queue.DLQPoint {
	now := time.Now()
	return []queue.DLQPoint{{At: now.Add(-5 * time.Minute), Messages: 10}, {At: now, Messages: 160}}
}

// manyGroups builds n groups g0000… with lag i and every 7th stalled.
func manyGroups(n int) []queue.ConsumerGroup {
	groups := make([]queue.ConsumerGroup, n)
	for i := range groups {
		st := queue.StatusOK
		if i%7 == 0 {
			st = queue.StatusStall
		}
		groups[i] = queue.ConsumerGroup{
			Cluster: "prod", Name: fmt.Sprintf("g%04d", i), State: "Stable", Members: 1, Status: st,
			Partitions: []queue.PartitionLag{{Topic: "t", Partition: 0, Lag: int64(i), LagSeconds: float64(i % 60)}},
		}
	}
	return groups
}

func listServer(n int) *Server {
	return New(Options{Metrics: http.NotFoundHandler(), Monitor: historyMonitor{staticMonitor{
		ready: true,
		snaps: []*queue.Snapshot{{
			Broker: queue.Kafka, Cluster: "prod", Time: time.Now(), Groups: manyGroups(n),
			DLQs: []queue.DLQ{{Broker: queue.Kafka, Cluster: "prod", Name: "orders.DLT", Sources: []string{"orders"}, Messages: 160}},
		}},
		statuses: []queue.SourceStatus{{Broker: queue.Kafka, Cluster: "prod", Up: true, Polled: true, LastPoll: time.Now()}},
	}}})
}

var partitionCell = regexp.MustCompile(`<td class="num">(\d+)</td><td class="sharecell">`)

var rowName = regexp.MustCompile(`<td class="name"><a href="[^"]*" title="([^"]*)">`)

func rowNames(body string) []string {
	var out []string
	for _, m := range rowName.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestOverviewListState(t *testing.T) {
	s := listServer(450)
	for _, tc := range []struct {
		name, query string
		rows        int
		first, last string
		contains    []string
	}{
		{name: "default is worst first, paged", query: "", rows: 200, first: "g0448", contains: []string{"1–200 of 450 groups", "page 1 / 3"}},
		{name: "sort by name ascending", query: "?sort=name&dir=asc", rows: 200, first: "g0000", last: "g0199"},
		{name: "sort by lag descending", query: "?sort=lag&dir=desc", rows: 200, first: "g0449", last: "g0250"},
		{name: "page 3", query: "?sort=name&dir=asc&page=3", rows: 50, first: "g0400", last: "g0449", contains: []string{"401–450 of 450 groups", `href="/?dir=asc&amp;page=2&amp;sort=name&amp;tab=groups"`}},
		{name: "page past the end shows the last", query: "?sort=name&dir=asc&page=99", rows: 50, first: "g0400"},
		{name: "filter", query: "?q=G012&sort=name&dir=asc", rows: 10, first: "g0120", last: "g0129"},
		{name: "filter matches nothing", query: "?q=nope", rows: 0, contains: []string{"No groups match “nope”", `href="/?dir=desc&amp;sort=status&amp;tab=groups"`}},
		{name: "unknown sort falls back", query: "?sort=%3Cscript%3E&dir=sideways", rows: 200, first: "g0448"},
		{name: "sorted column links to the other direction", query: "?sort=lag&dir=desc", rows: 200, contains: []string{`href="/?dir=asc&amp;sort=lag&amp;tab=groups"`, `aria-sort="descending"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, s, "GET", "/"+tc.query)
			body := rec.Body.String()
			names := rowNames(body)
			if rec.Code != 200 || len(names) != tc.rows {
				t.Fatalf("%d, %d rows, want %d", rec.Code, len(names), tc.rows)
			}
			if tc.first != "" && names[0] != tc.first {
				t.Errorf("first row %s, want %s", names[0], tc.first)
			}
			if tc.last != "" && names[len(names)-1] != tc.last {
				t.Errorf("last row %s, want %s", names[len(names)-1], tc.last)
			}
			for _, c := range tc.contains {
				if !strings.Contains(body, c) {
					t.Errorf("page lacks %q", c)
				}
			}
		})
	}
}

func TestOverviewPartial(t *testing.T) {
	rec := do(t, listServer(30), "GET", "/?q=g001&partial=1")
	body := rec.Body.String()
	if strings.Contains(body, "<html") || strings.Contains(body, `id="filter"`) {
		t.Error("partial carries the page frame or the filter box (it would steal focus)")
	}
	for _, id := range []string{"sources", "top", "tabs", "table"} {
		if !strings.Contains(body, `id="`+id+`" class="`) && !strings.Contains(body, `id="`+id+`"`) {
			t.Errorf("partial lacks block #%s", id)
		}
	}
	if n := strings.Count(body, `hx-swap-oob="true"`); n != 4 {
		t.Errorf("%d out-of-band blocks, want 4", n)
	}
	if names := rowNames(body); len(names) != 10 {
		t.Errorf("partial rows %v", names)
	}
}

func TestOverviewTabsAndSummary(t *testing.T) {
	s := listServer(30)
	body := do(t, s, "GET", "/?tab=dlqs").Body.String()
	for _, want := range []string{`id="dlqs"`, "orders.DLT", "160 dead letters", "+30/min", "← orders", `class="tab active"`, `5</span> <span class="muted">of 30`, "last 1h"} {
		if !strings.Contains(body, want) {
			t.Errorf("DLQ tab lacks %q", want)
		}
	}
	body = do(t, s, "GET", "/?tab=queues").Body.String()
	if !strings.Contains(body, "No RabbitMQ queues.") {
		t.Error("queues tab has no teaching empty state")
	}
	body = do(t, New(Options{Metrics: http.NotFoundHandler(), Monitor: staticMonitor{ready: true}}), "GET", "/").Body.String()
	for _, want := range []string{"No consumer groups yet.", "Nothing needs you"} {
		if !strings.Contains(body, want) {
			t.Errorf("empty overview lacks %q", want)
		}
	}
}

func TestSourceDownShowsErrorAndLastSuccess(t *testing.T) {
	now := time.Now()
	s := New(Options{Metrics: http.NotFoundHandler(), Monitor: staticMonitor{ready: true, statuses: []queue.SourceStatus{
		{Broker: queue.Kafka, Cluster: "prod", Up: true, Polled: true, LastPoll: now},
		{Broker: queue.Kafka, Cluster: "eu", Polled: true, LastPoll: now, LastSuccess: now.Add(-4 * time.Minute), LastError: "dial tcp: " + hostile},
	}}})
	body := do(t, s, "GET", "/").Body.String()
	for _, want := range []string{"kafka:eu is down", "last ok 4m ago", "Last successful poll 4m ago", "1</span> <span class=\"muted\">/ 2 up", "&lt;script&gt;"} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("source error rendered as markup")
	}
	// No all-clear while blind: nothing that was read needs attention, but
	// what kafka:eu holds is unknown, so no card is green.
	if strings.Contains(body, "Nothing needs you") || !strings.Contains(body, "1 of 2 sources was not read: what it holds is unknown") {
		t.Error("an all-clear while a source is down")
	}
	if strings.Contains(body, `class="card good"`) || !strings.Contains(body, `class="card unknown"`) {
		t.Error("a green card while a source is down")
	}
}

func TestGroupPageListState(t *testing.T) {
	parts := make([]queue.PartitionLag, 450)
	for i := range parts {
		parts[i] = queue.PartitionLag{Topic: "t" + fmt.Sprint(i%3), Partition: int32(i), Lag: int64(i), HasCommit: true, Committed: 5, End: int64(5 + i), Member: "m" + fmt.Sprint(i%4)}
	}
	s := New(Options{Metrics: http.NotFoundHandler(), Monitor: historyMonitor{staticMonitor{ready: true, snaps: []*queue.Snapshot{{
		Broker: queue.Kafka, Cluster: "prod", Groups: []queue.ConsumerGroup{{Cluster: "prod", Name: "big", Partitions: parts}},
	}}}}})
	body := do(t, s, "GET", "/kafka/prod/groups/big?sort=lag&dir=desc").Body.String()
	if !strings.Contains(body, "1–200 of 450 partitions") || !strings.Contains(body, `data-url="/api/v1/groups/prod/big/history"`) {
		t.Error("group page lacks paging or chart data URL")
	}
	var order []string
	for _, m := range partitionCell.FindAllStringSubmatch(body, 3) {
		order = append(order, m[1])
	}
	if strings.Join(order, ",") != "449,448,447" {
		t.Errorf("partitions by lag descending start %v", order)
	}
	body = do(t, s, "GET", "/kafka/prod/groups/big?q=m3&partial=1").Body.String()
	if !strings.Contains(body, `id="parts"`) || strings.Count(body, `<td class="member">`) != 112 {
		t.Errorf("filtered partial: %d member cells", strings.Count(body, `<td class="member">`))
	}
	rec := do(t, s, "GET", "/api/v1/groups/prod/big/history")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"lag_seconds"`) {
		t.Errorf("history API %d", rec.Code)
	}
}

// TestHostileNamesEscapedEverywhere puts markup in every name the UI shows
// (group, cluster, topic, member, host, DLQ, source, reason) and checks no
// page, partial or attribute carries it as markup.
func TestHostileNamesEscapedEverywhere(t *testing.T) {
	const img = `"><img src=x onerror=alert(1)>`
	g := queue.ConsumerGroup{
		Cluster: img, Name: hostile + img, State: img, Status: queue.StatusStop, StatusReason: img,
		Partitions: []queue.PartitionLag{{Topic: img, Lag: 100, LagSeconds: 9000, Member: img, Host: img}},
	}
	s := New(Options{Metrics: http.NotFoundHandler(), Monitor: historyMonitor{staticMonitor{
		ready: true,
		snaps: []*queue.Snapshot{{
			Broker: queue.Kafka, Cluster: img, Groups: []queue.ConsumerGroup{g},
			DLQs:   []queue.DLQ{{Broker: queue.Kafka, Cluster: img, Name: img + ".DLT", Sources: []string{hostile}, Messages: 3}},
			Queues: []queue.Queue{{Cluster: img, VHost: img, Name: hostile, Ready: 1, HasDeadLetter: true, DeadLetterExchange: img}},
		}},
		statuses: []queue.SourceStatus{{Broker: queue.Kafka, Cluster: img, Polled: true, LastError: img}},
	}}})
	groupPath := "/kafka/" + url.PathEscape(img) + "/groups/" + url.PathEscape(g.Name)
	for _, target := range []string{
		"/", "/?partial=1", "/?tab=dlqs", "/?tab=queues", "/?q=" + url.QueryEscape(img),
		groupPath, groupPath + "?partial=1&q=" + url.QueryEscape(img), groupPath + "/../history",
	} {
		rec := do(t, s, "GET", target)
		body := rec.Body.String()
		if rec.Code != 200 && rec.Code != 404 {
			t.Errorf("%s: %d", target, rec.Code)
		}
		if strings.Contains(body, "<img") || strings.Contains(body, "<script>alert") {
			t.Errorf("%s renders a name as markup", target)
		}
	}
	body := do(t, s, "GET", groupPath).Body.String()
	if !strings.Contains(body, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Error("hostile name missing from the group page")
	}
	if !strings.Contains(body, `data-url="/api/v1/groups/%22%3E%3Cimg`) {
		t.Error("chart data URL is not path-escaped")
	}
	overview := do(t, s, "GET", "/").Body.String()
	if !strings.Contains(overview, "<title>lag of &lt;script&gt;") {
		t.Error("sparkline title missing or unescaped")
	}
}
