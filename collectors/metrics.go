package collectors

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

const ns = "queuewatch"

// family is one metric family the collector exports: its descriptor for
// Collect and what the fast text exposition needs. Almost all are gauges;
// counterDesc makes the few counters.
type family struct {
	name      string
	help      string
	valueType prometheus.ValueType
	labels    []string
	// sorted lists label indexes in name order, the order client_golang
	// writes them in; the text exposition follows it so both read the same.
	sorted []int
	desc   *prometheus.Desc
}

func desc(name, help string, labels ...string) *family {
	name = ns + "_" + name
	sorted := make([]int, len(labels))
	for i := range sorted {
		sorted[i] = i
	}
	slices.SortFunc(sorted, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	return &family{name: name, help: help, valueType: prometheus.GaugeValue, labels: labels, sorted: sorted, desc: prometheus.NewDesc(name, help, labels, nil)}
}

// counterDesc is desc for a counter: a total the snapshot carries (such as
// the requests sent to an SQS account), exported as it was at the poll.
func counterDesc(name, help string, labels ...string) *family {
	f := desc(name, help, labels...)
	f.valueType = prometheus.CounterValue
	return f
}

// typeName is the family's TYPE in the text format.
func (f *family) typeName() string {
	if f.valueType == prometheus.CounterValue {
		return "counter"
	}
	return "gauge"
}

// sink receives the collector's gauges: as const metrics for Collect, or as
// text for the cached exposition. One emitter feeds both, so they cannot
// disagree.
type sink interface {
	gauge(f *family, v float64, labelValues ...string)
}

// constSink turns gauges into const metrics, as a prometheus.Collector must.
type constSink chan<- prometheus.Metric

func (s constSink) gauge(f *family, v float64, lv ...string) {
	s <- prometheus.MustNewConstMetric(f.desc, f.valueType, v, lv...)
}

var (
	groupLabels     = []string{"cluster", "group"}
	partitionLabels = []string{"cluster", "group", "topic", "partition"}
	topicLabels     = []string{"cluster", "group", "topic"}
	queueLabels     = []string{"cluster", "vhost", "queue"}
	dlqLabels       = []string{"broker", "cluster", "vhost", "dlq", "source"}
	sourceLabels    = []string{"broker", "cluster"}
	// readerLabels name a reader of any broker, like dlqLabels a DLQ:
	// scope is its stream or vhost, empty where the cluster is enough.
	readerLabels = []string{"broker", "cluster", "scope", "reader"}

	descLag          = desc("kafka_consumergroup_lag", "Messages the group is behind on the partition: end offset minus committed offset (log start when nothing is committed yet and a member reads it).", partitionLabels...)
	descLagSeconds   = desc("kafka_consumergroup_lag_seconds", "Age in seconds of the next record the group will read on the partition; 0 when caught up.", partitionLabels...)
	descTopicLagSecs = desc("kafka_consumergroup_topic_lag_seconds", "Largest lag in seconds over the group's partitions of the topic.", topicLabels...)
	descTotalLag     = desc("kafka_consumergroup_total_lag", "Messages the group is behind, summed over all its partitions.", groupLabels...)
	descCommitted    = desc("kafka_consumergroup_committed_offset", "Offset the group committed on the partition.", partitionLabels...)
	descTopicLag     = desc("kafka_consumergroup_topic_lag", "Messages the group is behind, summed over the topic's partitions.", topicLabels...)
	descUncommitted  = desc("kafka_consumergroup_uncommitted_partitions", "Partitions of the topic on which the group has no committed offset.", topicLabels...)
	descLost         = desc("kafka_consumergroup_lost_messages", "Records the group never read because retention deleted them (committed offset below log start).", topicLabels...)
	descMaxLagSecs   = desc("kafka_consumergroup_max_lag_seconds", "Largest lag in seconds over the group's partitions.", groupLabels...)
	descMembers      = desc("kafka_consumergroup_members", "Members currently in the group.", groupLabels...)
	descInfo         = desc("kafka_consumergroup_info", "Group state, assignor and type as labels; always 1.", "cluster", "group", "state", "protocol", "group_type")
	descStatus       = statusDesc("kafka_consumergroup_status", "group", groupLabels...)
	descETA          = desc("kafka_consumergroup_catchup_eta_seconds", "Expected seconds until the group reaches zero lag at current rates; +Inf when it is falling behind.", groupLabels...)
	descHighWater    = desc("kafka_partition_high_watermark", "Offset the next record produced to the partition will get.", "cluster", "topic", "partition")
	descLogStart     = desc("kafka_partition_log_start_offset", "First offset still stored on the partition.", "cluster", "topic", "partition")
	descLastStable   = desc("kafka_partition_last_stable_offset", "End offset for read_committed consumers (first offset of an open transaction).", "cluster", "topic", "partition")
	descQueueMsgs    = desc("rabbitmq_queue_messages", "Messages in the queue by state (ready, unacked).", append(queueLabels, "state")...)
	descQueueCons    = desc("rabbitmq_queue_consumers", "Consumers attached to the queue.", queueLabels...)
	descQueueHeadAge = desc("rabbitmq_queue_head_message_age_seconds", "Age of the message at the head of the queue (from head_message_timestamp).", queueLabels...)
	descQueueStatus  = statusDesc("rabbitmq_queue_status", "RabbitMQ queue", queueLabels...)
	descQueueInfo    = desc("rabbitmq_queue_info", "Queue type and policy as labels; always 1.", append(queueLabels, "type", "policy")...)
	descDLQMsgs      = desc("dlq_messages", "Dead-letter queue depth: messages neither replayed nor removed.", dlqLabels...)
	descDLQAge       = desc("dlq_oldest_message_age_seconds", "Age of the oldest message in the dead-letter queue.", dlqLabels...)
	descUp           = desc("collector_up", "1 if the last poll of the source succeeded.", sourceLabels...)
	descLastSuccess  = desc("collector_last_success_timestamp_seconds", "Unix time of the last successful poll of the source.", sourceLabels...)
	descPartial      = desc("collector_partial_errors", "Parts (groups, vhosts) the last successful poll could not read.", sourceLabels...)
	descHeadroom     = desc("reader_retention_headroom_seconds", "Seconds until the broker deletes the oldest message the reader has not read (retention, TTL, max age; projected from the trend for size and count limits); absent where retention is infinite or unknown, for readers with no backlog and beyond a day.", readerLabels...)
	descStandby      = desc("collector_standby", "1 while another replica holds the source's poll lease and exports its series; this replica serves its snapshot.", sourceLabels...)
)

// statusDesc is the status family of one kind of reader (a Kafka group, a
// JetStream consumer, an outbox table, a replication slot), named by the
// identity labels: they and a last label, status.
//
// Every broker exports a reader's status in one shape, emitted by
// emitStatus: one series per reader, whose status label is its effective
// status and whose value is always 1. Not the six-series stateset (one
// series per status, 1 or 0): a status matcher, with or without "== 1",
// selects the same readers from either, while the stateset's five zeros
// per reader say nothing and cost five series each, 2,500 at 500 groups,
// on clusters where the lag families are already sized to the series
// budget. When a reader's status changes its old series goes stale and the
// new one appears; the alert rules and the Grafana status expression only
// ever select the current one.
func statusDesc(name, reader string, identity ...string) *family {
	help := "Evaluated " + reader + " status, one of " + statusNames() + " (least to most severe), as a label; always 1."
	return desc(name, help, append(slices.Clip(identity), "status")...)
}

// statusNames lists queue.Statuses in severity order, for help texts.
func statusNames() string {
	names := make([]string, len(queue.Statuses))
	for i, st := range queue.Statuses {
		names[i] = string(st)
	}
	return strings.Join(names, ", ")
}

// emitStatus emits a reader's status series (see statusDesc): st is its
// effective status, identity its label values in f's order.
func emitStatus(ch sink, f *family, st queue.Status, identity ...string) {
	ch.gauge(f, 1, append(identity, string(st))...)
}

// HeadroomHorizon is the longest retention headroom exported: a reader
// further from losing anything has no series. Every lagging reader on a
// topic with Kafka's default week of retention would otherwise have one:
// 16,667 more series on the million-group-partition workload, which took
// queuewatch from 0.999× to 1.01× kminion's series (docs/performance.md),
// to say that nothing is lost this week. A day is far above any threshold
// an alert uses (config: alerts.retention_headroom_low is at most half of
// it) and still charts the approach to it.
const HeadroomHorizon = 24 * time.Hour

// emitHeadroom emits a reader's retention headroom when it is known,
// within HeadroomHorizon and at risk (queue.Headroom.AtRisk): a reader
// with no backlog, on a broker that keeps messages forever, a day or more
// from losing any, or keeping well inside an age limit (a few seconds
// behind on max_age 1h) has no series, so QueuewatchDataLossImminent
// never pages for it.
func emitHeadroom(ch sink, h queue.Headroom, broker queue.Broker, cluster, scope, reader string) {
	if h.Below(HeadroomHorizon) && h.AtRisk() {
		ch.gauge(descHeadroom, h.Seconds, string(broker), cluster, scope, reader)
	}
}

// metrics holds the self-metrics that need state across polls.
type metrics struct {
	duration *prometheus.HistogramVec
	errors   *prometheus.CounterVec
}

func newMetrics() *metrics {
	return &metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Name: "collector_duration_seconds",
			Help:    "How long polls of the source took, failed ones included.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, sourceLabels),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "collector_errors_total", Help: "Polls of the source that failed.",
		}, sourceLabels),
	}
}

func (m *metrics) observe(s Source, took time.Duration, err error) {
	b, c := string(s.Broker()), s.Cluster()
	m.duration.WithLabelValues(b, c).Observe(took.Seconds())
	e := m.errors.WithLabelValues(b, c) // created at zero so the series exists before the first error
	if err != nil {
		e.Inc()
	}
}

// Describe sends every descriptor the collector can emit.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range []*family{
		descLag, descLagSeconds, descTopicLagSecs, descTotalLag, descCommitted, descTopicLag, descUncommitted, descLost,
		descMaxLagSecs, descMembers, descInfo, descStatus, descETA, descHighWater, descLogStart,
		descLastStable, descQueueMsgs, descQueueCons, descQueueHeadAge, descQueueInfo, descQueueStatus,
		descDLQMsgs, descDLQAge, descUp, descLastSuccess, descPartial, descStandby, descHeadroom,
	} {
		ch <- f.desc
	}
	for _, f := range outboxFamilies {
		ch <- f.desc
	}
	for _, f := range natsFamilies {
		ch <- f.desc
	}
	describeSQS(ch)
	describeKinesis(ch)
	describePubSub(ch)
	describeShare(ch)
	describeStreams(ch)
	describeConnect(ch)
	c.metrics.duration.Describe(ch)
	c.metrics.errors.Describe(ch)
}

// Collect builds constant metrics from the latest snapshot of every source.
// It never talks to a broker.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.emit(constSink(ch))
	c.metrics.duration.Collect(ch)
	c.metrics.errors.Collect(ch)
}

// emit sends every gauge derived from the sources' state and snapshots.
func (c *Collector) emit(ch sink) {
	for _, s := range c.sources {
		st := s.status()
		b, cl := string(st.Broker), st.Cluster
		if polledBy(s.src) != "" {
			// Another replica polls this source and exports it: a series
			// here too would page twice and double every sum.
			ch.gauge(descStandby, 1, b, cl)
			continue
		}
		ch.gauge(descUp, boolf(st.Up), b, cl)
		if !st.LastSuccess.IsZero() {
			ch.gauge(descLastSuccess, float64(st.LastSuccess.UnixNano())/1e9, b, cl)
		}
		snap := s.latestSnapshot()
		if snap == nil {
			continue
		}
		ch.gauge(descPartial, float64(len(snap.Partial)), b, cl)
		collectKafka(ch, snap, c.opts.Metrics)
		collectRabbitMQ(ch, snap)
		collectNATS(ch, snap)
		collectSQS(ch, snap)
		collectKinesis(ch, snap)
		collectPubSub(ch, snap)
		collectShare(ch, snap)
		collectStreams(ch, snap)
		collectConnect(ch, snap)
		collectDLQs(ch, snap)
		collectOutbox(ch, snap)
	}
}

// collectKafka emits the Kafka families that m selects (config.Metrics
// says which exist at each granularity). A group's status is one series,
// the current status, as every reader's is (statusDesc).
func collectKafka(ch sink, snap *queue.Snapshot, m config.Metrics) {
	cl := snap.Cluster
	if m.PartitionOffsets {
		for _, p := range snap.Partitions {
			part := strconv.Itoa(int(p.Partition))
			ch.gauge(descHighWater, float64(p.End), cl, p.Topic, part)
			ch.gauge(descLogStart, float64(p.LogStart), cl, p.Topic, part)
			ch.gauge(descLastStable, float64(p.LastStable), cl, p.Topic, part)
		}
	}
	for i := range snap.Groups {
		g := &snap.Groups[i]
		emitStatus(ch, descStatus, g.EffectiveStatus(), cl, g.Name)
		emitHeadroom(ch, g.Headroom, snap.Broker, cl, "", g.Name)
		if m.GroupDetails() {
			collectGroupDetails(ch, cl, g)
		}
		if len(g.Partitions) == 0 {
			continue
		}
		if m.Granularity == config.GranularityGroup {
			ch.gauge(descTotalLag, float64(g.TotalLag()), cl, g.Name)
		}
		if m.PerTopic() || m.CommitGaps {
			collectTopics(ch, cl, g, m)
		}
		collectPartitions(ch, cl, g, m)
	}
}

// collectGroupDetails emits what the group granularity adds to the status:
// members, info, catch-up ETA and max lag seconds.
//
// The ETA is a consuming group's: a group without members reads nothing,
// its status (stop) already says so, and its ETA would only be +Inf, or 0
// with no lag. At a million group-partitions most groups are such leftovers,
// and their ETAs cost a series each for nothing (docs/performance.md).
func collectGroupDetails(ch sink, cl string, g *queue.ConsumerGroup) {
	ch.gauge(descMembers, float64(g.Members), cl, g.Name)
	ch.gauge(descInfo, 1, cl, g.Name, g.State, g.Protocol, string(g.Type))
	if g.ETA.Known && g.Members > 0 {
		eta := g.ETA.In.Seconds()
		if g.ETA.FallingBehind {
			eta = math.Inf(1)
		}
		ch.gauge(descETA, eta, cl, g.Name)
	}
	if len(g.Partitions) > 0 && !g.LagSecondsPending() { // unknown, not 0, until read
		ch.gauge(descMaxLagSecs, g.MaxLagSeconds(), cl, g.Name)
	}
}

func collectTopics(ch sink, cl string, g *queue.ConsumerGroup, m config.Metrics) {
	for _, t := range g.Topics() {
		if m.PerTopic() {
			ch.gauge(descTopicLag, float64(t.Lag), cl, g.Name, t.Topic)
			if !t.LagSecondsPending {
				ch.gauge(descTopicLagSecs, t.MaxLagSeconds, cl, g.Name, t.Topic)
			}
		}
		if m.CommitGaps {
			ch.gauge(descUncommitted, float64(t.Uncommitted), cl, g.Name, t.Topic)
			ch.gauge(descLost, float64(t.Lost), cl, g.Name, t.Topic)
		}
	}
}

func collectPartitions(ch sink, cl string, g *queue.ConsumerGroup, m config.Metrics) {
	if !m.PerPartition() && !m.PartitionLagSeconds && !m.CommittedOffsets {
		return
	}
	for _, p := range g.Partitions {
		if !readsPartition(&p) {
			continue
		}
		part := strconv.Itoa(int(p.Partition))
		if m.PerPartition() {
			ch.gauge(descLag, float64(p.Lag), cl, g.Name, p.Topic, part)
		}
		if m.PartitionLagSeconds && !p.LagSecondsPending {
			ch.gauge(descLagSeconds, p.LagSeconds, cl, g.Name, p.Topic, part)
		}
		if m.CommittedOffsets && p.HasCommit {
			ch.gauge(descCommitted, float64(p.Committed), cl, g.Name, p.Topic, part)
		}
	}
}

// readsPartition reports whether a partition of a consumed topic gets
// per-partition series: the group committed on it, or a member is assigned
// to it. A partition the group never committed and nobody reads has no lag
// of its own: kafka-consumer-groups.sh shows its LAG as "-", and where the
// group starts reading it depends on the client's auto.offset.reset (the
// Java default, latest, skips the records end − log start would count). Its
// records still count in the topic and total lag, and commit_gaps counts the
// partition. A series for it was 5% of the lag family on the kminion
// benchmark's workload, and its value wrong for most consumers.
func readsPartition(p *queue.PartitionLag) bool {
	return p.HasCommit || p.Member != ""
}

func collectRabbitMQ(ch sink, snap *queue.Snapshot) {
	for i := range snap.Queues {
		q := &snap.Queues[i]
		l := []string{snap.Cluster, q.VHost, q.Name}
		ch.gauge(descQueueMsgs, float64(q.Ready), append(l, "ready")...)
		ch.gauge(descQueueMsgs, float64(q.Unacked), append(l, "unacked")...)
		ch.gauge(descQueueCons, float64(q.Consumers), l...)
		ch.gauge(descQueueInfo, 1, append(l, q.Type, q.Policy)...)
		emitStatus(ch, descQueueStatus, q.EffectiveStatus(), l...)
		if q.HasHeadAge {
			ch.gauge(descQueueHeadAge, q.HeadMessageAge.Seconds(), l...)
		}
		emitHeadroom(ch, q.RetentionHeadroom(), snap.Broker, snap.Cluster, q.VHost, q.Name)
	}
}

func collectDLQs(ch sink, snap *queue.Snapshot) {
	for i := range snap.DLQs {
		d := &snap.DLQs[i]
		l := []string{string(d.Broker), d.Cluster, d.VHost, d.Name, d.Source()}
		ch.gauge(descDLQMsgs, float64(d.Messages), l...)
		if d.HasOldestAge {
			ch.gauge(descDLQAge, d.OldestAge.Seconds(), l...)
		}
	}
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
