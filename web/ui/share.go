package ui

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/web/auth"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// ShareGroupPage is /kafka/{cluster}/share-groups/{group}.
func (s *Server) ShareGroupPage(c echo.Context) error {
	_, row, err := view.ShareGroups.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	g := row.G
	d := components.ShareGroupData{
		Chrome: s.Chrome(c, g.Name, "overview"), Group: g, Status: g.EffectiveStatus(),
		HistoryURL: view.ShareHistoryURL(g), Range: view.ChartRange(c),
		CanReset: s.HasResets() && auth.PrincipalOf(c.Request().Context()).MayReader(config.RoleOperator, g.Reader()),
		ResetAPI: "/api/v1/kafka/share-groups/" + url.PathEscape(g.Cluster) + "/" + url.PathEscape(g.Name) + "/offsets",
	}
	// A share group's rejected records are archived by the broker, not
	// copied to a DLQ, so only its dashboard is linked (shareHead says so).
	d.Links.Grafana = grafanaShare.Link(s.GrafanaURL(), g.Cluster, g.Name)
	if Partial(c) {
		return view.Render(c, http.StatusOK, components.ShareGroupPartial(d))
	}
	return view.Render(c, http.StatusOK, components.ShareGroup(d))
}
