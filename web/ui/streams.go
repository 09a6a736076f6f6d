package ui

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// StreamsGroupPage is /kafka/{cluster}/streams-groups/{group}.
func (s *Server) StreamsGroupPage(c echo.Context) error {
	_, row, err := view.StreamsGroups.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	g := row.G
	d := components.StreamsGroupData{
		Chrome: s.Chrome(c, g.Name, "overview"), Group: g, Status: g.EffectiveStatus(),
		HistoryURL: view.StreamsHistoryURL(g), Range: view.ChartRange(c),
	}
	// Kafka Streams sends what it cannot process to its own handlers, not
	// to a DLQ queuewatch could name, so only its dashboard is linked.
	d.Links.Grafana = grafanaStreams.Link(s.GrafanaURL(), g.Cluster, g.Name)
	if Partial(c) {
		return view.Render(c, http.StatusOK, components.StreamsGroupPartial(d))
	}
	return view.Render(c, http.StatusOK, components.StreamsGroup(d))
}
