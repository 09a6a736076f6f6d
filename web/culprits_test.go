package web

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/api"
)

// culpritGroup is a 200-partition group of "events" evaluated by the real
// status evaluation over five polls a minute apart: partitions 57 and 181
// stall (nothing committed moves while records arrive; 181 is further
// behind), 120 falls behind while it reads (warn), and the rest keep up.
func culpritGroup() *queue.Snapshot {
	t0 := time.Now().Add(-5 * time.Minute)
	var polls []*queue.Snapshot
	for i := range 5 {
		n := int64(i)
		g := queue.ConsumerGroup{Cluster: "prod", Name: "events-sink", State: "Stable", Members: 2}
		for p := range int32(200) {
			end, committed := 1000+100*n, 1000+100*n
			switch p {
			case 57:
				committed = 900
			case 181:
				committed = 500
			case 120:
				committed = 990 + 10*n
			}
			g.Partitions = append(g.Partitions, queue.PartitionLag{
				Topic: "events", Partition: p, Committed: committed, HasCommit: true, End: end, Lag: end - committed,
				Member: fmt.Sprintf("c-%d", p%2),
			})
		}
		polls = append(polls, &queue.Snapshot{Broker: queue.Kafka, Cluster: "prod", Time: t0.Add(time.Duration(i) * time.Minute), Groups: []queue.ConsumerGroup{g}})
	}
	latest := polls[len(polls)-1]
	alerts.Evaluate(polls[:len(polls)-1], latest, alerts.StatusOptions{Window: len(polls)})
	latest.DLQs = []queue.DLQ{{Broker: queue.Kafka, Cluster: "prod", Name: "events.DLT", Sources: []string{"events"}, Messages: 3}}
	return latest
}

func culpritServer() *Server {
	snap := culpritGroup()
	return New(Options{Metrics: http.NotFoundHandler(), Monitor: staticMonitor{ready: true, snaps: []*queue.Snapshot{snap}}})
}

// TestGroupCulpritsAPI: the group API names the partitions whose
// evaluation made the status, worst first, and each partition's status.
func TestGroupCulpritsAPI(t *testing.T) {
	rec := do(t, culpritServer(), "GET", "/api/v1/groups/prod/events-sink")
	if rec.Code != http.StatusOK {
		t.Fatalf("group API %d %s", rec.Code, rec.Body)
	}
	g := decode[api.GroupJSON](t, rec)
	if g.Status != queue.StatusStall {
		t.Fatalf("status %q (%s); want stall", g.Status, g.StatusReason)
	}
	want := []api.CulpritJSON{
		{Topic: "events", Partition: 181, Status: queue.StatusStall, Lag: 900, Reason: "committed offset has not moved over the status window while lag is 900"},
		{Topic: "events", Partition: 57, Status: queue.StatusStall, Lag: 500, Reason: "committed offset has not moved over the status window while lag is 500"},
	}
	if !slices.Equal(g.Culprits, want) {
		t.Errorf("culprits %+v;\nwant %+v", g.Culprits, want)
	}
	statuses := map[int32]api.PartitionJSON{}
	for _, p := range g.Partitions {
		statuses[p.Partition] = p
	}
	for p, want := range map[int32]struct {
		status  queue.Status
		culprit bool
	}{181: {queue.StatusStall, true}, 57: {queue.StatusStall, true}, 120: {queue.StatusWarn, false}, 0: {queue.StatusOK, false}, 199: {queue.StatusOK, false}} {
		got := statuses[p]
		if got.Status != want.status || got.Culprit != want.culprit || (want.status == queue.StatusOK) != (got.StatusReason == "") {
			t.Errorf("partition %d: status %q culprit %v reason %q; want %q culprit %v", p, got.Status, got.Culprit, got.StatusReason, want.status, want.culprit)
		}
	}
}

var partitionRowRE = regexp.MustCompile(`<tr class="([^"]*)" data-status="([a-z]+)"><td class="pstatus"[^>]*>.*?</td><td class="name"[^>]*>[^<]*</td><td class="num">(\d+)</td>`)

// partitionRows are the partition table's rows as "partition status",
// with a star for a highlighted culprit.
func partitionRowsOf(body string) []string {
	var out []string
	for _, m := range partitionRowRE.FindAllStringSubmatch(body, -1) {
		row := m[3] + " " + m[2]
		if strings.Contains(" "+m[1]+" ", " culprit ") {
			row += "*"
		}
		out = append(out, row)
	}
	return out
}

// TestGroupPageCulpritsFirst: on a 200-partition group the culprits lead
// the partition table by default, highlighted, then the other partitions
// judged not ok, then the rest in topic order; the filter finds them by
// status, and another sort says how to bring them back.
func TestGroupPageCulpritsFirst(t *testing.T) {
	s := culpritServer()
	rec := do(t, s, "GET", "/kafka/prod/groups/events-sink")
	body := rec.Body.String()
	rows := partitionRowsOf(body)
	if rec.Code != http.StatusOK || len(rows) != 200 {
		t.Fatalf("group page %d with %d partition rows", rec.Code, len(rows))
	}
	if want := []string{"181 stall*", "57 stall*", "120 warn", "0 ok", "1 ok"}; !slices.Equal(rows[:5], want) {
		t.Errorf("first rows %q; want %q", rows[:5], want)
	}
	if n := strings.Count(body, `class="culprit `); n != 2 {
		t.Errorf("%d highlighted rows; want 2", n)
	}
	if !strings.Contains(body, "2 partitions made this status") {
		t.Errorf("no culprit summary naming 2 partitions")
	}
	if !strings.Contains(body, "events/181, events/57") {
		t.Error("the summary does not name the culprits, worst first")
	}

	rows = partitionRowsOf(do(t, s, "GET", "/kafka/prod/groups/events-sink?q=stall").Body.String())
	if want := []string{"181 stall*", "57 stall*"}; !slices.Equal(rows, want) {
		t.Errorf("filtered by stall: %q; want %q", rows, want)
	}
	body = do(t, s, "GET", "/kafka/prod/groups/events-sink?sort=partition&dir=asc").Body.String()
	if rows = partitionRowsOf(body); len(rows) != 200 || rows[0] != "0 ok" || !strings.Contains(body, "sort by status to list them first") {
		t.Errorf("sorted by partition: first %q, and no hint to sort by status", rows[:1])
	}

	// Its DLQ, found from the topic it reads.
	if !strings.Contains(do(t, s, "GET", "/kafka/prod/groups/events-sink").Body.String(), `href="/dlq/kafka:prod::events.DLT"`) {
		t.Error("the group page does not link to the DLQ of the topic it reads")
	}
}
