package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// Selectors of the RabbitMQ row's variables: a RabbitMQ cluster is named
// in rabbitmq[] apart from Kafka's, so it has variables of its own.
const (
	rabbitClusterSel = `cluster=~"$rabbitmq_cluster"`
	rabbitQueueSel   = `cluster=~"$rabbitmq_cluster", vhost=~"$rabbitmq_vhost", queue=~"$rabbitmq_queue"`
)

// rabbitStatusExpr is each RabbitMQ queue's status as its severity rank.
var rabbitStatusExpr = statusExpr("queuewatch_rabbitmq_queue_status", rabbitQueueSel, "cluster", "vhost", "queue")

// rabbitQueuePath is a queue's page in the UI, from the series' labels.
var rabbitQueuePath = "/rabbitmq/" + linkVar("__field.labels.", "cluster") + "/queues/" +
	linkVar("__field.labels.", "vhost") + "/" + linkVar("__field.labels.", "queue")

// withRabbitMQ adds the "RabbitMQ queues" row to a dashboard: each queue's
// status, ready and unacknowledged messages and consumers, each linking
// to the queue's page.
func withRabbitMQ(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithVariable(labelVariable("rabbitmq_cluster", "RabbitMQ cluster", `label_values(queuewatch_rabbitmq_queue_status, cluster)`,
			"RabbitMQ clusters (rabbitmq[].name) queuewatch watches.")).
		WithVariable(labelVariable("rabbitmq_vhost", "RabbitMQ vhost", `label_values(queuewatch_rabbitmq_queue_status{`+rabbitClusterSel+`}, vhost)`,
			"Virtual hosts of the selected RabbitMQ clusters.")).
		WithVariable(labelVariable("rabbitmq_queue", "RabbitMQ queue", `label_values(queuewatch_rabbitmq_queue_status{`+rabbitClusterSel+`, vhost=~"$rabbitmq_vhost"}, queue)`,
			"Queues of the selected RabbitMQ vhosts.")).
		WithRow(dashboard.NewRowBuilder("RabbitMQ queues")).
		WithPanel(statetimeline.NewPanelBuilder().
			Title("RabbitMQ queue status").
			Description("Status of each queue's consumers, from least to most severe: ● ok, ▲ warn (ready messages rising over the status window), ■ stall (consumers attached, nothing delivered or acknowledged over the window while messages are ready), ■ stop (ready messages and no consumer). A DLQ is always ok here: nothing consuming it is normal, and the DLQ dashboard judges its depth.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", rabbitStatusExpr, "{{cluster}} {{vhost}}/{{queue}}")).
			Mappings(statusMappings()).
			ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor(colorError)).
			ShowValue(common.VisibilityModeNever).
			MergeValues(true).
			DataLinks(link("Open queue in queuewatch", rabbitQueuePath)).
			Height(6).Span(24)).
		WithPanel(rabbitSeries("Ready messages", `queuewatch_rabbitmq_queue_messages{`+rabbitQueueSel+`, state="ready"}`,
			"Messages waiting to be delivered: the queue's backlog (the management API's figure, refreshed every 5 s).")).
		WithPanel(rabbitSeries("Unacknowledged messages", `queuewatch_rabbitmq_queue_messages{`+rabbitQueueSel+`, state="unacked"}`,
			"Messages delivered to consumers and not yet acknowledged: at most the consumers' prefetch. Flat at the prefetch while ready messages wait means consumers finish nothing.")).
		WithPanel(rabbitSeries("Consumers", `queuewatch_rabbitmq_queue_consumers{`+rabbitQueueSel+`}`,
			"Consumers attached to each queue. 0 with ready messages is a stop (QueuewatchRabbitMQQueueNoConsumers), unless the queue is a DLQ."))
}

// rabbitSeries charts one per-queue RabbitMQ series.
func rabbitSeries(title, expr, description string) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource()).
		Legend(legend()).
		Tooltip(tooltip()).
		WithTarget(rangeQuery("A", expr, "{{cluster}} {{vhost}}/{{queue}}")).
		Unit("short").
		Min(0).
		Decimals(0).
		DataLinks(link("Open queue in queuewatch", rabbitQueuePath)).
		Height(8).Span(8)
}
