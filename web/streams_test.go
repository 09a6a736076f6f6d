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

const streamsHostile = "counts/<script>x</script>"

// streamsServer serves a Kafka cluster with a consumer group and three
// streams groups: one running (two stream threads of one process, a
// standby task, a repartition topic), one stopped with records waiting,
// and one that could not be read.
func streamsServer() *Server {
	return New(Options{
		Metrics: http.NotFoundHandler(),
		Monitor: staticMonitor{ready: true, snaps: []*queue.Snapshot{{
			Broker: queue.Kafka, Cluster: "prod", Time: time.Now(),
			Groups: []queue.ConsumerGroup{{Cluster: "prod", Name: "ok-group", State: "Stable", Members: 1, Status: queue.StatusOK}},
			StreamsGroups: []queue.StreamsGroup{
				{
					Cluster: "prod", Name: "wordcount", State: "Stable", Epoch: 4, AssignmentEpoch: 4,
					Members: []queue.StreamsMember{
						{ID: "m-1", ProcessID: "proc-a", ClientID: "wordcount-StreamThread-1-consumer", Host: "10.0.0.5", Active: []queue.StreamsTasks{{Subtopology: "0", Partitions: []int32{0, 1}}, {Subtopology: "1", Partitions: []int32{0}}}},
						{ID: "m-2", ProcessID: "proc-a", ClientID: "wordcount-StreamThread-2-consumer", Host: "10.0.0.5", Standby: []queue.StreamsTasks{{Subtopology: "1", Partitions: []int32{0}}}},
					},
					Subtopologies: []queue.Subtopology{
						{ID: "0", SourceTopics: []string{"lines"}, RepartitionSink: []string{"wordcount-by-word-repartition"}},
						{ID: "1", RepartitionSource: []string{"wordcount-by-word-repartition"}, Changelogs: []string{"wordcount-counts-changelog"}},
					},
					Partitions: []queue.StreamsPartition{
						{Topic: "lines", Partition: 0, Committed: 40, End: 47, Lag: 7},
						{Topic: "lines", Partition: 1, Committed: -1, End: 2, Lag: 2},
						{Topic: "wordcount-by-word-repartition", Partition: 0, Internal: true, Committed: 90, End: 93, Lag: 3},
					},
					Status: queue.StatusOK, StatusReason: "12 records waiting; 3 active tasks, 1 standby task on 2 members in 1 process",
				},
				{
					Cluster: "prod", Name: streamsHostile, State: "Empty",
					Partitions: []queue.StreamsPartition{{Topic: "mail", Partition: 0, Committed: 3, End: 9, Lag: 6}},
					Status:     queue.StatusStop, StatusReason: "no members: 6 records waiting, no task running",
				},
				{Cluster: "prod", Name: "locked", Err: "describe: GROUP_AUTHORIZATION_FAILED"},
			},
		}}},
	})
}

// TestStreamsOverview: streams groups have their own tab, worst first, and
// a stopped one is a "Needs attention" line linking to its page.
func TestStreamsOverview(t *testing.T) {
	s := streamsServer()
	body := do(t, s, "GET", "/").Body.String()
	if !strings.Contains(body, `Streams groups <span class="count">3</span>`) {
		t.Error("the overview has no streams group tab with 3 groups")
	}
	if !strings.Contains(body, escapedHref(queue.StreamsGroupPage("prod", streamsHostile))) || !strings.Contains(body, "no members: 6 records waiting") {
		t.Error("the stopped streams group has no needs-attention line linking to its page")
	}
	if strings.Contains(body, "<script>x") {
		t.Error("a streams group name is not escaped")
	}
	tab := do(t, s, "GET", "/?tab=streams").Body.String()
	rows := tab[strings.Index(tab, `id="streams"`):]
	var order []string
	for _, part := range strings.Split(rows, `/streams-groups/`)[1:] {
		order = append(order, part[:strings.Index(part, `"`)])
	}
	want := []string{url.PathEscape(streamsHostile), "locked", "wordcount"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("rows %q; want %q (worst first)", order, want)
	}
	if !strings.Contains(rows, "3 active · 1 standby") {
		t.Error("the tasks column does not count active and standby tasks")
	}
}

// TestStreamsPage: a streams group's page shows its state, epochs, members
// with process and tasks, per partition the committed offset ("—" before a
// commit) and lag with repartition topics marked internal, and its
// subtopologies.
func TestStreamsPage(t *testing.T) {
	s := streamsServer()
	rec := do(t, s, "GET", queue.StreamsGroupPage("prod", "wordcount"))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{
		"streams group", "Stable", "4 / 4", "2 in 1", "proc-a", "wordcount-StreamThread-2-consumer", "0: 0, 1 · 1: 0",
		">40<", ">—<", ">internal<", "wordcount-counts-changelog", "3 active tasks, 1 standby task on 2 members in 1 process",
		`data-chart="streams"`, `data-url="/api/v1/kafka/streams-groups/prod/wordcount/history"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	body = do(t, s, "GET", queue.StreamsGroupPage("prod", streamsHostile)).Body.String()
	for _, want := range []string{"No members", "no members: 6 records waiting", "No topology yet"} {
		if !strings.Contains(body, want) {
			t.Errorf("stopped group's page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>x") {
		t.Error("a streams group name is not escaped")
	}
	if rec := do(t, s, "GET", queue.StreamsGroupPage("prod", "nope")); rec.Code != http.StatusNotFound {
		t.Errorf("unknown streams group: %d; want 404", rec.Code)
	}
	if rec := do(t, s, "GET", queue.StreamsGroupPage("prod", "wordcount")+"?partial=1"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `hx-swap-oob="true"`) {
		t.Errorf("partial refresh: %d", rec.Code)
	}
}

// TestStreamsAPI: GET /api/v1/kafka/streams-groups lists every streams
// group worst first, with tasks, subtopologies, a null committed offset
// before the first commit and repartition partitions marked internal.
func TestStreamsAPI(t *testing.T) {
	rec := do(t, streamsServer(), "GET", "/api/v1/kafka/streams-groups")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	var got struct {
		StreamsGroups []api.StreamsGroupJSON `json:"streams_groups"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.StreamsGroups) != 3 || got.StreamsGroups[0].Group != streamsHostile || got.StreamsGroups[0].Status != queue.StatusStop {
		t.Fatalf("streams groups %+v", got.StreamsGroups)
	}
	w := got.StreamsGroups[2]
	if w.Group != "wordcount" || w.Lag != 12 || len(w.Members) != 2 || w.Members[1].ProcessID != "proc-a" || len(w.Members[1].Standby) != 1 || len(w.Subtopologies) != 2 {
		t.Errorf("wordcount %+v", w)
	}
	if p := w.Partitions; *p[0].CommittedOffset != 40 || p[1].CommittedOffset != nil || !p[2].Internal {
		t.Errorf("wordcount partitions %+v", p)
	}
	if rec := do(t, streamsServer(), "GET", "/api/v1/kafka/streams-groups/prod/nope/history"); rec.Code != http.StatusNotFound {
		t.Errorf("unknown streams group history: %d; want 404", rec.Code)
	}
}
