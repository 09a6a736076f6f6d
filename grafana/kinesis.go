package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// Selectors of the Kinesis row's variables: a Kinesis account is a
// cluster of its own, like an SQS account.
const (
	kinesisAccountSel = `cluster=~"$kinesis_account"`
	kinesisAppSel     = `cluster=~"$kinesis_account", application=~"$kinesis_application"`
)

// kinesisStatusExpr is each KCL application's status as its severity rank.
var kinesisStatusExpr = statusExpr("queuewatch_kinesis_application_status", kinesisAppSel, "cluster", "application")

// kinesisPath is an application's page in the UI, from a series' labels.
var kinesisPath = "/kinesis/" + linkVar("__field.labels.", "cluster") + "/applications/" + linkVar("__field.labels.", "application")

// withKinesis adds the "Amazon Kinesis" row to a dashboard: each KCL
// application's status, its lag per shard, its workers and shards behind,
// and the account's reads. Series change once per read of the account
// (kinesis[].poll_interval, a minute by default).
func withKinesis(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithVariable(labelVariable("kinesis_account", "Kinesis account", `label_values(queuewatch_kinesis_application_status, cluster)`,
			"Kinesis accounts (kinesis[].name) queuewatch watches.")).
		WithVariable(labelVariable("kinesis_application", "KCL application", `label_values(queuewatch_kinesis_application_status{`+kinesisAccountSel+`}, application)`,
			"KCL applications of the selected accounts.")).
		WithRow(dashboard.NewRowBuilder("Amazon Kinesis")).
		WithPanel(statetimeline.NewPanelBuilder().
			Title("KCL application status").
			Description("Status of each KCL application, from least to most severe: ● ok, ▲ warn (a closed shard not read to SHARD_END, lease ping-pong, an open shard with no lease, or little retention headroom), ? error (lease table unreadable), ■ stall (a checkpoint unmoved while newer records wait), ■ stop (no lease renewed within the failover time).").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", kinesisStatusExpr, "{{cluster}}/{{application}}")).
			Mappings(statusMappings()).
			ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor(colorError)).
			ShowValue(common.VisibilityModeNever).
			MergeValues(true).
			DataLinks(link("Open application in queuewatch", kinesisPath)).
			Height(6).Span(24)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Lag per shard").
			Description("MillisBehindLatest read at each shard's checkpoint: how far the checkpointed record is behind the shard's newest. A flat line above zero is a checkpoint that does not move.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_kinesis_shard_lag_seconds{`+kinesisAppSel+`}`, "{{application}} {{shard}}")).
			Unit("s").
			Min(0).
			DataLinks(link("Open application in queuewatch", kinesisPath)).
			Height(8).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Workers and shards behind").
			Description("Distinct workers holding a lease, leased shards behind their newest record, and open shards no lease covers (nobody reads them).").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_kinesis_application_workers{`+kinesisAppSel+`}`, "{{application}} workers")).
			WithTarget(rangeQuery("B", `queuewatch_kinesis_application_shards_behind{`+kinesisAppSel+`}`, "{{application}} shards behind")).
			WithTarget(rangeQuery("C", `queuewatch_kinesis_application_unleased_shards{`+kinesisAppSel+`}`, "{{application}} unleased")).
			Unit("short").
			Min(0).
			Decimals(0).
			Height(8).Span(6)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Kinesis and DynamoDB requests").
			Description("Requests queuewatch sends to each account by action (an hour's average: reads come once a minute). GetShardIterator and GetRecords take from each shard's five reads a second, shared with the applications.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `sum by (cluster, action) (rate(queuewatch_kinesis_api_requests_total{`+kinesisAccountSel+`}[1h]))`, "{{cluster}} {{action}}")).
			Unit("reqps").
			Min(0).
			Height(8).Span(6))
}
