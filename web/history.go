package web

import (
	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/web/components"
)

// This file is the chart plumbing every page with a history shares: a
// kept history as a sparkline's values, the sparkline of a count, and the
// range of a page's chart.

// values maps a kept history, oldest first, to the numbers a sparkline
// draws.
func values[P any](h []P, v func(P) int64) []float64 {
	out := make([]float64, len(h))
	for i, p := range h {
		out[i] = float64(v(p))
	}
	return out
}

// countSpark is the sparkline of a count over its kept history, titled
// "what · now N · peak P".
func countSpark[P any](h []P, v func(P) int64, what string, now int64) components.Spark {
	var peak int64
	for _, p := range h {
		peak = max(peak, v(p))
	}
	return components.NewSpark(values(h, v), what+" · now "+components.Exact(now)+" · peak "+components.Exact(peak))
}

// chartRange is the time range a page's chart shows: ?range=15m or 6h,
// else 1h.
func chartRange(c echo.Context) string {
	if r := c.QueryParam("range"); r == "15m" || r == "6h" {
		return r
	}
	return "1h"
}
