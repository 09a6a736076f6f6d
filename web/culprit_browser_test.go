package web

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/dlqreplay"
	dlqkafka "github.com/queuewatch/queuewatch/dlqreplay/kafka"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
	"github.com/queuewatch/queuewatch/web/components"
)

// culpritSite is a Kafka cluster (kfake) polled by the real collector and
// status evaluation: group events-sink, with no members, read topic
// events' 200 partitions to their ends but for partitions 57 (5 behind)
// and 181 (9 behind), which so stop the group; group other-reader reads
// another topic; events.DLT holds two dead letters of events. The server
// links to a Grafana at grafanaURL.
func culpritSite(t *testing.T, grafanaURL string) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.Ports(testenv.FreePorts(t, 1)...), kfake.SeedTopics(200, "events"), kfake.SeedTopics(1, "events.DLT", "other"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	behind := map[int32]int64{57: 5, 181: 9}
	var recs []*kgo.Record
	for p := range int32(200) {
		for range 1 + behind[p] {
			recs = append(recs, &kgo.Record{Topic: "events", Partition: p, Value: []byte(`{"n":1}`)})
		}
	}
	recs = append(recs, &kgo.Record{Topic: "other", Value: []byte("x")},
		&kgo.Record{Topic: "events.DLT", Value: []byte(`{"n":1}`)}, &kgo.Record{Topic: "events.DLT", Value: []byte(`{"n":2}`)})
	ctx := context.Background()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	events, other := kadm.Offsets{}, kadm.Offsets{}
	for p := range int32(200) {
		events.Add(kadm.Offset{Topic: "events", Partition: p, At: 1, LeaderEpoch: -1})
	}
	other.Add(kadm.Offset{Topic: "other", Partition: 0, At: 1, LeaderEpoch: -1})
	adm := kadm.NewClient(cl)
	if err := adm.CommitAllOffsets(ctx, "events-sink", events); err != nil {
		t.Fatal(err)
	}
	if err := adm.CommitAllOffsets(ctx, "other-reader", other); err != nil {
		t.Fatal(err)
	}

	kc := testenv.KafkaCluster(t, "prod", c.ListenAddrs())
	src, err := kafka.New(kafka.Options{Cluster: kc, DLQTopic: func(topic string) (queue.DLQDetection, bool) {
		return queue.DetectedName, strings.HasSuffix(topic, ".DLT")
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	col := collectors.New([]collectors.Source{src}, collectors.Options{
		Interval: time.Second, Timeout: 5 * time.Second, History: time.Hour, Evaluator: alerts.NewEvaluator(alerts.StatusOptions{Window: 5}),
	})
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { col.Run(runCtx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	be, err := dlqkafka.New(dlqkafka.Options{Cluster: kc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Close)
	svc, err := dlqreplay.New(dlqreplay.Options{Store: st, Backends: []dlqreplay.Backend{be}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	ts := httptest.NewServer(New(Options{Monitor: col, Metrics: col.Handler(prometheus.NewRegistry()), DLQs: svc, GrafanaURL: grafanaURL}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestBrowserCulpritsAndLinks: the group page highlights the partitions
// that made its status, first in a 200-partition table; its "dead
// letters →" link leads to the DLQ of the topic it reads, whose "←
// source" leads back to the group and to no reader of another topic; both
// pages link to their Grafana dashboards.
func TestBrowserCulpritsAndLinks(t *testing.T) {
	b := newBrowser(t, 1280, 900)
	const grafana = "http://grafana.test:3000"
	base := culpritSite(t, grafana)
	group := components.GroupURL("prod", "events-sink")
	dlq := components.DLQURL(queue.DLQRef{Broker: queue.Kafka, Cluster: "prod", Name: "events.DLT"}.ID())

	b.run(t, chromedp.Navigate(base+group))
	// The page refreshes itself; the group reaches stop at its first poll.
	b.waitJS(t, "two culprit rows", `document.querySelectorAll('#partitions tr.culprit').length === 2`, 30*time.Second)
	rows := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#partitions tbody tr')).slice(0, 3).map(tr =>
		tr.querySelectorAll('td')[2].textContent.trim() + ' ' + tr.dataset.status + (tr.classList.contains('culprit') ? '*' : ''))`)
	if strings.Join(rows, ",") != "181 stop*,57 stop*,0 ok" {
		t.Errorf("first rows %q; want the culprits 181 and 57 first, highlighted", rows)
	}
	// Highlighted means seen: the culprit rows are tinted, the others not.
	bg := evalJS[[]string](t, b, `[document.querySelector('#partitions tr.culprit td'), document.querySelector('#partitions tr.pst-ok td')].map(td => getComputedStyle(td).backgroundColor)`)
	if bg[0] == bg[1] {
		t.Errorf("culprit and ok rows share the background %s", bg[0])
	}
	if why := evalJS[string](t, b, `document.querySelector('#partitions tr.culprit td.pstatus').textContent`); !strings.Contains(why, "no members, lag 9") {
		t.Errorf("the first culprit's cell says %q, not its reason", why)
	}
	if s := evalJS[string](t, b, `document.getElementById('culprits').textContent`); !strings.Contains(s, "2 partitions made this status") || !strings.Contains(s, "events/181, events/57") {
		t.Errorf("culprit summary %q", s)
	}
	if href := evalJS[string](t, b, `document.querySelector('#crosslinks a.grafanalink').href`); href != grafana+"/d/queuewatch-consumer-lag?var-cluster=prod&var-group=events-sink" {
		t.Errorf("group's Grafana link %q", href)
	}
	shotIfAsked(t, b, "group-culprits-top")
	b.run(t, chromedp.Evaluate[chromedp.Void](`document.getElementById('culprits').scrollIntoView({block: 'start'})`))
	shotIfAsked(t, b, "group-culprits")

	// Group → its DLQ.
	b.waitJS(t, "the DLQ link", `document.querySelector('#crosslinks a.dlqlink')`, 10*time.Second)
	b.run(t, chromedp.Click(chromedp.CSS(`#crosslinks a.dlqlink`)))
	waitAcrossReload(t, b, "the DLQ page", `location.pathname === `+jsQuote(dlq)+` && document.querySelector('#dlqsource')`, 10*time.Second)
	readers := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#dlqsource .readerlink')).map(a => a.textContent.trim())`)
	if len(readers) != 1 || !strings.HasSuffix(readers[0], "events-sink") {
		t.Errorf("DLQ's readers %q; want events-sink only", readers)
	}
	if href := evalJS[string](t, b, `document.querySelector('#crosslinks a.grafanalink').href`); href != grafana+"/d/queuewatch-dlq?var-broker=kafka&var-cluster=prod&var-dlq=events.DLT" {
		t.Errorf("DLQ's Grafana link %q", href)
	}
	b.waitJS(t, "the dead letters", `document.querySelectorAll('#messages tbody tr.msg').length === 2`, 20*time.Second)
	shotIfAsked(t, b, "dlq-readers")

	// DLQ → back to the group.
	b.run(t, chromedp.Click(chromedp.CSS(`#dlqsource a.readerlink`)))
	waitAcrossReload(t, b, "the group page", `location.pathname === `+jsQuote(group)+` && document.querySelector('h1') && document.querySelector('h1').textContent === 'events-sink'`, 10*time.Second)
	b.checkClean(t)
}

// shotIfAsked saves the page as name.png under $QW_SCREENSHOTS, when it
// is set.
func shotIfAsked(t *testing.T, b *browser, name string) {
	t.Helper()
	if dir := os.Getenv("QW_SCREENSHOTS"); dir != "" {
		shot(t, b, filepath.Join(dir, name+".png"))
	}
}
