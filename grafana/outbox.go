package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// Selectors of the outbox row's variable.
const outboxSel = `source=~"$source"`

// outboxPath is the outbox source's page in the queuewatch UI.
var outboxPath = "/outbox/" + linkVar("__field.labels.", "source")

// outboxStatusExpr is each outbox table's status as its severity rank.
var outboxStatusExpr = statusExpr("queuewatch_outbox_status", outboxSel, "source", "table")

// slotActiveMappings shows a replication slot's active flag as a word,
// shape and colour: an inactive slot keeps WAL and publishes nothing.
func slotActiveMappings() []dashboard.ValueMapping {
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{
		Type: dashboard.MappingTypeValueToText,
		Options: map[string]dashboard.ValueMappingResult{
			"0": {Text: ptr("■ inactive"), Color: ptr(colorBad), Index: ptr(int32(0))},
			"1": {Text: ptr("● active"), Color: ptr(colorOK), Index: ptr(int32(1))},
		},
	}}}
}

// withOutbox adds the "Outbox" row to a dashboard: the producer side of
// lag (rows written but not yet published, CDC slot lag), next to the
// consumer lag it causes.
func withOutbox(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithVariable(labelVariable("source", "Outbox source", `label_values(queuewatch_outbox_pending_rows, source)`,
			"Outbox databases queuewatch watches.")).
		WithRow(dashboard.NewRowBuilder("Outbox")).
		WithPanel(statetimeline.NewPanelBuilder().
			Title("Outbox status").
			Description("Status of each outbox table, from least to most severe: ● ok (publishing), ▲ warn (backlog growing), ? error (table could not be read), ■ stall (pending rows and no progress). When the outbox stalls nothing downstream lags or dead-letters: events are simply late.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", outboxStatusExpr, "{{source}}/{{table}}")).
			Mappings(statusMappings()).
			ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor(colorError)).
			ShowValue(common.VisibilityModeNever).
			MergeValues(true).
			DataLinks(link("Open outbox in queuewatch", outboxPath)).
			Height(6).Span(24)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Pending outbox rows").
			Description("Rows written in the business transaction that the outbox publisher has not marked sent yet. A line that only rises means the publisher stopped.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_outbox_pending_rows{`+outboxSel+`}`, "{{source}}/{{table}}")).
			Unit("short").
			Min(0).
			Decimals(0).
			DataLinks(link("Open outbox in queuewatch", outboxPath)).
			Height(8).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Oldest pending outbox row").
			Description("Age of the oldest unsent row: how late events leave the database. 0 when nothing is pending.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_outbox_oldest_pending_age_seconds{`+outboxSel+`}`, "{{source}}/{{table}}")).
			Unit("s").
			Min(0).
			Thresholds(thresholds(colorOK, step(60, colorWarn), step(300, colorBad))).
			DataLinks(link("Open outbox in queuewatch", outboxPath)).
			Height(8).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Replication slot lag").
			Description("WAL bytes between the server's current position and each logical replication slot's confirmed flush position (CDC publishers such as Debezium). It grows while the connector is behind or gone, and PostgreSQL keeps that WAL on disk.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_outbox_replication_slot_lag_bytes{`+outboxSel+`}`, "{{source}}/{{slot}}")).
			Unit("bytes").
			Min(0).
			DataLinks(link("Open outbox in queuewatch", outboxPath)).
			Height(8).Span(12)).
		WithPanel(statetimeline.NewPanelBuilder().
			Title("Replication slot active").
			Description("Whether a consumer is connected to each replication slot. ■ inactive with lag means the CDC connector is down (status stop).").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_outbox_replication_slot_active{`+outboxSel+`}`, "{{source}}/{{slot}}")).
			Mappings(slotActiveMappings()).
			ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor(colorError)).
			ShowValue(common.VisibilityModeNever).
			MergeValues(true).
			DataLinks(link("Open outbox in queuewatch", outboxPath)).
			Height(8).Span(12))
}
