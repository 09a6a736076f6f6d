package ui

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// OutboxPage is /outbox/{source}: its tables and slots.
func (s *Server) OutboxPage(c echo.Context) error {
	card, err := s.OutboxParam(c)
	if err != nil {
		return err
	}
	d := components.OutboxData{
		Chrome: s.Chrome(c, card.Source, "overview"), Card: card,
		HistoryURL: "/api/v1/outbox/" + url.PathEscape(card.Source) + "/history", Range: view.ChartRange(c),
	}
	d.LastPoll = components.Ago(card.LastPoll, d.Chrome.Now.T)
	d.Links.Grafana = grafanaOutbox.Link(s.GrafanaURL(), card.Source)
	if Partial(c) {
		return view.Render(c, http.StatusOK, components.OutboxPartial(d))
	}
	return view.Render(c, http.StatusOK, components.Outbox(d))
}
