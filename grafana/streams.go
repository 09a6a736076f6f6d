package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// streamsSel selects the streams groups of the row's variables, the row's
// own as the share groups' are.
const streamsSel = `cluster=~"$streams_cluster", group=~"$streams_group"`

// streamsStatusExpr is each streams group's status as its severity rank.
var streamsStatusExpr = statusExpr("queuewatch_kafka_streamsgroup_status", streamsSel, "cluster", "group")

// streamsPath is a streams group's page in the UI, from a series' labels.
var streamsPath = "/kafka/" + linkVar("__field.labels.", "cluster") + "/streams-groups/" + linkVar("__field.labels.", "group")

// withStreamsGroups adds the "Kafka Streams groups" row (KIP-1071) to a
// dashboard: each streams group's status, lag and active tasks.
func withStreamsGroups(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithVariable(labelVariable("streams_cluster", "Streams group cluster", `label_values(queuewatch_kafka_streamsgroup_status, cluster)`,
			"Kafka clusters with streams groups.")).
		WithVariable(labelVariable("streams_group", "Streams group", `label_values(queuewatch_kafka_streamsgroup_status{cluster=~"$streams_cluster"}, group)`,
			"Streams groups of the selected clusters.")).
		WithRow(dashboard.NewRowBuilder("Kafka Streams groups")).
		WithPanel(statetimeline.NewPanelBuilder().
			Title("Streams group status").
			Description("Status of each Kafka Streams application's group (group.protocol=streams), from least to most severe: ● ok, ▲ warn (lag rising while offsets are committed, or not settled for two polls), ? error (group could not be read), ■ stall (members present, lag growing, no committed offset moved), ■ stop (no members, records waiting).").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", streamsStatusExpr, "{{cluster}}/{{group}}")).
			Mappings(statusMappings()).
			ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor(colorError)).
			ShowValue(common.VisibilityModeNever).
			MergeValues(true).
			DataLinks(link("Open streams group in queuewatch", streamsPath)).
			Height(6).Span(24)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Streams group lag").
			Description("Records each streams group has yet to process: end offset − committed offset, summed over the partitions of its source topics, repartition topics included (internal=\"true\": records waiting between the application's own subtopologies).").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `sum by (cluster, group) (queuewatch_kafka_streamsgroup_lag{`+streamsSel+`})`, "{{cluster}}/{{group}}")).
			Unit("short").
			Min(0).
			Decimals(0).
			DataLinks(link("Open streams group in queuewatch", streamsPath)).
			Height(8).Span(16)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Streams group active tasks").
			Description("Active tasks assigned to each streams group's members: one per partition of each subtopology while the application runs, 0 when it stopped.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_kafka_streamsgroup_tasks{kind="active", `+streamsSel+`}`, "{{cluster}}/{{group}}")).
			Unit("short").
			Min(0).
			Decimals(0).
			DataLinks(link("Open streams group in queuewatch", streamsPath)).
			Height(8).Span(8))
}
