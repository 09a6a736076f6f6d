package grafana

import (
	"strconv"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/queuewatch/queuewatch/queue"
)

// Selectors of the SQS row's variables: an SQS account is a cluster of
// its own, so it has its own variables beside Kafka's cluster and group.
const (
	sqsAccountSel = `cluster=~"$sqs_account"`
	sqsQueueSel   = `cluster=~"$sqs_account", queue=~"$sqs_queue"`
)

// sqsStatusExpr is each SQS queue's status as its severity rank.
var sqsStatusExpr = statusExpr("queuewatch_sqs_queue_status", sqsQueueSel, "cluster", "queue")

// sqsMonthlyUSD turns a request rate per second into US dollars per 30-day
// month at queue.SQSPricePerMillion: the cost hint of the requests panel.
var sqsMonthlyUSD = ` * ` + strconv.Itoa(30*24*3600) + ` * ` + strconv.FormatFloat(queue.SQSPricePerMillion, 'f', -1, 64) + ` / 1e6`

// sqsRequestRate is the requests per second queuewatch sends to each
// account by action. Accounts are read every few minutes (4m by default),
// so the counter moves in steps: an hour's average is the steady rate.
const sqsRequestRate = `sum by (cluster, action) (rate(queuewatch_sqs_api_requests_total{` + sqsAccountSel + `}[1h]))`

// withSQS adds the "Amazon SQS" row to a dashboard: each queue's status and
// messages by state, its DLQs' depth, and what reading the accounts costs.
// SQS queues have no page in the UI yet: only DLQ panels link.
func withSQS(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithVariable(labelVariable("sqs_account", "SQS account", `label_values(queuewatch_sqs_queue_status, cluster)`,
			"SQS accounts (sqs[].name) queuewatch watches.")).
		WithVariable(labelVariable("sqs_queue", "SQS queue", `label_values(queuewatch_sqs_queue_status{`+sqsAccountSel+`}, queue)`,
			"Queues of the selected SQS accounts.")).
		WithRow(dashboard.NewRowBuilder("Amazon SQS")).
		WithPanel(statetimeline.NewPanelBuilder().
			Title("SQS queue status").
			Description("Status of each SQS queue's consumers, from least to most severe: ● ok, ? error (queue could not be read), ■ stall (in flight at SQS's limit of 120,000: receives fail), ■ stop (no consumer: visible messages grew between two reads with none in flight). A DLQ reads stop while it fills; that is expected. Counts change once per read of the account (sqs[].poll_interval, 4m by default).").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", sqsStatusExpr, "{{cluster}}/{{queue}}")).
			Mappings(statusMappings()).
			ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor(colorError)).
			ShowValue(common.VisibilityModeNever).
			MergeValues(true).
			Height(6).Span(24)).
		WithPanel(sqsMessages("Visible messages", "visible",
			"Messages available to receive (ApproximateNumberOfMessages): the backlog. Rising while in flight stays flat means consumers are capped or gone.")).
		WithPanel(sqsMessages("In-flight messages", "in_flight",
			"Messages received and neither deleted nor back yet (ApproximateNumberOfMessagesNotVisible). SQS allows 120,000 in flight; at that limit receives fail. Messages a consumer fails come back after the visibility timeout.").
			Thresholds(thresholds(colorOK, step(100000, colorWarn), step(queue.SQSInFlightLimit, colorBad)))).
		WithPanel(sqsMessages("Delayed messages", "delayed",
			"Messages sent with a delay (DelaySeconds) not yet over (ApproximateNumberOfMessagesDelayed): not receivable yet.")).
		WithPanel(timeseries.NewPanelBuilder().
			Title("SQS DLQ depth").
			Description("Messages in each SQS dead-letter queue, found from the sources' RedrivePolicy (source after the arrow). SQS moves a message there after maxReceiveCount receives without a delete. Click to browse and replay it in queuewatch.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_dlq_messages{broker="`+string(queue.SQS)+`", `+sqsAccountSel+`}`, "{{cluster}}/{{dlq}} ← {{source}}")).
			Unit("short").
			Min(0).
			Decimals(0).
			DataLinks(link("Open DLQ in queuewatch", dlqPath)).
			Height(8).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("SQS API requests").
			Description("Requests per second queuewatch sends to each SQS account, by action (GetQueueAttributes per queue and ListQueues per 1,000 names every read; browsing and replays add ReceiveMessage, SendMessage, DeleteMessage…), averaged over an hour. AWS bills them: about USD 0.40 per million beyond the free tier, so 1 request/s costs about USD 1.04 a month. Read accounts less often with sqs[].poll_interval.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", sqsRequestRate, "{{cluster}} {{action}}")).
			Unit("reqps").
			Min(0).
			Height(8).Span(16)).
		WithPanel(stat.NewPanelBuilder().
			Title("SQS request cost").
			Description("What the last hour's request rate would cost in a 30-day month, per account, at USD 0.40 per million requests (AWS's standard-queue price, first million a month free not deducted). An estimate: `queuewatch check` prints the same for one read of every queue.").
			Datasource(datasource()).
			ReduceOptions(lastValue()).
			WithTarget(instantQuery("A", `sum by (cluster) (`+sqsRequestRate+`)`+sqsMonthlyUSD, "{{cluster}}")).
			Unit("currencyUSD").
			Decimals(2).
			Min(0).
			Height(8).Span(8))
}

// sqsMessages charts one state of queuewatch_sqs_queue_messages per queue.
func sqsMessages(title, state, description string) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource()).
		Legend(legend()).
		Tooltip(tooltip()).
		WithTarget(rangeQuery("A", `queuewatch_sqs_queue_messages{`+sqsQueueSel+`, state="`+state+`"}`, "{{cluster}}/{{queue}}")).
		Unit("short").
		Min(0).
		Decimals(0).
		Height(8).Span(12)
}
