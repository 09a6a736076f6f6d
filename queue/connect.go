package queue

import (
	"net/url"
	"time"
)

// Connector is one Kafka Connect connector as of a poll, with its tasks.
// A connector is a reader: a sink reads its topics through a consumer
// group, a source reads an outside system, and a FAILED task is a silent
// stop that its consumer group alone would show only as a stall.
type Connector struct {
	Cluster string // the Kafka cluster
	Connect string // the Connect cluster (config kafka[].connect[].name)
	Name    string
	Type    string // sink or source
	// State is the connector's: RUNNING, PAUSED, STOPPED, FAILED,
	// UNASSIGNED or RESTARTING.
	State    string
	WorkerID string
	// Trace is the first line of the connector's failure trace: the
	// exception and its message.
	Trace string
	Tasks []ConnectTask
	// Topics are what a sink reads (its topics setting); empty for a source
	// or a sink that reads by topics.regex.
	Topics []string
	// Group is a sink's consumer group: consumer.override.group.id, else
	// connect-<name>. Empty for a source.
	Group string
	// Lag is the total lag of the sink's consumer group, LagKnown false
	// when that group is not watched (groups.include) or not in the poll.
	Lag      int64
	LagKnown bool
	// DLQTopic is the sink's dead-letter topic
	// (errors.deadletterqueue.topic.name); empty when it has none.
	DLQTopic string
	// Err is why the connector could not be read.
	Err string

	// Status and StatusReason are the connector's status judged from its
	// and its tasks' states, filled by alerts evaluation.
	Status       Status
	StatusReason string
	// StatusSince is when the current non-ok condition began (see Onset),
	// filled by alerts evaluation; zero when ok.
	StatusSince time.Time
}

// ConnectTask is one task of a connector.
type ConnectTask struct {
	ID       int
	State    string
	WorkerID string
	// Trace is the first line of the task's failure trace.
	Trace string
}

// Connector and task states of the Connect REST API.
const (
	ConnectRunning    = "RUNNING"
	ConnectPaused     = "PAUSED"
	ConnectStopped    = "STOPPED"
	ConnectFailed     = "FAILED"
	ConnectUnassigned = "UNASSIGNED"
	ConnectRestarting = "RESTARTING"
)

// ConnectStates are the states in the order the task metric lists them.
var ConnectStates = []string{ConnectRunning, ConnectPaused, ConnectStopped, ConnectFailed, ConnectUnassigned, ConnectRestarting}

// TasksIn is how many of c's tasks are in state.
func (c *Connector) TasksIn(state string) int {
	n := 0
	for _, t := range c.Tasks {
		if t.State == state {
			n++
		}
	}
	return n
}

// EffectiveStatus is the status c shows everywhere (see EffectiveStatus).
func (c *Connector) EffectiveStatus() Status { return EffectiveStatus(c.Err, c.Status) }

// EffectiveReason is the sentence that goes with c's EffectiveStatus.
func (c *Connector) EffectiveReason() string { return EffectiveReason(c.Err, c.StatusReason) }

// Reader is c in the shape every reader shares. Its backlog is its
// consumer group's lag (a sink's, when the group is watched): Connect
// tells none itself; its members are its running tasks.
func (c *Connector) Reader() Reader {
	r := Reader{
		Broker: Kafka, Cluster: c.Cluster, Scope: c.Connect, Name: c.Name, Title: "connector " + c.Name,
		Status: c.EffectiveStatus(), Reason: c.EffectiveReason(), StatusSince: c.StatusSince,
		Backlog: c.Lag, BacklogKnown: c.LagKnown, BacklogUnit: UnitMessages, LagBasis: LagUnknown, Members: c.TasksIn(ConnectRunning), Err: c.Err,
		Page: ConnectorPage(c.Cluster, c.Connect, c.Name),
	}
	return r.known()
}

// ConnectorPage is the path of a Kafka Connect connector's page.
func ConnectorPage(cluster, connect, name string) string {
	return "/kafka/" + url.PathEscape(cluster) + "/connect/" + url.PathEscape(connect) + "/connectors/" + url.PathEscape(name)
}

// Connector returns the connector of the Connect cluster connect with the
// given name, if the snapshot has it.
func (s *Snapshot) Connector(connect, name string) (*Connector, bool) {
	for i := range s.Connectors {
		if c := &s.Connectors[i]; c.Connect == connect && c.Name == name {
			return c, true
		}
	}
	return nil, false
}
