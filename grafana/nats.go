package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/queuewatch/queuewatch/config"
)

// UIDNATS is the NATS JetStream dashboard's UID.
const UIDNATS = "queuewatch-nats"

// Selectors of the NATS dashboard's variables.
const (
	natsStreamSel   = `cluster=~"$cluster", stream=~"$stream"`
	natsConsumerSel = `cluster=~"$cluster", stream=~"$stream", consumer=~"$consumer"`
)

// Links to a consumer's queuewatch page from its series' labels.
var consumerPath = "/nats/" + linkVar("__field.labels.", "cluster") + "/streams/" +
	linkVar("__field.labels.", "stream") + "/consumers/" + linkVar("__field.labels.", "consumer")

// natsStatusExpr is each JetStream consumer's status as its severity rank.
var natsStatusExpr = statusExpr("queuewatch_nats_consumer_status", natsConsumerSel, "cluster", "stream", "consumer")

// natsJetStream is the "NATS JetStream" dashboard: consumer status, pending
// and in-flight messages, lag seconds and the streams' size.
func natsJetStream(config.Metrics) *dashboard.DashboardBuilder {
	const open = "Open consumer in queuewatch"
	return newDashboard(UIDNATS, "NATS JetStream",
		"JetStream consumer backlog, in-flight messages, lag seconds and status, and stream size, as exported by queuewatch. Click a series to open the consumer in queuewatch.").
		WithVariable(urlVariable()).
		WithVariable(labelVariable("cluster", "Cluster", `label_values(queuewatch_nats_stream_messages, cluster)`,
			"NATS clusters queuewatch watches.")).
		WithVariable(labelVariable("stream", "Stream", `label_values(queuewatch_nats_stream_messages{cluster=~"$cluster"}, stream)`,
			"Streams of the selected clusters.")).
		WithVariable(labelVariable("consumer", "Consumer", `label_values(queuewatch_nats_consumer_status{`+natsStreamSel+`}, consumer)`,
			"Durable consumers of the selected streams.")).
		WithPanel(statetimeline.NewPanelBuilder().
			Title("Consumer status").
			Description("Status queuewatch evaluates, from least to most severe: ● ok, ▲ warn (pending rising over the window), ? error (consumer could not be read), ■ stall (max_ack_pending reached, nobody pulling, or delivered sequence outside the stream), ■ stop (push consumer without a subscriber).").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", natsStatusExpr, "{{cluster}}/{{stream}}/{{consumer}}")).
			Mappings(statusMappings()).
			ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor(colorError)).
			ShowValue(common.VisibilityModeNever).
			MergeValues(true).
			DataLinks(link(open, consumerPath)).
			Height(8).Span(24)).
		WithPanel(bargauge.NewPanelBuilder().
			Title("Top 10 consumers by pending").
			Description("The ten consumers with the most messages not yet delivered to them (num_pending).").
			Datasource(datasource()).
			ReduceOptions(lastValue()).
			WithTarget(instantQuery("A", `topk(10, queuewatch_nats_consumer_pending_messages{`+natsConsumerSel+`})`, "{{cluster}}/{{stream}}/{{consumer}}")).
			Unit("short").
			Min(0).
			Orientation(common.VizOrientationHorizontal).
			DisplayMode(common.BarGaugeDisplayModeGradient).
			Thresholds(thresholds(colorOK, step(1000, colorWarn), step(10000, colorBad))).
			DataLinks(link(open, consumerPath)).
			Height(8).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Lag seconds").
			Description("Age of the next message each consumer has not been delivered: how late data reaches it. 0 when nothing is pending.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_nats_consumer_lag_seconds{`+natsConsumerSel+`}`, "{{stream}}/{{consumer}}")).
			Unit("s").
			Min(0).
			DataLinks(link(open, consumerPath)).
			Height(8).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Pending").
			Description("Messages matching each consumer's filter not yet delivered to it (num_pending). Rising steadily means the consumer is slower than the publishers.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_nats_consumer_pending_messages{`+natsConsumerSel+`}`, "{{stream}}/{{consumer}}")).
			Unit("short").
			Min(0).
			DataLinks(link(open, consumerPath)).
			Height(9).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("In flight and max_ack_pending").
			Description("Delivered, unacknowledged messages (solid) against each consumer's max_ack_pending (dashed). When they meet, the server delivers nothing more until some are acked: a stall.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_nats_consumer_ack_pending_messages{`+natsConsumerSel+`}`, "in flight {{stream}}/{{consumer}}")).
			WithTarget(rangeQuery("B", `queuewatch_nats_consumer_max_ack_pending{`+natsConsumerSel+`}`, "max {{stream}}/{{consumer}}")).
			Unit("short").
			Min(0).
			OverrideByQuery("B", []dashboard.DynamicConfigValue{{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}}}).
			DataLinks(link(open, consumerPath)).
			Height(9).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Waiting pulls and redeliveries").
			Description("Pull requests waiting for messages (num_waiting; 0 with pending messages means nobody pulls) and unacknowledged messages delivered more than once (num_redelivered).").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_nats_consumer_waiting_pulls{`+natsConsumerSel+`}`, "waiting {{stream}}/{{consumer}}")).
			WithTarget(rangeQuery("B", `queuewatch_nats_consumer_redelivered_messages{`+natsConsumerSel+`}`, "redelivered {{stream}}/{{consumer}}")).
			Unit("short").
			Min(0).
			Decimals(0).
			DataLinks(link(open, consumerPath)).
			Height(9).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Stream size").
			Description("Messages stored in each stream (left) and bytes (right), as its leader reports them.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_nats_stream_messages{`+natsStreamSel+`}`, "messages {{stream}}")).
			WithTarget(rangeQuery("B", `queuewatch_nats_stream_bytes{`+natsStreamSel+`}`, "bytes {{stream}}")).
			Unit("short").
			Min(0).
			OverrideByQuery("B", []dashboard.DynamicConfigValue{{Id: "unit", Value: "bytes"}, {Id: "custom.axisPlacement", Value: "right"}}).
			Height(9).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Stream publish rate").
			Description("Messages per second stored in each stream: the rate of its last sequence.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `rate(queuewatch_nats_stream_last_sequence{`+natsStreamSel+`}[$__rate_interval])`, "{{stream}}")).
			Unit("ops").
			Min(0).
			Height(9).Span(24))
}
