package alerts

import "github.com/queuewatch/queuewatch/queue"

// connectorPage is the UI page of one Kafka Connect connector.
var connectorPage = `/kafka/` + pathLabel("cluster") + `/connect/` + pathLabel("connect") + `/connectors/` + pathLabel("connector")

// connectSpecs are the Kafka Connect alerts: a connector in stop, which
// is a failed or unassigned task or connector (connect.go). A failed task
// never restarts by itself, so it pages; the trace's first line is on the
// connector's page, since a label would make a series per trace.
func connectSpecs(p ruleParams) []alertSpec {
	return []alertSpec{{
		name: "QueuewatchConnectTaskFailed", severity: SeverityCritical, forDur: p.statusFor, kind: noThreshold,
		label: "connector", page: connectorPage,
		summary: `Kafka Connect connector {{ $labels.connector }} has stopped`,
		description: `Connector {{ $labels.connector }} of Kafka Connect cluster {{ $labels.connect }} (Kafka cluster {{ $labels.cluster }}) ` +
			`has a failed or unassigned task, or failed itself: it reads or writes nothing until it is restarted. Its page shows the first line of the trace.`,
		expr: func(string, string) string {
			// max by drops the status label, which would name the alert's
			// series after the status rather than the connector.
			return `max by (cluster, connect, connector) (queuewatch_kafka_connector_status{status="` + string(queue.StatusStop) + `"}) == 1`
		},
	}}
}
