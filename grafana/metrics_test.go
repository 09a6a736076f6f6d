package grafana

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/queuewatch/queuewatch/alerts"
	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/kafka"
	collectnats "github.com/queuewatch/queuewatch/collectors/nats"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/demo"
	"github.com/queuewatch/queuewatch/queue"
)

// notYetExported are metrics a dashboard charts that the demo's collector
// output below cannot contain; each entry names where it is checked instead.
var notYetExported = map[string]bool{
	// Replay results, charted by the DLQ dashboard's "Replays" panel. The
	// app exports them (series appear once a job has run); the collectors'
	// /metrics checked here cannot have them. app/prometheus_test.go
	// asserts the exact series after a replay.
	"queuewatch_dlq_replayed_messages_total": true,
	// Retention headroom, which QueuewatchDataLossImminent fires on, is
	// exported only for a reader at risk (past half an age limit): the
	// demo's readers keep pace on max_age 1h or sit on Kafka's week, and
	// kfake deletes nothing by age, so no demo reader is. collectors'
	// TestHeadroomSeries and the promtool test headroom.yml check it.
	"queuewatch_reader_retention_headroom_seconds": true,
	// Kafka Connect connectors: the demo runs no Connect worker. The
	// collectors' golden file (testdata/connect_metrics.golden) holds the
	// series, and prometheus/rules/tests/kafka_connect.yml the alert on them.
	"queuewatch_kafka_connector_status": true,
	"queuewatch_kafka_connector_tasks":  true,
	// Kafka streams groups: kfake, the demo's Kafka, has no streams groups.
	// collectors' testdata/streams_metrics.golden holds the series, and
	// prometheus/rules/tests/kafka_streams.yml the alerts on them.
	"queuewatch_kafka_streamsgroup_status": true,
	"queuewatch_kafka_streamsgroup_lag":    true,
	"queuewatch_kafka_streamsgroup_tasks":  true,
}

// scrapeSeries are the series Prometheus itself records for every scrape of
// a target, which the queuewatch dashboard charts next to queuewatch's own.
// They never appear in /metrics.
var scrapeSeries = map[string]bool{
	"up":                      true,
	"scrape_duration_seconds": true,
	"scrape_samples_scraped":  true,
}

// rabbitSource is a RabbitMQ source with one fixed queue and one DLQ. The
// demo has only Kafka, so it stands in for collectors/rabbitmq (which needs
// a live broker) to make the real collector export the rabbitmq_queue_*
// families and a RabbitMQ DLQ, which the no-consumer rules exclude by
// selecting queuewatch_dlq_messages{broker="rabbitmq"}.
type rabbitSource struct{}

func (rabbitSource) Broker() queue.Broker { return queue.RabbitMQ }
func (rabbitSource) Cluster() string      { return "rabbit" }
func (rabbitSource) Poll(context.Context) (*queue.Snapshot, error) {
	return &queue.Snapshot{
		Broker: queue.RabbitMQ, Cluster: "rabbit", Time: time.Now(),
		Queues: []queue.Queue{{
			Cluster: "rabbit", VHost: "/", Name: "orders", Type: "classic",
			Ready: 3, Consumers: 1, HeadMessageAge: time.Second, HasHeadAge: true,
		}},
		DLQs: []queue.DLQ{{Broker: queue.RabbitMQ, Cluster: "rabbit", VHost: "/", Name: "orders.dlq", Sources: []string{"orders"}, Messages: 2}},
	}, nil
}

// fixedSource serves one snapshot of a real poll again.
type fixedSource struct{ snap *queue.Snapshot }

func (f fixedSource) Broker() queue.Broker                          { return f.snap.Broker }
func (f fixedSource) Cluster() string                               { return f.snap.Cluster }
func (f fixedSource) Poll(context.Context) (*queue.Snapshot, error) { return f.snap, nil }

// pollDemo starts the demo, polls it with the real Kafka collector (plus
// rabbitSource, outboxSource, sqsSource, pubsubSource and shareSource) until the families that need
// history are there, and returns the latest snapshot of each source.
func pollDemo(t *testing.T) []*queue.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	d, err := demo.Start(ctx, demo.Options{Speed: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	dlq := config.Default().DLQ
	kc, err := brokerkafka.New(config.Kafka{Name: "demo", Brokers: d.Brokers()}, dlq)
	if err != nil {
		t.Fatal(err)
	}
	src, err := kafka.New(kafka.Options{
		Cluster: kc,
		DLQTopic: func(topic string) (queue.DLQDetection, bool) {
			return queue.DetectedName, dlq.IsDLQName(topic)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	// The demo's NATS part, polled by the real NATS collector.
	nd, err := demo.StartNATS(ctx, demo.NATSOptions{Speed: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer nd.Close()
	nc, err := brokernats.New(config.NATS{Name: "nats", URL: nd.URL()})
	if err != nil {
		t.Fatal(err)
	}
	natsSrc, err := collectnats.New(collectnats.Options{Cluster: nc})
	if err != nil {
		t.Fatal(err)
	}
	defer natsSrc.Close()
	evaluator := alerts.NewEvaluator(alerts.StatusOptions{})
	// A generous poll deadline: under -race on a busy machine a 1s poll can
	// run out before the record timestamps (lag seconds, DLQ age) arrive.
	c := collectors.New([]collectors.Source{src, rabbitSource{}, outboxSource{}, sqsSource{}, pubsubSource{}, kinesisSource{}, shareSource{}, natsSrc}, collectors.Options{
		Interval:  10 * time.Second,
		Evaluator: evaluator,
	})
	// Poll until the demo's snapshot has what needs history (the ETA needs
	// two polls that both saw a group) and its DLQs with their age: on a
	// slow machine the demo's groups may only appear at the second poll.
	for range 10 {
		c.PollOnce(ctx)
		if k := kafkaSnap(c.Snapshots()); k != nil && slices.ContainsFunc(k.Groups, func(g queue.ConsumerGroup) bool { return g.ETA.Known }) &&
			!slices.ContainsFunc(k.Groups, func(g queue.ConsumerGroup) bool { return g.LagSecondsPending() }) &&
			slices.ContainsFunc(k.DLQs, func(d queue.DLQ) bool { return d.HasOldestAge }) &&
			natsHasLagSeconds(c.Snapshots()) {
			break
		}
		// What the scheduler does after publishing: read the record
		// timestamps and the next messages the poll left pending.
		src.Finish(ctx)
		natsSrc.Finish(ctx)
		time.Sleep(200 * time.Millisecond) // let the demo move between polls
	}
	for _, s := range c.Statuses() {
		if !s.Up {
			t.Fatalf("source %s/%s did not poll: %+v", s.Broker, s.Cluster, s)
		}
	}
	return c.Snapshots()
}

func kafkaSnap(snaps []*queue.Snapshot) *queue.Snapshot {
	for _, s := range snaps {
		if s != nil && s.Broker == queue.Kafka {
			return s
		}
	}
	return nil
}

// natsHasLagSeconds reports whether the NATS snapshot has a consumer whose
// lag seconds are known, so the lag-seconds family is exported.
func natsHasLagSeconds(snaps []*queue.Snapshot) bool {
	for _, s := range snaps {
		if s != nil && s.Broker == queue.NATS && slices.ContainsFunc(s.Consumers, func(c queue.StreamConsumer) bool { return c.HasLagSeconds }) {
			return true
		}
	}
	return false
}

// exportedSeries serves snaps through a collector with the metrics
// settings m and returns every series of its /metrics, histogram series
// included, with the metric name as __name__.
func exportedSeries(t *testing.T, snaps []*queue.Snapshot, m config.Metrics) []labels.Labels {
	t.Helper()
	var srcs []collectors.Source
	for _, s := range snaps {
		srcs = append(srcs, fixedSource{s})
	}
	c := collectors.New(srcs, collectors.Options{Metrics: m})
	c.PollOnce(t.Context())
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []labels.Labels
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			lb := labels.NewScratchBuilder(len(mt.GetLabel()) + 2)
			for _, lp := range mt.GetLabel() {
				lb.Add(lp.GetName(), lp.GetValue())
			}
			add := func(name string, extra ...string) {
				b := labels.NewBuilder(lb.Labels()).Set(model.MetricNameLabel, name)
				for i := 0; i < len(extra); i += 2 {
					b.Set(extra[i], extra[i+1])
				}
				out = append(out, b.Labels())
			}
			switch f.GetType() {
			case dto.MetricType_HISTOGRAM:
				for _, bk := range mt.GetHistogram().GetBucket() {
					add(f.GetName()+"_bucket", "le", strconv.FormatFloat(bk.GetUpperBound(), 'g', -1, 64))
				}
				add(f.GetName()+"_bucket", "le", "+Inf")
				add(f.GetName() + "_sum")
				add(f.GetName() + "_count")
			default:
				add(f.GetName())
			}
		}
	}
	return out
}

// selectable replaces Grafana variables the way a dashboard user who
// selected "All" would: every value (".*"), durations by a duration.
func selectable(expr string) string {
	expr = grafanaInterval.ReplaceAllString(expr, "5m")
	return grafanaVariable.ReplaceAllString(expr, ".*")
}

// unselected lists the vector selectors of expr that select no series of
// exported. A matcher on the status label only has to name a status: the
// status metric has one series per group, its current status, so which
// statuses exist depends on the groups' health at the moment.
func unselected(t *testing.T, expr string, exported []labels.Labels) []string {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(selectable(expr))
	if err != nil {
		t.Fatalf("parse %q: %v", expr, err)
	}
	var missing []string
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		var matchers []*labels.Matcher
		for _, m := range vs.LabelMatchers {
			if m.Name == "status" {
				if !slices.Contains(queue.Statuses, queue.Status(m.Value)) {
					missing = append(missing, vs.String()+" (no such status)")
				}
				continue
			}
			matchers = append(matchers, m)
		}
		if !slices.ContainsFunc(exported, func(ls labels.Labels) bool {
			for _, m := range matchers {
				if !m.Matches(ls.Get(m.Name)) {
					return false
				}
			}
			return true
		}) {
			missing = append(missing, vs.String())
		}
		return nil
	})
	return missing
}

// TestQueriesSelectSeries checks, for each metrics granularity, that every
// vector selector of every dashboard query (the variant for that
// granularity) and of every alert rule (generated for it) selects at least
// one series of a real collector's /metrics at that setting; so a query
// of a series the setting does not export fails here, not in a dashboard.
func TestQueriesSelectSeries(t *testing.T) {
	snaps := pollDemo(t)
	settings := map[string]config.Metrics{
		// Not committed: the opt-in offset families add the rates panel.
		"every opt-in": {
			Granularity: config.GranularityPartition, CommittedOffsets: true, PartitionOffsets: true,
			PartitionLagSeconds: true, CommitGaps: true,
		},
		"group with offsets": {Granularity: config.GranularityGroup, CommittedOffsets: true, PartitionOffsets: true},
	}
	for dir, m := range Variants {
		settings[dir] = m
	}
	for dir, m := range settings {
		t.Run(dir, func(t *testing.T) {
			exported := exportedSeries(t, snaps, m)
			ds, err := DashboardsFor(m)
			if err != nil {
				t.Fatal(err)
			}
			var queries []query
			for file, d := range ds {
				queries = append(queries, dashboardQueries(t, dir+"/"+file, d)...)
			}
			queries = append(queries, ruleExprs(t, m)...)
			for _, q := range queries {
				for _, sel := range unselected(t, q.expr, exported) {
					name := sel
					if i := strings.IndexAny(name, "{["); i > 0 {
						name = name[:i]
					}
					switch {
					case notYetExported[name]:
					case scrapeSeries[name] && strings.Contains(q.where, "/queuewatch.json:"):
					default:
						t.Errorf("%s: %s selects no series queuewatch exports at %+v", q.where, sel, m)
					}
				}
			}
		})
	}
}

// TestMetricsExist checks that every metric a dashboard or an alert rule
// names is one queuewatch really exports at the default settings, and that
// the families the dashboards are about are all charted, so renaming a
// metric breaks the build rather than a dashboard or an alert.
func TestMetricsExist(t *testing.T) {
	snaps := pollDemo(t)
	if k := kafkaSnap(snaps); k == nil || len(k.DLQs) == 0 {
		t.Fatalf("the demo's snapshot has no DLQs: queuewatch_dlq_* must come from its Kafka DLQ topics")
	}
	exported := map[string]bool{}
	for _, ls := range exportedSeries(t, snaps, config.Default().Metrics) {
		exported[ls.Get(model.MetricNameLabel)] = true
	}
	var queries []query
	for file, d := range dashboards(t) {
		if strings.HasPrefix(file, dashboardDir+"/") {
			queries = append(queries, dashboardQueries(t, file, d)...)
		}
	}
	queries = append(queries, ruleExprs(t, config.Default().Metrics)...)

	used := map[string]bool{}
	for _, q := range queries {
		for _, name := range metricNames(t, q.expr) {
			used[name] = true
			switch {
			case exported[name]:
			case notYetExported[name]:
			case scrapeSeries[name] && strings.Contains(q.where, "/queuewatch.json:"):
			default:
				t.Errorf("%s uses %s, which queuewatch does not export", q.where, name)
			}
		}
	}
	for name := range notYetExported {
		if exported[name] {
			t.Errorf("%s is exported now: remove it from notYetExported", name)
		}
		if !used[name] {
			t.Errorf("%s is allowed in notYetExported but nothing uses it: remove it", name)
		}
	}
	// The families the dashboards are about must all be charted somewhere.
	for _, name := range []string{
		"queuewatch_kafka_consumergroup_lag", "queuewatch_kafka_consumergroup_topic_lag_seconds",
		"queuewatch_kafka_consumergroup_topic_lag", "queuewatch_kafka_consumergroup_status",
		"queuewatch_kafka_consumergroup_catchup_eta_seconds", "queuewatch_dlq_messages",
		"queuewatch_dlq_oldest_message_age_seconds", "queuewatch_collector_up",
		"queuewatch_collector_duration_seconds_bucket", "queuewatch_collector_errors_total",
		"queuewatch_nats_consumer_pending_messages", "queuewatch_nats_consumer_ack_pending_messages",
		"queuewatch_nats_consumer_lag_seconds", "queuewatch_nats_consumer_status",
		"queuewatch_nats_consumer_waiting_pulls", "queuewatch_nats_stream_messages",
		"queuewatch_sqs_queue_messages", "queuewatch_sqs_queue_status", "queuewatch_sqs_api_requests_total",
		"queuewatch_kinesis_application_status", "queuewatch_kinesis_shard_lag_seconds", "queuewatch_kinesis_api_requests_total",
		"queuewatch_kafka_sharegroup_lag", "queuewatch_kafka_sharegroup_members", "queuewatch_kafka_sharegroup_status",
	} {
		if !used[name] {
			t.Errorf("no dashboard or rule uses %s", name)
		}
	}
	if t.Failed() {
		t.Logf("the demo exports: %v", keys(exported))
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
