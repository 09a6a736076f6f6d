package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/queuewatch/queuewatch/config"
)

// dlqSel selects the DLQs of the dashboard's variables.
const dlqSel = `broker=~"$broker", cluster=~"$cluster", dlq=~"$dlq"`

// deadLetterQueues is the "Dead-letter queues" dashboard: depth, age,
// inflow and replays of every DLQ, by broker and by source.
func deadLetterQueues(config.Metrics) *dashboard.DashboardBuilder {
	return newDashboard(UIDDLQ, "Dead-letter queues",
		"Depth, age, inflow and replays of the Kafka and RabbitMQ dead-letter queues queuewatch watches. Click a series to browse and replay the DLQ in queuewatch.").
		WithVariable(urlVariable()).
		WithVariable(labelVariable("broker", "Broker", `label_values(queuewatch_dlq_messages, broker)`,
			"kafka or rabbitmq.")).
		WithVariable(labelVariable("cluster", "Cluster", `label_values(queuewatch_dlq_messages{broker=~"$broker"}, cluster)`,
			"Clusters of the selected brokers.")).
		WithVariable(labelVariable("dlq", "DLQ", `label_values(queuewatch_dlq_messages{broker=~"$broker", cluster=~"$cluster"}, dlq)`,
			"Dead-letter topics and queues.")).
		WithPanel(stat.NewPanelBuilder().
			Title("Dead letters").
			Description("Messages waiting in the selected DLQs: neither replayed nor deleted.").
			Datasource(datasource()).
			ReduceOptions(lastValue()).
			WithTarget(instantQuery("A", `sum(queuewatch_dlq_messages{`+dlqSel+`})`, "dead letters")).
			Unit("short").
			NoValue("0").
			ColorMode(common.BigValueColorModeBackground).
			Thresholds(thresholds(colorOK, step(1, colorWarn))).
			Height(5).Span(6)).
		WithPanel(stat.NewPanelBuilder().
			Title("DLQs with messages").
			Description("How many of the selected DLQs are not empty; each one fires QueuewatchDLQNotEmpty.").
			Datasource(datasource()).
			ReduceOptions(lastValue()).
			WithTarget(instantQuery("A", `count(queuewatch_dlq_messages{`+dlqSel+`} > 0)`, "non-empty DLQs")).
			Unit("short").
			NoValue("0").
			ColorMode(common.BigValueColorModeBackground).
			Thresholds(thresholds(colorOK, step(1, colorWarn))).
			Height(5).Span(6)).
		WithPanel(stat.NewPanelBuilder().
			Title("Oldest dead letter").
			Description("Age of the oldest message over the selected DLQs. Old dead letters risk deletion by retention or TTL.").
			Datasource(datasource()).
			ReduceOptions(lastValue()).
			WithTarget(instantQuery("A", `max(queuewatch_dlq_oldest_message_age_seconds{`+dlqSel+`})`, "oldest")).
			Unit("s").
			NoValue("none").
			ColorMode(common.BigValueColorModeBackground).
			Thresholds(thresholds(colorOK, step(3600, colorWarn))).
			Height(5).Span(6)).
		WithPanel(stat.NewPanelBuilder().
			Title("New dead letters, last hour").
			Description("Messages that arrived in the selected DLQs over the last hour, from the depth's growth (replays and deletions are not subtracted from it).").
			Datasource(datasource()).
			ReduceOptions(lastValue()).
			WithTarget(instantQuery("A", `sum(clamp_min(delta(queuewatch_dlq_messages{`+dlqSel+`}[1h]), 0))`, "inflow")).
			Unit("short").
			Decimals(0).
			NoValue("0").
			ColorMode(common.BigValueColorModeBackground).
			Thresholds(thresholds(colorOK, step(1, colorBad))).
			Height(5).Span(6)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Depth").
			Description("Messages in each DLQ over time. Steps down are replays or deletions.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `sum by (broker, cluster, vhost, dlq) (queuewatch_dlq_messages{`+dlqSel+`})`, "{{broker}} {{cluster}} {{dlq}}")).
			Unit("short").
			Min(0).
			DataLinks(link("Browse DLQ in queuewatch", dlqPath)).
			Height(9).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Inflow").
			Description("Dead letters arriving per minute: the positive part of the depth's derivative. Sustained inflow fires QueuewatchDLQGrowing.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `sum by (broker, cluster, vhost, dlq) (clamp_min(deriv(queuewatch_dlq_messages{`+dlqSel+`}[$__rate_interval]), 0)) * 60`, "{{broker}} {{cluster}} {{dlq}}")).
			Unit("cpm").
			Min(0).
			DataLinks(link("Browse DLQ in queuewatch", dlqPath)).
			Height(9).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Oldest message age").
			Description("Age of the oldest message in each DLQ. It grows steadily while nobody handles the DLQ; over dlq_age_high it fires QueuewatchDLQMessagesOld.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `max by (broker, cluster, vhost, dlq) (queuewatch_dlq_oldest_message_age_seconds{`+dlqSel+`})`, "{{broker}} {{cluster}} {{dlq}}")).
			Unit("s").
			Min(0).
			DataLinks(link("Browse DLQ in queuewatch", dlqPath)).
			Height(9).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Replays").
			Description("Messages replayed from each DLQ per second, by result: ok (republished and confirmed), failed (left in the DLQ), skipped (over dlq.max_replays).").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `sum by (broker, cluster, vhost, dlq, result) (rate(queuewatch_dlq_replayed_messages_total{`+dlqSel+`}[$__rate_interval]))`, "{{dlq}} {{result}}")).
			Unit("ops").
			Min(0).
			OverrideByRegexp(".* ok$", []dashboard.DynamicConfigValue{{Id: "color", Value: map[string]any{"mode": "fixed", "fixedColor": colorOK}}}).
			OverrideByRegexp(".* failed$", []dashboard.DynamicConfigValue{{Id: "color", Value: map[string]any{"mode": "fixed", "fixedColor": colorBad}}}).
			OverrideByRegexp(".* skipped$", []dashboard.DynamicConfigValue{{Id: "color", Value: map[string]any{"mode": "fixed", "fixedColor": colorError}}}).
			DataLinks(link("Browse DLQ in queuewatch", dlqPath)).
			Height(9).Span(12)).
		WithPanel(bargauge.NewPanelBuilder().
			Title("By source").
			Description("Dead letters by the queue or topic they came from.").
			Datasource(datasource()).
			ReduceOptions(lastValue()).
			WithTarget(instantQuery("A", `sort_desc(sum by (broker, source) (queuewatch_dlq_messages{`+dlqSel+`}))`, "{{broker}} {{source}}")).
			Unit("short").
			Min(0).
			Orientation(common.VizOrientationHorizontal).
			DisplayMode(common.BarGaugeDisplayModeGradient).
			Thresholds(thresholds(colorWarn)).
			Height(8).Span(12)).
		WithPanel(bargauge.NewPanelBuilder().
			Title("By broker").
			Description("Dead letters by broker and cluster.").
			Datasource(datasource()).
			ReduceOptions(lastValue()).
			WithTarget(instantQuery("A", `sort_desc(sum by (broker, cluster) (queuewatch_dlq_messages{`+dlqSel+`}))`, "{{broker}} {{cluster}}")).
			Unit("short").
			Min(0).
			Orientation(common.VizOrientationHorizontal).
			DisplayMode(common.BarGaugeDisplayModeGradient).
			Thresholds(thresholds(colorWarn)).
			Height(8).Span(12)).
		WithPanel(table.NewPanelBuilder().
			Title("Dead-letter queues").
			Description("Every selected DLQ with its depth. Click a row to browse its messages and replay them in queuewatch.").
			Datasource(datasource()).
			WithTarget(tableQuery("A", `sort_desc(queuewatch_dlq_messages{`+dlqSel+`})`)).
			Unit("short").
			DataLinks(link("Browse DLQ in queuewatch", dlqRowPath)).
			WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
				"excludeByName": map[string]any{"Time": true, "__name__": true, "instance": true, "job": true},
				"renameByName":  map[string]any{"Value": "messages"},
			}}).
			Height(9).Span(24))
}
