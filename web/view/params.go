package view

import (
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/queuewatch/queuewatch/web/components"
)

// PathParam returns a path parameter as the name it stands for, decoded
// exactly once. It is the only way handlers read path parameters.
//
// echo routes on the escaped path (URL.RawPath) when the request has one,
// so that an escaped "/" stays inside its segment, and then the parameter
// is still escaped. Go sets RawPath only when the path's escaping differs
// from the default one; otherwise echo routes on the decoded URL.Path and
// the parameter is already decoded. Decoding it again would turn the group
// "a%41-0" (linked as a%2541-0) into "aA-0".
func PathParam(c echo.Context, name string) (string, error) {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" {
		return v, nil
	}
	u, err := url.PathUnescape(v)
	if err != nil {
		return "", echo.NewHTTPError(http.StatusBadRequest, "malformed "+name+" in path")
	}
	return u, nil
}

// SinceJSON is a reader's status_since: when its current non-ok condition
// began, omitted when the reader is ok (or the onset is not known).
func SinceJSON(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// This file is the chart plumbing every page with a history shares: a
// kept history as a sparkline's values, the sparkline of a count, and the
// range of a page's chart.

// Values maps a kept history, oldest first, to the numbers a sparkline
// draws.
func Values[P any](h []P, v func(P) int64) []float64 {
	out := make([]float64, len(h))
	for i, p := range h {
		out[i] = float64(v(p))
	}
	return out
}

// CountSpark is the sparkline of a count over its kept history, titled
// "what · now N · peak P".
func CountSpark[P any](h []P, v func(P) int64, what string, now int64) components.Spark {
	var peak int64
	for _, p := range h {
		peak = max(peak, v(p))
	}
	return components.NewSpark(Values(h, v), what+" · now "+components.Exact(now)+" · peak "+components.Exact(peak))
}

// ChartRange is the time range a page's chart shows: ?range=15m or 6h,
// else 1h.
func ChartRange(c echo.Context) string {
	if r := c.QueryParam("range"); r == "15m" || r == "6h" {
		return r
	}
	return "1h"
}

// PathValues are the path parameters names, in order.
func PathValues(c echo.Context, names []string) ([]string, error) {
	v := make([]string, len(names))
	for i, name := range names {
		var err error
		if v[i], err = PathParam(c, name); err != nil {
			return nil, err
		}
	}
	return v, nil
}
