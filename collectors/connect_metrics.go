package collectors

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/queue"
)

// Kafka Connect connector families. A connector is named by its Kafka
// cluster, its Connect cluster and its name; its consumer group (a sink's)
// is a consumer group of its own with its own families.
var (
	connectorLabels = []string{"cluster", "connect", "connector"}

	descConnectorStatus = statusDesc("kafka_connector_status", "Kafka Connect connector", connectorLabels...)
	descConnectorTasks  = desc("kafka_connector_tasks", "Tasks of the Kafka Connect connector in each state Connect reports (RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED, RESTARTING); a state no task is in has no series.", append(connectorLabels, "state")...)

	connectFamilies = []*family{descConnectorStatus, descConnectorTasks}
)

// describeConnect sends the connector descriptors.
func describeConnect(ch chan<- *prometheus.Desc) {
	for _, f := range connectFamilies {
		ch <- f.desc
	}
}

// collectConnect emits the snapshot's connectors. A connector that could
// not be read has only its status series (error): the tasks it had are
// not known.
func collectConnect(ch sink, snap *queue.Snapshot) {
	cl := snap.Cluster
	for i := range snap.Connectors {
		c := &snap.Connectors[i]
		emitStatus(ch, descConnectorStatus, c.EffectiveStatus(), cl, c.Connect, c.Name)
		if c.Err != "" {
			continue
		}
		for _, st := range queue.ConnectStates {
			if n := c.TasksIn(st); n > 0 {
				ch.gauge(descConnectorTasks, float64(n), cl, c.Connect, c.Name, st)
			}
		}
	}
}
