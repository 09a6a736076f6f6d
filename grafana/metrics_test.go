package grafana

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

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
}

// scrapeSeries are the series Prometheus itself records for every scrape of
// a target, which the queuewatch dashboard charts next to queuewatch's own.
// They never appear in /metrics.
var scrapeSeries = map[string]bool{
	"up":                      true,
	"scrape_duration_seconds": true,
	"scrape_samples_scraped":  true,
}

// rabbitSource is a RabbitMQ source with one fixed queue. The demo has only
// Kafka, so it stands in for collectors/rabbitmq (which needs a live broker)
// to make the real collector export the rabbitmq_queue_* families. It has
// no DLQs: queuewatch_dlq_* must come from the demo's Kafka DLQ topics.
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
	}, nil
}

// exportedNames starts the demo, polls it with the real Kafka collector
// (plus rabbitSource) and returns every series name of the resulting
// /metrics, histogram series included.
func exportedNames(t *testing.T) map[string]bool {
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
	// One evaluator per cluster, as alerts.Evaluator requires.
	evaluators := map[string]*alerts.Evaluator{
		"demo":   alerts.NewEvaluator(alerts.StatusOptions{}),
		"rabbit": alerts.NewEvaluator(alerts.StatusOptions{}),
		"nats":   alerts.NewEvaluator(alerts.StatusOptions{}),
	}
	// A generous poll deadline: under -race on a busy machine a 1s poll can
	// run out before the record timestamps (lag seconds, DLQ age) arrive.
	c := collectors.New([]collectors.Source{src, rabbitSource{}, natsSrc}, collectors.Options{
		Interval: 10 * time.Second,
		Evaluate: func(recent []*queue.Snapshot, latest *queue.Snapshot) {
			evaluators[latest.Cluster].Evaluate(recent, latest)
		},
	})
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	// Poll until the families that need history (the ETA needs two polls
	// that both saw the group) are there: on a slow machine the demo's
	// groups may only appear at the second poll.
	var families []*dto.MetricFamily
	for range 10 {
		c.PollOnce(ctx)
		if families, err = reg.Gather(); err != nil {
			t.Fatal(err)
		}
		if hasFamily(families, "queuewatch_kafka_consumergroup_catchup_eta_seconds") &&
			hasFamily(families, "queuewatch_dlq_messages") &&
			hasFamily(families, "queuewatch_dlq_oldest_message_age_seconds") &&
			hasFamily(families, "queuewatch_nats_consumer_lag_seconds") {
			break
		}
		time.Sleep(200 * time.Millisecond) // let the demo move between polls
	}
	for _, s := range c.Statuses() {
		if !s.Up {
			t.Fatalf("source %s/%s did not poll: %+v", s.Broker, s.Cluster, s)
		}
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM:
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				names[f.GetName()+suffix] = true
			}
		case dto.MetricType_SUMMARY:
			for _, suffix := range []string{"_sum", "_count"} {
				names[f.GetName()+suffix] = true
			}
		}
	}
	return names
}

// TestMetricsExist checks that every metric a dashboard or an alert rule
// names is one queuewatch really exports, so renaming a metric breaks the
// build rather than a dashboard or an alert.
func TestMetricsExist(t *testing.T) {
	exported := exportedNames(t)
	var queries []query
	for file, d := range dashboards(t) {
		queries = append(queries, dashboardQueries(t, file, d)...)
	}
	queries = append(queries, ruleExprs(t)...)

	used := map[string]bool{}
	for _, q := range queries {
		for _, name := range metricNames(t, q.expr) {
			used[name] = true
			switch {
			case exported[name]:
			case notYetExported[name]:
			case scrapeSeries[name] && strings.HasPrefix(q.where, "queuewatch.json"):
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
		"queuewatch_kafka_consumergroup_lag", "queuewatch_kafka_consumergroup_lag_seconds",
		"queuewatch_kafka_consumergroup_topic_lag", "queuewatch_kafka_consumergroup_status",
		"queuewatch_kafka_consumergroup_catchup_eta_seconds", "queuewatch_dlq_messages",
		"queuewatch_dlq_oldest_message_age_seconds", "queuewatch_collector_up",
		"queuewatch_collector_duration_seconds_bucket", "queuewatch_collector_errors_total",
		"queuewatch_nats_consumer_pending_messages", "queuewatch_nats_consumer_ack_pending_messages",
		"queuewatch_nats_consumer_lag_seconds", "queuewatch_nats_consumer_status",
		"queuewatch_nats_consumer_waiting_pulls", "queuewatch_nats_stream_messages",
	} {
		if !used[name] {
			t.Errorf("no dashboard or rule uses %s", name)
		}
	}
	if t.Failed() {
		t.Logf("the demo exports: %v", keys(exported))
	}
}

func hasFamily(families []*dto.MetricFamily, name string) bool {
	return slices.ContainsFunc(families, func(f *dto.MetricFamily) bool { return f.GetName() == name })
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
