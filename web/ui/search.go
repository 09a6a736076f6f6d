package ui

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// SearchPage is /search: the header box's query across every DLQ the
// viewer may read (view.DLQs.Search), or the form alone without ?q=.
func (s *Server) SearchPage(c echo.Context) error {
	d := components.SearchData{
		Chrome: s.Chrome(c, "Search", "dlqs"), Modes: view.SearchModes,
		Q: c.QueryParam("q"), Mode: c.QueryParam("mode"),
		Budget: view.DefaultSearchBudget, PerDLQ: view.DefaultSearchPerDLQ, Limit: view.DefaultSearchLimit,
	}
	d.Search = d.Q
	if d.Q == "" {
		return view.Render(c, http.StatusOK, components.Search(d))
	}
	q, err := view.SearchQueryOf(c)
	if err != nil {
		return s.searchRefused(c, d, err)
	}
	d.Mode, d.Budget, d.PerDLQ, d.Limit = q.Mode, q.Budget, q.PerDLQ, q.Limit
	svc, err := s.DLQ(c)
	if err != nil {
		d.Notice = "DLQ tools not configured: this queuewatch has no replay service, so no DLQ can be read."
		return view.Render(c, http.StatusServiceUnavailable, components.Search(d))
	}
	r, err := svc.Search(c.Request().Context(), q)
	if err != nil {
		return s.searchRefused(c, d, err)
	}
	d.Ran, d.Took, d.OutOfTime, d.Truncated = true, r.Took, r.OutOfTime, r.Truncated
	for _, x := range r.DLQs {
		d.DLQs = append(d.DLQs, components.SearchDLQRow{ID: x.DLQ, Depth: x.Depth, Scanned: x.Scanned, Matches: x.Matches, Complete: x.Complete, Note: x.Note})
	}
	for i := range r.Hits {
		h := &r.Hits[i]
		kind, _, _ := h.Message.BodyView(64 << 10)
		if kind == queue.BodyJSON {
			kind = queue.BodyText // compact, as the DLQ page's list shows it
		}
		d.Hits = append(d.Hits, components.SearchHitRow{
			DLQ: h.DLQ, ID: h.Message.ID, PageURL: view.MessagePageURL(h.DLQ, h.Message.ID), M: h.Message,
			Preview: components.Preview(kind, h.Message.Body),
		})
	}
	return view.Render(c, http.StatusOK, components.Search(d))
}

// searchRefused shows the form again with why the query was refused.
func (s *Server) searchRefused(c echo.Context, d components.SearchData, err error) error {
	var he *echo.HTTPError
	if !errors.As(err, &he) {
		return err
	}
	d.Notice = fmt.Sprint(he.Message)
	return view.Render(c, he.Code, components.Search(d))
}
