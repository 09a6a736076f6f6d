package components

import (
	"strings"

	"github.com/queuewatch/queuewatch/queue"
)

// TabConnect is the overview tab of Kafka Connect connectors.
const TabConnect = "connect"

// ConnectRow is one Kafka Connect connector in the overview table.
type ConnectRow struct {
	C      *queue.Connector
	Status queue.Status
	Trend  Spark
}

// ConnectorData is what a connector's page shows.
type ConnectorData struct {
	Chrome    Chrome
	Connector *queue.Connector
	Status    queue.Status
	// GroupURL is the page of the sink's consumer group, "" when it is
	// not watched.
	GroupURL string
	// HistoryURL is the JSON endpoint the chart reads; Range its initial
	// time range.
	HistoryURL string
	Range      string
	// RestartAPI is the connector's restart endpoint when the principal
	// may restart it, else "".
	RestartAPI string
}

// restartable reports whether a restart would restart anything: the
// connector or one of its tasks failed.
func (d ConnectorData) restartable() bool {
	return d.RestartAPI != "" && (d.Connector.State == queue.ConnectFailed || d.Connector.TasksIn(queue.ConnectFailed) > 0)
}

// ConnectorURL is the path of a Kafka Connect connector's page.
func ConnectorURL(c *queue.Connector) string {
	return queue.ConnectorPage(c.Cluster, c.Connect, c.Name)
}

// connectTasks writes a connector's tasks by state: "2 running · 1 failed".
func connectTasks(c *queue.Connector) string {
	if len(c.Tasks) == 0 {
		return "none"
	}
	var parts []string
	for _, st := range queue.ConnectStates {
		if n := c.TasksIn(st); n > 0 {
			parts = append(parts, Itoa(n)+" "+strings.ToLower(st))
		}
	}
	return strings.Join(parts, " · ")
}

// connectLag writes a connector's backlog: its group's lag, "—" when the
// group is not watched.
func connectLag(c *queue.Connector) string {
	if !c.LagKnown {
		return "—"
	}
	return Count(c.Lag)
}

// orDash is s, or "—" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// connectFailed is the state of a failed connector or task.
const connectFailed = queue.ConnectFailed
