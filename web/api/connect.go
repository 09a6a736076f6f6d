package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// connectTaskJSON is one task of a connector in the API.
type connectTaskJSON struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// ConnectorJSON is a Kafka Connect connector in the API; lag is its
// consumer group's, null when that group is not watched.
type ConnectorJSON struct {
	Cluster      string            `json:"cluster"`
	Connect      string            `json:"connect"`
	Connector    string            `json:"connector"`
	Type         string            `json:"type"`
	State        string            `json:"state"`
	WorkerID     string            `json:"worker_id"`
	Trace        string            `json:"trace,omitempty"`
	Status       queue.Status      `json:"status"`
	StatusReason string            `json:"status_reason,omitempty"`
	StatusSince  *time.Time        `json:"status_since,omitempty"`
	Group        string            `json:"group,omitempty"`
	Lag          *int64            `json:"lag"`
	DLQTopic     string            `json:"dlq_topic,omitempty"`
	Topics       []string          `json:"topics"`
	Tasks        []connectTaskJSON `json:"tasks"`
	Error        string            `json:"error,omitempty"`
}

// Connectors is GET /api/v1/kafka/connectors: every Kafka Connect
// connector with its tasks, worst first (status severity, then its
// group's lag).
func (s *Server) Connectors(c echo.Context) error {
	rows := view.Connectors.All(s.Mon(c))
	out := make([]ConnectorJSON, len(rows))
	for i, r := range rows {
		out[i] = connectorOut(r)
	}
	return c.JSON(http.StatusOK, map[string]any{"connectors": out})
}

func connectorOut(r components.ConnectRow) ConnectorJSON {
	c := r.C
	j := ConnectorJSON{
		Cluster: c.Cluster, Connect: c.Connect, Connector: c.Name, Type: c.Type, State: c.State, WorkerID: c.WorkerID, Trace: c.Trace,
		Status: r.Status, StatusReason: c.EffectiveReason(), StatusSince: view.SinceJSON(c.StatusSince),
		Group: c.Group, DLQTopic: c.DLQTopic, Topics: append([]string{}, c.Topics...), Error: c.Err,
		Tasks: make([]connectTaskJSON, len(c.Tasks)),
	}
	if c.LagKnown {
		lag := c.Lag
		j.Lag = &lag
	}
	for i, t := range c.Tasks {
		j.Tasks[i] = connectTaskJSON{ID: t.ID, State: t.State, WorkerID: t.WorkerID, Trace: t.Trace}
	}
	return j
}

// connectPointJSON is one poll of a connector in its history.
type connectPointJSON struct {
	At  time.Time `json:"at"`
	Lag int64     `json:"lag"`
}

// ConnectorHistory is the connector chart's data: the kept history of its
// group's lag (its reader's backlog), oldest first; empty while the group
// is not watched.
func (s *Server) ConnectorHistory(c echo.Context) error {
	conn, err := s.ConnectorParam(c)
	if err != nil {
		return err
	}
	r := conn.Reader()
	h := s.Mon(c).ReaderHistory(r.Key())
	out := make([]connectPointJSON, len(h))
	for i, p := range h {
		out[i] = connectPointJSON{At: p.At, Lag: p.Backlog}
	}
	return c.JSON(http.StatusOK, map[string]any{"cluster": conn.Cluster, "connect": conn.Connect, "connector": conn.Name, "history": out})
}

// ConnectorRestart is POST …/connectors/{cluster}/{connect}/{connector}/restart:
// it restarts the connector and its failed tasks (running tasks keep
// running), audited in the reset log. The answer is the connector's and
// its tasks' states as Connect left them; a restart that took effect but
// was not recorded is answered all the same, and logged.
func (s *Server) ConnectorRestart(c echo.Context) error {
	ca, err := s.ConnectorActions()
	if err != nil {
		return err
	}
	conn, err := s.ConnectorParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	st, err := ca.RestartConnector(ctx, conn.Cluster, conn.Connect, conn.Name, view.Who(ctx))
	switch {
	case errors.Is(err, offsets.ErrAudit):
		s.Logger().Error("connector restart not recorded", "path", c.Request().URL.Path, "err", err)
	case err != nil:
		return s.offsetsFail(c, err)
	}
	return c.JSON(http.StatusOK, st)
}
