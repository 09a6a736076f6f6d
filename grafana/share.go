package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// shareSel selects the share groups of the row's variables. They are the
// row's own, not the consumer groups' cluster and group: a cluster may
// have share groups and no consumer group.
const shareSel = `cluster=~"$share_cluster", group=~"$share_group"`

// shareStatusExpr is each share group's status as its severity rank.
var shareStatusExpr = statusExpr("queuewatch_kafka_sharegroup_status", shareSel, "cluster", "group")

// sharePath is a share group's page in the UI, from a series' labels.
var sharePath = "/kafka/" + linkVar("__field.labels.", "cluster") + "/share-groups/" + linkVar("__field.labels.", "group")

// withShareGroups adds the "Kafka share groups" row (KIP-932) to a
// dashboard: each share group's status, lag and members.
func withShareGroups(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithVariable(labelVariable("share_cluster", "Share group cluster", `label_values(queuewatch_kafka_sharegroup_status, cluster)`,
			"Kafka clusters with share groups.")).
		WithVariable(labelVariable("share_group", "Share group", `label_values(queuewatch_kafka_sharegroup_status{cluster=~"$share_cluster"}, group)`,
			"Share groups of the selected clusters.")).
		WithRow(dashboard.NewRowBuilder("Kafka share groups")).
		WithPanel(statetimeline.NewPanelBuilder().
			Title("Share group status").
			Description("Status of each share group, from least to most severe: ● ok, ▲ warn (lag rising while start offsets move), ? error (group could not be read), ■ stall (members present, no start offset moved since the last poll with records waiting), ■ stop (no members, records waiting).").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", shareStatusExpr, "{{cluster}}/{{group}}")).
			Mappings(statusMappings()).
			ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor(colorError)).
			ShowValue(common.VisibilityModeNever).
			MergeValues(true).
			DataLinks(link("Open share group in queuewatch", sharePath)).
			Height(6).Span(24)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Share group lag").
			Description("Records each share group has not yet done with (neither accepted nor archived), summed over its partitions: the broker's share-partition lag (Kafka 4.2 and later, KIP-1226) or, from an older broker, end offset − start offset, an upper bound (lag_source=\"estimate\").").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `sum by (cluster, group) (queuewatch_kafka_sharegroup_lag{`+shareSel+`})`, "{{cluster}}/{{group}}")).
			Unit("short").
			Min(0).
			Decimals(0).
			DataLinks(link("Open share group in queuewatch", sharePath)).
			Height(8).Span(16)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Share group members").
			Description("Members of each share group. Share groups scale past the partition count: several members read one partition.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_kafka_sharegroup_members{`+shareSel+`}`, "{{cluster}}/{{group}}")).
			Unit("short").
			Min(0).
			Decimals(0).
			DataLinks(link("Open share group in queuewatch", sharePath)).
			Height(8).Span(8))
}
