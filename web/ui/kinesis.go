package ui

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// KinesisAppPage is /kinesis/{cluster}/applications/{application}.
func (s *Server) KinesisAppPage(c echo.Context) error {
	snap, row, err := view.KinesisApps.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	a := row.A
	d := components.KinesisAppData{
		Chrome: s.Chrome(c, a.Name, "overview"), App: a, Status: a.EffectiveStatus(),
		HistoryURL: view.KinesisHistoryURL(a), Range: view.ChartRange(c),
	}
	if st, ok := snap.KinesisStream(a.Stream); ok {
		d.Stream = st
	}
	if snap.Kinesis != nil {
		d.ReadAt = snap.Kinesis.ReadAt
	}
	d.Links.Grafana = grafanaKinesis.Link(s.GrafanaURL(), a.Cluster, a.Name)
	if Partial(c) {
		return view.Render(c, http.StatusOK, components.KinesisAppPartial(d))
	}
	return view.Render(c, http.StatusOK, components.KinesisApp(d))
}
