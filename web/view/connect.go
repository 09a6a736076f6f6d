package view

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// ConnectRows are the Kafka Connect connectors of a snapshot as overview
// rows.
func ConnectRows(snap *queue.Snapshot) []components.ConnectRow {
	out := make([]components.ConnectRow, 0, len(snap.Connectors))
	for i := range snap.Connectors {
		c := &snap.Connectors[i]
		out = append(out, components.ConnectRow{C: c, Status: c.EffectiveStatus()})
	}
	return out
}

// ConnectSorts are the connector table's sortable columns. Status sorts by
// severity, then by the group's lag.
var ConnectSorts = map[string]sortFunc[components.ConnectRow]{
	"name": func(a, b components.ConnectRow) int { return strings.Compare(a.C.Name, b.C.Name) },
	"cluster": func(a, b components.ConnectRow) int {
		return strings.Compare(a.C.Cluster+"/"+a.C.Connect, b.C.Cluster+"/"+b.C.Connect)
	},
	"type":  func(a, b components.ConnectRow) int { return strings.Compare(a.C.Type, b.C.Type) },
	"state": func(a, b components.ConnectRow) int { return strings.Compare(a.C.State, b.C.State) },
	"status": func(a, b components.ConnectRow) int {
		if c := a.Status.Severity() - b.Status.Severity(); c != 0 {
			return c
		}
		return CmpInt(a.C.Lag, b.C.Lag)
	},
	"lag": func(a, b components.ConnectRow) int { return CmpInt(a.C.Lag, b.C.Lag) },
}

// CompareConnectNames orders connectors by cluster, Connect cluster and
// name.
func CompareConnectNames(a, b components.ConnectRow) int {
	return strings.Compare(a.C.Cluster+"\x00"+a.C.Connect+"\x00"+a.C.Name, b.C.Cluster+"\x00"+b.C.Connect+"\x00"+b.C.Name)
}

// ConnectorParam finds the connector the path names in the latest
// snapshots.
func (s *Server) ConnectorParam(c echo.Context) (*queue.Connector, error) {
	var v [3]string
	for i, name := range connectorPath.Params {
		p, err := PathParam(c, name)
		if err != nil {
			return nil, err
		}
		v[i] = p
	}
	// Only a Kafka poll lists connectors, so the cluster's snapshot that
	// has the connector is the one, without naming the broker.
	for _, snap := range s.Mon(c).Snapshots() {
		if snap.Cluster != v[0] {
			continue
		}
		if conn, ok := snap.Connector(v[1], v[2]); ok {
			return conn, nil
		}
	}
	return nil, echo.NewHTTPError(http.StatusNotFound, "no such connector")
}

// ConnectorGroupURL is the page of a sink's consumer group when the
// principal's snapshots have it, else "".
func (s *Server) ConnectorGroupURL(c echo.Context, conn *queue.Connector) string {
	if conn.Group == "" {
		return ""
	}
	for _, snap := range s.Mon(c).Snapshots() {
		if snap.Cluster != conn.Cluster {
			continue
		}
		if g, ok := snap.Group(conn.Group); ok {
			return g.Reader().Page
		}
	}
	return ""
}

// ConnectorHistoryURL is the JSON endpoint a connector page's chart reads.
func ConnectorHistoryURL(c *queue.Connector) string { return connectorAPI(c) + "/history" }

// ConnectorRestartAPI is where the connector page posts a restart.
func ConnectorRestartAPI(c *queue.Connector) string { return connectorAPI(c) + "/restart" }

// connectorAPI is the connector's URL space in the API.
func connectorAPI(c *queue.Connector) string {
	return "/api/v1/kafka/connectors/" + url.PathEscape(c.Cluster) + "/" + url.PathEscape(c.Connect) + "/" + url.PathEscape(c.Name)
}

// connectorPath names a connector: /…/:cluster/…/:connect/…/:connector.
var connectorPath = Path{
	Params: []string{"cluster", "connect", "connector"},
	Reader: func(v []string) queue.Reader {
		return queue.Reader{Broker: queue.Kafka, Cluster: v[0], Scope: v[1], Name: v[2]}
	},
}

// Connectors are Kafka Connect connectors.
var Connectors = Kind[components.ConnectRow]{
	Tab:    components.OverviewTab{Key: components.TabConnect, Label: "Connectors", Placeholder: "filter connectors: name, cluster, type, state, status", Optional: true},
	Rows:   ConnectRows,
	Reader: func(r components.ConnectRow) queue.Reader { return r.C.Reader() },
	Status: func(r components.ConnectRow) queue.Status { return r.Status },
	Sorts:  ConnectSorts, DefaultSort: "status", Names: CompareConnectNames,
	Filter: func(r components.ConnectRow) []string {
		return []string{r.C.Name, r.C.Cluster, r.C.Connect, r.C.Type, r.C.State, string(r.Status)}
	},
	Trend: func(r *components.ConnectRow) *components.Spark { return &r.Trend }, Series: "lag",
	Put:  func(d *components.OverviewData, page []components.ConnectRow) { d.Connectors = page },
	Path: connectorPath,
}
