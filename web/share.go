package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// shareRows are the Kafka share groups of a snapshot as overview rows.
func shareRows(snap *queue.Snapshot) []components.ShareRow {
	out := make([]components.ShareRow, 0, len(snap.ShareGroups))
	for i := range snap.ShareGroups {
		g := &snap.ShareGroups[i]
		out = append(out, components.ShareRow{G: g, Status: g.EffectiveStatus(), Lag: g.TotalLag()})
	}
	return out
}

// shareSorts are the share group table's sortable columns. Status sorts by
// harm, severity then lag, as consumer groups do.
var shareSorts = map[string]sortFunc[components.ShareRow]{
	"name":    func(a, b components.ShareRow) int { return strings.Compare(a.G.Name, b.G.Name) },
	"cluster": func(a, b components.ShareRow) int { return strings.Compare(a.G.Cluster, b.G.Cluster) },
	"state":   func(a, b components.ShareRow) int { return strings.Compare(a.G.State, b.G.State) },
	"status": func(a, b components.ShareRow) int {
		if c := a.Status.Severity() - b.Status.Severity(); c != 0 {
			return c
		}
		return cmpInt(a.Lag, b.Lag)
	},
	"lag":     func(a, b components.ShareRow) int { return cmpInt(a.Lag, b.Lag) },
	"members": func(a, b components.ShareRow) int { return len(a.G.Members) - len(b.G.Members) },
}

func compareShareNames(a, b components.ShareRow) int {
	return strings.Compare(a.G.Cluster+"\x00"+a.G.Name, b.G.Cluster+"\x00"+b.G.Name)
}

// shareTab shapes the overview's share group tab.
func (s *Server) shareTab(c echo.Context, d *components.OverviewData, rows []components.ShareRow) {
	d.Table = tableState(c, "/", components.TabShare, shareSorts, "status")
	rows = filterRows(rows, d.Table.Q, func(r components.ShareRow) []string {
		return []string{r.G.Name, r.G.Cluster, r.G.State, string(r.Status)}
	})
	sortRows(rows, shareSorts[d.Table.Sort], d.Table.Dir, compareShareNames)
	d.Shares = page(&d.Table, rows)
	for i := range d.Shares {
		d.Shares[i].Trend = s.readerSpark(s.mon(c), d.Shares[i].G.Reader(), "lag")
	}
}

// shareGroupPage is /kafka/{cluster}/share-groups/{group}.
func (s *Server) shareGroupPage(c echo.Context) error {
	g, err := s.shareParam(c)
	if err != nil {
		return err
	}
	d := components.ShareGroupData{
		Chrome: s.chrome(c, g.Name, "overview"), Group: g, Status: g.EffectiveStatus(),
		HistoryURL: shareHistoryURL(g), Range: chartRange(c),
		CanReset: s.opts.Offsets != nil && principalOf(c.Request().Context()).mayReader(config.RoleOperator, g.Reader()),
		ResetAPI: "/api/v1/kafka/share-groups/" + url.PathEscape(g.Cluster) + "/" + url.PathEscape(g.Name) + "/offsets",
	}
	// A share group's rejected records are archived by the broker, not
	// copied to a DLQ, so only its dashboard is linked (shareHead says so).
	d.Links.Grafana = grafanaShare.link(s.opts.GrafanaURL, g.Cluster, g.Name)
	if partial(c) {
		return render(c, http.StatusOK, components.ShareGroupPartial(d))
	}
	return render(c, http.StatusOK, components.ShareGroup(d))
}

// shareParam finds the share group the path names in the latest snapshots.
func (s *Server) shareParam(c echo.Context) (*queue.ShareGroup, error) {
	cluster, err := pathParam(c, "cluster")
	if err != nil {
		return nil, err
	}
	name, err := pathParam(c, "group")
	if err != nil {
		return nil, err
	}
	// Only a Kafka poll lists share groups, so the cluster's snapshot that
	// has the group is the one, without naming the broker.
	for _, snap := range s.mon(c).Snapshots() {
		if snap.Cluster != cluster {
			continue
		}
		if g, ok := snap.ShareGroup(name); ok {
			return g, nil
		}
	}
	return nil, echo.NewHTTPError(http.StatusNotFound, "no such share group")
}

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

// shareGroupJSON is a Kafka share group in the API.
type shareGroupJSON struct {
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

// apiShareGroups is GET /api/v1/kafka/share-groups: every Kafka share
// group with its members and partitions, worst first (status severity,
// then lag).
func (s *Server) apiShareGroups(c echo.Context) error {
	var rows []components.ShareRow
	for _, snap := range s.mon(c).Snapshots() {
		rows = append(rows, shareRows(snap)...)
	}
	sortRows(rows, shareSorts["status"], "desc", compareShareNames)
	out := make([]shareGroupJSON, len(rows))
	for i, r := range rows {
		out[i] = shareGroupOut(r)
	}
	return c.JSON(http.StatusOK, map[string]any{"share_groups": out})
}

func shareGroupOut(r components.ShareRow) shareGroupJSON {
	g := r.G
	j := shareGroupJSON{
		Cluster: g.Cluster, Group: g.Name, State: g.State, Status: r.Status, StatusReason: g.EffectiveReason(), StatusSince: sinceJSON(g.StatusSince),
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

// shareHistoryURL is the JSON endpoint a share group page's chart reads.
func shareHistoryURL(g *queue.ShareGroup) string {
	return "/api/v1/kafka/share-groups/" + url.PathEscape(g.Cluster) + "/" + url.PathEscape(g.Name) + "/history"
}

// sharePointJSON is one poll of a share group in its history.
type sharePointJSON struct {
	At  time.Time `json:"at"`
	Lag int64     `json:"lag"`
}

// apiShareGroupHistory is the share group chart's data: the kept history
// of its lag (its reader's backlog), oldest first.
func (s *Server) apiShareGroupHistory(c echo.Context) error {
	g, err := s.shareParam(c)
	if err != nil {
		return err
	}
	r := g.Reader()
	h := s.mon(c).ReaderHistory(r.Key())
	out := make([]sharePointJSON, len(h))
	for i, p := range h {
		out[i] = sharePointJSON{At: p.At, Lag: p.Backlog}
	}
	return c.JSON(http.StatusOK, map[string]any{"cluster": g.Cluster, "group": g.Name, "history": out})
}
