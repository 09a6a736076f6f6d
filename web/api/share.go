package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// sharePartitionJSON is one partition of a share group in the API; start
// offset and lag are null before a member first fetched the partition.
type sharePartitionJSON struct {
	Topic       string  `json:"topic"`
	Partition   int32   `json:"partition"`
	StartOffset *int64  `json:"start_offset"`
	EndOffset   int64   `json:"end_offset"`
	Lag         *int64  `json:"lag"`
	LagSource   *string `json:"lag_source"`
	Error       string  `json:"error,omitempty"`
}

// shareMemberJSON is one member of a share group in the API.
type shareMemberJSON struct {
	ID         string                `json:"id"`
	ClientID   string                `json:"client_id"`
	Host       string                `json:"host"`
	Assignment []shareAssignmentJSON `json:"assignment"`
}

// shareAssignmentJSON is a member's partitions of one topic.
type shareAssignmentJSON struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// ShareGroupJSON is a Kafka share group in the API.
type ShareGroupJSON struct {
	Cluster      string               `json:"cluster"`
	Group        string               `json:"group"`
	State        string               `json:"state"`
	Status       queue.Status         `json:"status"`
	StatusReason string               `json:"status_reason,omitempty"`
	StatusSince  *time.Time           `json:"status_since,omitempty"`
	Lag          int64                `json:"lag"`
	LagEstimated bool                 `json:"lag_estimated"`
	Members      []shareMemberJSON    `json:"members"`
	Partitions   []sharePartitionJSON `json:"partitions"`
	Error        string               `json:"error,omitempty"`
}

// ShareGroups is GET /api/v1/kafka/share-groups: every Kafka share
// group with its members and partitions, worst first (status severity,
// then lag).
func (s *Server) ShareGroups(c echo.Context) error {
	rows := view.ShareGroups.All(s.Mon(c))
	out := make([]ShareGroupJSON, len(rows))
	for i, r := range rows {
		out[i] = shareGroupOut(r)
	}
	return c.JSON(http.StatusOK, map[string]any{"share_groups": out})
}

func shareGroupOut(r components.ShareRow) ShareGroupJSON {
	g := r.G
	j := ShareGroupJSON{
		Cluster: g.Cluster, Group: g.Name, State: g.State, Status: r.Status, StatusReason: g.EffectiveReason(), StatusSince: view.SinceJSON(g.StatusSince),
		Lag: r.Lag, LagEstimated: g.LagEstimated(), Error: g.Err,
		Members: make([]shareMemberJSON, len(g.Members)), Partitions: make([]sharePartitionJSON, len(g.Partitions)),
	}
	for i, m := range g.Members {
		j.Members[i] = shareMemberJSON{ID: m.ID, ClientID: m.ClientID, Host: m.Host, Assignment: make([]shareAssignmentJSON, len(m.Assigned))}
		for k, a := range m.Assigned {
			j.Members[i].Assignment[k] = shareAssignmentJSON{Topic: a.Topic, Partitions: a.Partitions}
		}
	}
	for i, p := range g.Partitions {
		jp := sharePartitionJSON{Topic: p.Topic, Partition: p.Partition, EndOffset: p.End, Error: p.Err}
		if p.Initialized {
			start, lag, src := p.Start, p.Lag, string(p.LagSource)
			jp.StartOffset = &start
			if p.Err == "" {
				jp.Lag, jp.LagSource = &lag, &src
			}
		}
		j.Partitions[i] = jp
	}
	return j
}

// sharePointJSON is one poll of a share group in its history.
type sharePointJSON struct {
	At  time.Time `json:"at"`
	Lag int64     `json:"lag"`
}

// ShareGroupHistory is the share group chart's data: the kept history
// of its lag (its reader's backlog), oldest first.
func (s *Server) ShareGroupHistory(c echo.Context) error {
	_, row, err := view.ShareGroups.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	g := row.G
	r := g.Reader()
	h := s.Mon(c).ReaderHistory(r.Key())
	out := make([]sharePointJSON, len(h))
	for i, p := range h {
		out[i] = sharePointJSON{At: p.At, Lag: p.Backlog}
	}
	return c.JSON(http.StatusOK, map[string]any{"cluster": g.Cluster, "group": g.Name, "history": out})
}
