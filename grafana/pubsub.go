package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/queuewatch/queuewatch/queue"
)

// Selectors of the Pub/Sub row's variables: a project is a cluster of its
// own, with its own variables beside Kafka's cluster and group.
const (
	pubsubProjectSel = `cluster=~"$pubsub_project"`
	pubsubSubSel     = `cluster=~"$pubsub_project", subscription=~"$pubsub_subscription"`
)

// pubsubPath is a subscription's page in the UI.
var pubsubPath = "/pubsub/" + linkVar("__field.labels.", "cluster") + "/subscriptions/" + linkVar("__field.labels.", "subscription")

// pubsubStatusExpr is each subscription's status as its severity rank.
var pubsubStatusExpr = statusExpr("queuewatch_pubsub_subscription_status", pubsubSubSel, "cluster", "subscription")

// withPubSub adds the "Google Cloud Pub/Sub" row: each subscription's
// status, the configuration traps found, Cloud Monitoring's backlog and
// oldest age (empty without monitoring.enabled), and the DLQs' depth.
func withPubSub(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithVariable(labelVariable("pubsub_project", "Pub/Sub project", `label_values(queuewatch_pubsub_subscription_status, cluster)`,
			"Pub/Sub projects (pubsub[].name) queuewatch watches.")).
		WithVariable(labelVariable("pubsub_subscription", "Pub/Sub subscription", `label_values(queuewatch_pubsub_subscription_status{`+pubsubProjectSel+`}, subscription)`,
			"Subscriptions of the selected Pub/Sub projects.")).
		WithRow(dashboard.NewRowBuilder("Google Cloud Pub/Sub")).
		WithPanel(statetimeline.NewPanelBuilder().
			Title("Pub/Sub subscription status").
			Description("Status of each Pub/Sub subscription, from least to most severe: ● ok, ▲ warn (a dead-letter trap: dead letters dropped, a dead-letter subscription that keeps them shorter, maxDeliveryAttempts at its floor), ■ stop (RESOURCE_ERROR: nothing is delivered). A dead-letter subscription is ok. Changes once per read of the project (pubsub[].poll_interval, 1m by default). Click a series to open the subscription in queuewatch.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", pubsubStatusExpr, "{{cluster}}/{{subscription}}")).
			Mappings(statusMappings()).
			ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor(colorError)).
			ShowValue(common.VisibilityModeNever).
			MergeValues(true).
			DataLinks(link("Open subscription in queuewatch", pubsubPath)).
			Height(6).Span(16)).
		WithPanel(table.NewPanelBuilder().
			Title("Pub/Sub configuration traps").
			Description("Configuration traps found in each subscription, one row per trap: dead_letters_dropped (its dead-letter topic has no subscription: Pub/Sub drops every dead letter), resource_error, dlq_retention_shorter, max_delivery_attempts_floor. Each is an alert; the runbooks say what to do.").
			Datasource(datasource()).
			WithTarget(tableQuery("A", `queuewatch_pubsub_subscription_lint{`+pubsubSubSel+`} == 1`)).
			Height(6).Span(8)).
		WithPanel(pubsubSeries("Undelivered messages", `queuewatch_pubsub_subscription_undelivered_messages{`+pubsubSubSel+`}`, "short",
			"Cloud Monitoring's num_undelivered_messages per subscription: the backlog, minutes behind the present. Empty without pubsub[].monitoring.enabled: Pub/Sub's admin API does not tell it.")).
		WithPanel(pubsubSeries("Oldest unacked message age", `queuewatch_pubsub_subscription_oldest_unacked_message_age_seconds{`+pubsubSubSel+`}`, "s",
			"Cloud Monitoring's oldest_unacked_message_age per subscription, minutes behind. Pub/Sub deletes a message at the subscription's retention (7 days by default). Empty without pubsub[].monitoring.enabled.")).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Pub/Sub DLQ depth").
			Description("Messages in each dead-letter subscription (a subscription attached to the topic a source's deadLetterPolicy names; source after the arrow). Cloud Monitoring's backlog where it is read; otherwise what a count saw (pull, then give every message back at once), a lower bound. Click to open the DLQ in queuewatch.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_dlq_messages{broker="`+string(queue.PubSub)+`", `+pubsubProjectSel+`}`, "{{cluster}}/{{dlq}} ← {{source}}")).
			Unit("short").
			Min(0).
			Decimals(0).
			DataLinks(link("Open DLQ in queuewatch", dlqPath)).
			Height(8).Span(24))
}

// pubsubSeries charts one Pub/Sub subscription family per subscription.
func pubsubSeries(title, expr, unit, description string) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource()).
		Legend(legend()).
		Tooltip(tooltip()).
		WithTarget(rangeQuery("A", expr, "{{cluster}}/{{subscription}}")).
		Unit(unit).
		Min(0).
		DataLinks(link("Open subscription in queuewatch", pubsubPath)).
		Height(8).Span(12)
}
