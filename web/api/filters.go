package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/store"
	"github.com/queuewatch/queuewatch/web/view"
)

// filterJSON is a filter saved on a DLQ.
type filterJSON struct {
	DLQ   string    `json:"dlq"`
	Name  string    `json:"name"`
	Where string    `json:"where"`
	Who   string    `json:"who"`
	At    time.Time `json:"at"`
}

func toFilterJSON(f store.SavedFilter) filterJSON {
	return filterJSON{f.DLQ, f.Name, f.Where, f.Who, f.At}
}

// DLQFilters is GET /api/v1/dlqs/{id}/filters: the filters saved on the
// DLQ, shared by everyone who reads it.
func (s *Server) DLQFilters(c echo.Context) error {
	svc, id, err := s.dlqAndID(c)
	if err != nil {
		return err
	}
	fs, err := svc.Filters(c.Request().Context(), id)
	if err != nil {
		return s.DLQFail(c, err)
	}
	out := make([]filterJSON, len(fs))
	for i, f := range fs {
		out[i] = toFilterJSON(f)
	}
	return c.JSON(http.StatusOK, map[string]any{"dlq": id, "filters": out})
}

// SaveDLQFilter is PUT /api/v1/dlqs/{id}/filters/{name} {"where": "…"}.
func (s *Server) SaveDLQFilter(c echo.Context) error {
	svc, id, err := s.dlqAndID(c)
	if err != nil {
		return err
	}
	name, err := view.PathParam(c, "name")
	if err != nil {
		return err
	}
	var req struct {
		Where string `json:"where"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	f, err := svc.SaveFilter(c.Request().Context(), id, name, req.Where)
	if err != nil {
		return s.DLQFail(c, err)
	}
	return c.JSON(http.StatusOK, toFilterJSON(f))
}

// DeleteDLQFilter is DELETE /api/v1/dlqs/{id}/filters/{name}.
func (s *Server) DeleteDLQFilter(c echo.Context) error {
	svc, id, err := s.dlqAndID(c)
	if err != nil {
		return err
	}
	name, err := view.PathParam(c, "name")
	if err != nil {
		return err
	}
	if err := svc.DeleteFilter(c.Request().Context(), id, name); err != nil {
		return s.DLQFail(c, err)
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) dlqAndID(c echo.Context) (view.DLQs, string, error) {
	svc, err := s.DLQ(c)
	if err != nil {
		return view.DLQs{}, "", err
	}
	id, err := dlqID(c)
	return svc, id, err
}
