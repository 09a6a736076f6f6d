package ui

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// SQSQueuePage is /sqs/{cluster}/queues/{queue}.
func (s *Server) SQSQueuePage(c echo.Context) error {
	snap, row, err := view.SQSQueues.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	q := row.Q
	d := components.SQSQueueData{
		Chrome: s.Chrome(c, q.Name, "overview"), Queue: q, Status: q.EffectiveStatus(),
		HistoryURL: view.SQSHistoryURL(q), Range: view.ChartRange(c), SourcePages: map[string]string{},
	}
	for i := range snap.DLQs {
		switch dl := snap.DLQs[i]; {
		case q.DeadLetterQueue != "" && dl.Name == q.DeadLetterQueue:
			d.DeadLetters, d.HasDeadLetters = dl, true
		case dl.Name == q.Name:
			d.AsDLQ, d.IsDLQ = dl, true
		}
	}
	for _, src := range d.AsDLQ.Sources {
		if sq, ok := snap.SQSQueue(src); ok {
			d.SourcePages[src] = components.SQSQueueURL(sq.Cluster, sq.Name)
		}
	}
	// Its DLQ (redrive policy) is in the facts above.
	d.Links.Grafana = grafanaSQS.Link(s.GrafanaURL(), q.Cluster, q.Name)
	if Partial(c) {
		return view.Render(c, http.StatusOK, components.SQSQueuePartial(d))
	}
	return view.Render(c, http.StatusOK, components.SQSQueue(d))
}
