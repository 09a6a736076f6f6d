package ui

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// PubSubSubscriptionPage is /pubsub/{cluster}/subscriptions/{subscription}.
func (s *Server) PubSubSubscriptionPage(c echo.Context) error {
	snap, row, err := view.PubSubSubscriptions.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	sub := row.S
	d := components.PubSubSubscriptionData{
		Chrome: s.Chrome(c, sub.Name, "overview"), Sub: sub, Status: sub.EffectiveStatus(),
		HistoryURL: view.PubSubHistoryURL(sub), Range: view.ChartRange(c), SourcePages: map[string]string{},
	}
	if snap.PubSub != nil {
		d.Project = *snap.PubSub
	}
	for i := range snap.DLQs {
		switch dl := snap.DLQs[i]; {
		case slices.Contains(sub.DeadLetterQueues, dl.Name):
			d.DeadLetters = append(d.DeadLetters, dl)
		case dl.Name == sub.Name:
			d.AsDLQ, d.IsDLQ = dl, true
		}
	}
	for _, src := range d.AsDLQ.Sources {
		if ss, ok := snap.PubSubSubscription(src); ok {
			d.SourcePages[src] = components.PubSubSubscriptionURL(ss.Cluster, ss.Name)
		}
	}
	d.Links.Grafana = grafanaPubSub.Link(s.GrafanaURL(), sub.Cluster, sub.Name)
	if Partial(c) {
		return view.Render(c, http.StatusOK, components.PubSubSubscriptionPartial(d))
	}
	return view.Render(c, http.StatusOK, components.PubSubSubscription(d))
}
