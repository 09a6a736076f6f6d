package ui

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// This file is the RabbitMQ queue's page; its overview tab is the kind
// view.Queues, its JSON in web/api.

// RabbitQueuePage is /rabbitmq/{cluster}/queues/{vhost}/{queue}.
func (s *Server) RabbitQueuePage(c echo.Context) error {
	snap, row, err := view.Queues.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	q := row.Q
	d := components.RabbitMQQueueData{
		Chrome: s.Chrome(c, q.Name, "overview"), Queue: q, Status: q.EffectiveStatus(),
		HistoryURL: view.RabbitHistoryURL(q), Range: view.ChartRange(c), SourcePages: map[string]string{},
	}
	d.DeadLetters, d.HasDeadLetters = snap.DeadLettersTo(q)
	d.Links.Grafana = grafanaRabbitQueue.Link(s.GrafanaURL(), q.Cluster, q.VHost, q.Name)
	for i := range snap.DLQs {
		if dl := snap.DLQs[i]; dl.VHost == q.VHost && dl.Name == q.Name {
			d.AsDLQ, d.IsDLQ = dl, true
		}
	}
	for _, src := range d.AsDLQ.Sources {
		if sq, ok := snap.Queue(q.VHost, src); ok {
			d.SourcePages[src] = components.RabbitMQQueueURL(sq.Cluster, sq.VHost, sq.Name)
		}
	}
	if Partial(c) {
		return view.Render(c, http.StatusOK, components.RabbitMQQueuePartial(d))
	}
	return view.Render(c, http.StatusOK, components.RabbitMQQueue(d))
}
