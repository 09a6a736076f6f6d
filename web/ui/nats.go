package ui

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/web/auth"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// NATSConsumerPage is /nats/{cluster}/streams/{stream}/consumers/{consumer}.
func (s *Server) NATSConsumerPage(c echo.Context) error {
	snap, row, err := view.Consumers.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	con := row.C
	shown := s.RecentPause(c.Request().Context(), *con, snap.Time)
	con = &shown
	d := components.NATSConsumerData{
		Chrome: s.Chrome(c, con.Name, "overview"), Consumer: con, Status: con.EffectiveStatus(),
		HistoryURL: view.ConsumerHistoryURL(con), Range: view.ChartRange(c),
		ResetAPI: view.ConsumerResetAPI(con), PauseAPI: view.ConsumerAPI(con),
	}
	if _, err := s.ConsumerActions(); err == nil {
		d.CanReset = auth.PrincipalOf(c.Request().Context()).MayReader(config.RoleOperator, con.Reader())
	}
	if st, ok := snap.Stream(con.Stream); ok {
		d.Stream, d.HasStream = *st, true
	}
	d.DeadLetters, d.HasDeadLetters = view.ConsumerDLQ(snap, con)
	// The captured dead letters are in the facts above.
	d.Links.Grafana = grafanaConsumer.Link(s.GrafanaURL(), con.Cluster, con.Stream, con.Name)
	if Partial(c) {
		return view.Render(c, http.StatusOK, components.NATSConsumerPartial(d))
	}
	return view.Render(c, http.StatusOK, components.NATSConsumer(d))
}
