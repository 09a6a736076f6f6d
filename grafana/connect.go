package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// connectSel selects the connectors of the row's variables.
const connectSel = `cluster=~"$connect_cluster", connect=~"$connect"`

// connectStatusExpr is each connector's status as its severity rank.
var connectStatusExpr = statusExpr("queuewatch_kafka_connector_status", connectSel, "cluster", "connect", "connector")

// connectorPath is a connector's page in the UI, from a series' labels.
var connectorPath = "/kafka/" + linkVar("__field.labels.", "cluster") + "/connect/" + linkVar("__field.labels.", "connect") +
	"/connectors/" + linkVar("__field.labels.", "connector")

// withConnectors adds the "Kafka Connect connectors" row to a dashboard:
// each connector's status and its tasks that do not run.
func withConnectors(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithVariable(labelVariable("connect_cluster", "Connect's Kafka cluster", `label_values(queuewatch_kafka_connector_status, cluster)`,
			"Kafka clusters with Kafka Connect clusters.")).
		WithVariable(labelVariable("connect", "Connect cluster", `label_values(queuewatch_kafka_connector_status{cluster=~"$connect_cluster"}, connect)`,
			"Kafka Connect clusters of the selected Kafka clusters.")).
		WithRow(dashboard.NewRowBuilder("Kafka Connect connectors")).
		WithPanel(statetimeline.NewPanelBuilder().
			Title("Connector status").
			Description("Status of each connector, from least to most severe: ● ok (running), ▲ warn (paused or stopped by an operator), ? error (Connect did not answer), ■ stop (a failed or unassigned task or connector: Connect never restarts it by itself; its page shows the trace's first line).").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", connectStatusExpr, "{{cluster}}/{{connect}}/{{connector}}")).
			Mappings(statusMappings()).
			ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor(colorError)).
			ShowValue(common.VisibilityModeNever).
			MergeValues(true).
			DataLinks(link("Open connector in queuewatch", connectorPath)).
			Height(6).Span(16)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Tasks not running").
			Description("Tasks of each connector in a state other than RUNNING (FAILED, UNASSIGNED, PAUSED, STOPPED, RESTARTING), by state.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_kafka_connector_tasks{`+connectSel+`, state!="RUNNING"}`, "{{connector}} {{state}}")).
			Unit("short").
			Min(0).
			Decimals(0).
			DataLinks(link("Open connector in queuewatch", connectorPath)).
			Height(6).Span(8))
}
