package ui

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/web/auth"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// ConnectorPage is /kafka/{cluster}/connect/{connect}/connectors/{connector}.
func (s *Server) ConnectorPage(c echo.Context) error {
	conn, err := s.ConnectorParam(c)
	if err != nil {
		return err
	}
	d := components.ConnectorData{
		Chrome: s.Chrome(c, conn.Name, "overview"), Connector: conn, Status: conn.EffectiveStatus(),
		GroupURL: s.ConnectorGroupURL(c, conn), HistoryURL: view.ConnectorHistoryURL(conn), Range: view.ChartRange(c),
	}
	if _, err := s.ConnectorActions(); err == nil && auth.PrincipalOf(c.Request().Context()).MayReader(config.RoleOperator, conn.Reader()) {
		d.RestartAPI = view.ConnectorRestartAPI(conn)
	}
	if Partial(c) {
		return view.Render(c, http.StatusOK, components.ConnectorPartial(d))
	}
	return view.Render(c, http.StatusOK, components.Connector(d))
}
