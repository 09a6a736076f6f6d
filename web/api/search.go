package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/web/view"
)

// searchJSON is GET /api/v1/search: the hits, and how far the search
// went — its bounds, the time it took and each DLQ's line.
type searchJSON struct {
	Mode      string            `json:"mode"`
	Q         string            `json:"q"`
	BudgetMS  int64             `json:"budget_ms"`
	PerDLQ    int               `json:"per_dlq"`
	Limit     int               `json:"limit"`
	TookMS    int64             `json:"took_ms"`
	OutOfTime bool              `json:"out_of_time"`
	Truncated bool              `json:"truncated"`
	DLQs      []searchedDLQJSON `json:"dlqs"`
	Hits      []searchHitJSON   `json:"hits"`
}

type searchedDLQJSON struct {
	DLQ      string `json:"dlq"`
	Depth    int64  `json:"depth"`
	Scanned  int    `json:"scanned"`
	Matches  int    `json:"matches"`
	Complete bool   `json:"complete"`
	Note     string `json:"note,omitempty"`
}

type searchHitJSON struct {
	DLQ        string      `json:"dlq"`
	Message    MessageJSON `json:"message"`
	MessageURL string      `json:"message_url"`
	PageURL    string      `json:"page_url"`
}

// Search searches every DLQ the caller may read (view.DLQs.Search):
// masked values are matched as shown, never by their clear value.
func (s *Server) Search(c echo.Context) error {
	svc, err := s.DLQ(c)
	if err != nil {
		return err
	}
	q, err := view.SearchQueryOf(c)
	if err != nil {
		return err
	}
	r, err := svc.Search(c.Request().Context(), q)
	if err != nil {
		return err
	}
	q = r.Query
	out := searchJSON{
		Mode: q.Mode, Q: q.Q, BudgetMS: q.Budget.Milliseconds(), PerDLQ: q.PerDLQ, Limit: q.Limit,
		TookMS: r.Took.Milliseconds(), OutOfTime: r.OutOfTime, Truncated: r.Truncated,
		DLQs: make([]searchedDLQJSON, len(r.DLQs)), Hits: make([]searchHitJSON, len(r.Hits)),
	}
	for i, d := range r.DLQs {
		out.DLQs[i] = searchedDLQJSON{d.DLQ, d.Depth, d.Scanned, d.Matches, d.Complete, d.Note}
	}
	for i := range r.Hits {
		h := &r.Hits[i]
		m := toMessageJSON(h.DLQ, h.After, &h.Message)
		m.Size = h.Size
		out.Hits[i] = searchHitJSON{DLQ: h.DLQ, Message: m, MessageURL: view.MessageURL(h.DLQ, h.Message.ID, h.After), PageURL: view.MessagePageURL(h.DLQ, h.Message.ID)}
	}
	return c.JSON(http.StatusOK, out)
}
