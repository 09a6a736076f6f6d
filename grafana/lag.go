package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/queuewatch/queuewatch/config"
)

// Selectors of the consumer lag dashboard's variables.
const (
	lagGroupSel = `cluster=~"$cluster", group=~"$group"`
	lagTopicSel = `cluster=~"$cluster", group=~"$group", topic=~"$topic"`
)

// groupStatusExpr is each consumer group's status as its severity rank.
var groupStatusExpr = statusExpr("queuewatch_kafka_consumergroup_status", lagGroupSel, "cluster", "group")

// fallingBehind is the ETA from which a group is shown as falling behind:
// queuewatch exports +Inf then, and nothing real takes 30 years.
const fallingBehind = 1e9

// consumerLag is the "Consumer lag" dashboard: per-group status, lag in
// messages and seconds, catch-up ETA and the worst groups. Its panels and
// queries use only the series m exports: per-topic aggregates at the topic
// granularity, per-group ones at the group granularity, and the offset
// rates only where the opt-in offset families are on.
func consumerLag(m config.Metrics) *dashboard.DashboardBuilder {
	l := lagQueries{m}
	b := newDashboard(UIDConsumerLag, "Consumer lag",
		"Kafka consumer group lag, lag seconds, status and catch-up ETA as exported by queuewatch. Click a series to open the group in queuewatch.").
		WithVariable(urlVariable()).
		WithVariable(labelVariable("cluster", "Cluster", `label_values(queuewatch_kafka_consumergroup_status, cluster)`,
			"Kafka clusters queuewatch watches.")).
		WithVariable(labelVariable("group", "Group", `label_values(queuewatch_kafka_consumergroup_status{cluster=~"$cluster"}, group)`,
			"Consumer groups of the selected clusters."))
	if m.PerTopic() {
		b = b.WithVariable(labelVariable("topic", "Topic", `label_values(queuewatch_kafka_consumergroup_topic_lag{`+lagGroupSel+`}, topic)`,
			"Topics the selected groups consume."))
	}
	b = b.WithPanel(statetimeline.NewPanelBuilder().
		Title("Group status").
		Description("Status queuewatch evaluates over its status window, from least to most severe: ● ok (caught up or keeping up), ▲ warn (lag rising while committing), ↺ rewind (offset went backwards), ? error (group could not be read), ■ stall (members present, offset frozen), ■ stop (no members, lag > 0).").
		Datasource(datasource()).
		Legend(legend()).
		Tooltip(tooltip()).
		WithTarget(rangeQuery("A", groupStatusExpr, "{{cluster}}/{{group}}")).
		Mappings(statusMappings()).
		ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor(colorError)).
		ShowValue(common.VisibilityModeNever).
		MergeValues(true).
		DataLinks(link("Open group in queuewatch", groupPath)).
		Height(8).Span(24))
	b = b.WithPanel(bargauge.NewPanelBuilder().
		Title("Top 10 lagging groups").
		Description("The ten groups furthest behind right now: messages, summed over " + l.over() + ".").
		Datasource(datasource()).
		ReduceOptions(lastValue()).
		WithTarget(instantQuery("A", `topk(10, sum by (cluster, group) (`+l.lag()+`))`, "{{cluster}}/{{group}}")).
		Unit("short").
		Min(0).
		Orientation(common.VizOrientationHorizontal).
		DisplayMode(common.BarGaugeDisplayModeGradient).
		Thresholds(thresholds(colorOK, step(1000, colorWarn), step(10000, colorBad))).
		DataLinks(link("Open group in queuewatch", groupPath)).
		Height(8).Span(half(m.GroupDetails())))
	if m.GroupDetails() {
		b = b.WithPanel(catchUpETA())
	}
	b = b.WithPanel(lagPanel(m)).WithPanel(lagSecondsPanel(m))
	rates, hasRates := ratesPanel(m)
	if hasRates {
		b = b.WithPanel(rates.Span(half(m.PerPartition())))
	}
	if m.PerPartition() {
		b = b.WithPanel(timeseries.NewPanelBuilder().
			Title("Partition lag").
			Description("Messages behind per partition. One partition far above the others points at a hot key or at the one consumer instance that owns it.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_kafka_consumergroup_lag{`+lagTopicSel+`}`, "{{group}} {{topic}}/{{partition}}")).
			Unit("short").
			Min(0).
			DataLinks(link("Open group in queuewatch", groupPath)).
			Height(9).Span(half(hasRates)))
	}
	if m.GroupDetails() {
		b = b.WithPanel(timeseries.NewPanelBuilder().
			Title("Members").
			Description("Consumers in each group. 0 with lag means nobody consumes (status stop); a drop usually means crashed instances.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_kafka_consumergroup_members{`+lagGroupSel+`}`, "{{cluster}}/{{group}}")).
			Unit("short").
			Min(0).
			Decimals(0).
			DataLinks(link("Open group in queuewatch", groupPath)).
			Height(9).Span(24))
	}
	return b
}

// half is the width of a panel that shares its row when paired is set, and
// fills it otherwise.
func half(paired bool) uint32 {
	if paired {
		return 12
	}
	return 24
}

// lagQueries picks the lag series of m's granularity.
type lagQueries struct{ m config.Metrics }

// lag selects the lag series of the selected groups (and topics).
func (l lagQueries) lag() string {
	if l.m.PerTopic() {
		return `queuewatch_kafka_consumergroup_topic_lag{` + lagTopicSel + `}`
	}
	return `queuewatch_kafka_consumergroup_total_lag{` + lagGroupSel + `}`
}

// over says, for panel descriptions, what a group's lag is summed over.
func (l lagQueries) over() string {
	if l.m.PerTopic() {
		return "the selected topics and their partitions"
	}
	return "all its partitions"
}

func catchUpETA() *table.PanelBuilder {
	return table.NewPanelBuilder().
		Title("Catch-up ETA").
		Description("Time until each group reaches zero lag at its current consume and produce rates; \"falling behind\" when it consumes slower than producers produce. Groups without enough history have no ETA.").
		Datasource(datasource()).
		WithTarget(tableQuery("A", `sort_desc(queuewatch_kafka_consumergroup_catchup_eta_seconds{`+lagGroupSel+`})`)).
		Unit("s").
		Mappings([]dashboard.ValueMapping{{RangeMap: &dashboard.RangeMap{
			Type: dashboard.MappingTypeRangeToText,
			Options: dashboard.DashboardRangeMapOptions{
				From:   ptr(float64(fallingBehind)),
				Result: dashboard.ValueMappingResult{Text: ptr("▲ falling behind"), Color: ptr(colorWarn), Index: ptr(int32(0))},
			},
		}}}).
		DataLinks(link("Open group in queuewatch", groupRowPath)).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
			"excludeByName": map[string]any{"Time": true, "__name__": true, "instance": true, "job": true},
			"renameByName":  map[string]any{"Value": "ETA"},
		}}).
		Height(8).Span(12)
}

// lagPanel charts lag in messages per group and topic, or per group at the
// group granularity.
func lagPanel(m config.Metrics) *timeseries.PanelBuilder {
	title, desc := "Lag by topic", "Messages each group is behind on each topic: end offset minus committed offset, summed over partitions (partitions without a commit count from the log start)."
	expr, legendFmt := `sum by (cluster, group, topic) (queuewatch_kafka_consumergroup_topic_lag{`+lagTopicSel+`})`, "{{group}} {{topic}}"
	if !m.PerTopic() {
		title, desc = "Lag", "Messages each group is behind: end offset minus committed offset, summed over all its partitions (partitions without a commit count from the log start)."
		expr, legendFmt = `sum by (cluster, group) (queuewatch_kafka_consumergroup_total_lag{`+lagGroupSel+`})`, "{{cluster}}/{{group}}"
	}
	return timeseries.NewPanelBuilder().
		Title(title).
		Description(desc).
		Datasource(datasource()).
		Legend(legend()).
		Tooltip(tooltip()).
		WithTarget(rangeQuery("A", expr, legendFmt)).
		Unit("short").
		Min(0).
		DataLinks(link("Open group in queuewatch", groupPath)).
		Height(9).Span(12)
}

// lagSecondsPanel charts the worst lag seconds per group and topic, or per
// group at the group granularity.
func lagSecondsPanel(m config.Metrics) *timeseries.PanelBuilder {
	desc := "Age of the next record each group will read, worst partition per topic: how late the data reaches the consumer. 0 when caught up."
	expr, legendFmt := `max by (cluster, group, topic) (queuewatch_kafka_consumergroup_topic_lag_seconds{`+lagTopicSel+`})`, "{{group}} {{topic}}"
	if !m.PerTopic() {
		desc = "Age of the next record each group will read, worst partition: how late the data reaches the consumer. 0 when caught up."
		expr, legendFmt = `max by (cluster, group) (queuewatch_kafka_consumergroup_max_lag_seconds{`+lagGroupSel+`})`, "{{cluster}}/{{group}}"
	}
	return timeseries.NewPanelBuilder().
		Title("Lag seconds").
		Description(desc).
		Datasource(datasource()).
		Legend(legend()).
		Tooltip(tooltip()).
		WithTarget(rangeQuery("A", expr, legendFmt)).
		Unit("s").
		Min(0).
		DataLinks(link("Open group in queuewatch", groupPath)).
		Height(9).Span(12)
}

// ratesPanel charts consume and produce rates from the opt-in offset
// families: committed offsets give the consume rate, high watermarks the
// produce rate. It reports false when m exports neither.
func ratesPanel(m config.Metrics) (*timeseries.PanelBuilder, bool) {
	if !m.CommittedOffsets && !m.PartitionOffsets {
		return nil, false
	}
	sel, topicSel := lagTopicSel, `cluster=~"$cluster", topic=~"$topic"`
	if !m.PerTopic() {
		// No topic variable: every topic of the selected groups and clusters.
		sel, topicSel = lagGroupSel, `cluster=~"$cluster"`
	}
	p := timeseries.NewPanelBuilder().
		Title("Consume and produce rates").
		Description("Records per second the selected groups commit (solid) and producers append to their topics (dashed). A group whose consume rate stays below the produce rate falls behind. Needs the metrics.committed_offsets and metrics.partition_offsets families.").
		Datasource(datasource()).
		Legend(legend()).
		Tooltip(tooltip()).
		Unit("ops").
		Min(0).
		DataLinks(link("Open group in queuewatch", groupPath)).
		Height(9)
	if m.CommittedOffsets {
		p = p.WithTarget(rangeQuery("A", `sum by (cluster, group, topic) (rate(queuewatch_kafka_consumergroup_committed_offset{`+sel+`}[$__rate_interval]))`, "consumed {{group}} {{topic}}"))
	}
	if m.PartitionOffsets {
		p = p.WithTarget(rangeQuery("B", `sum by (cluster, topic) (rate(queuewatch_kafka_partition_high_watermark{`+topicSel+`}[$__rate_interval]))`, "produced {{topic}}")).
			OverrideByQuery("B", []dashboard.DynamicConfigValue{{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}}})
	}
	return p, true
}
