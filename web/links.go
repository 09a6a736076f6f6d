package web

import (
	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
)

// Links between a DLQ and the readers of its sources are found in the
// principal's view (s.mon), as every list is: a link never names a group,
// queue or DLQ the viewer may not see, and a page links only to pages the
// viewer may open.

// dlqsOf are the DLQs r's messages die in, as the request's principal
// sees them.
func (s *Server) dlqsOf(c echo.Context, r queue.Reader) []queue.DLQ {
	for _, snap := range s.mon(c).Snapshots() {
		if snap.Broker == r.Broker && snap.Cluster == r.Cluster {
			return snap.DLQsOf(r)
		}
	}
	return nil
}

// readersOf are the readers of d's sources, as the request's principal
// sees them.
func (s *Server) readersOf(c echo.Context, d *queue.DLQ) []queue.Reader {
	for _, snap := range s.mon(c).Snapshots() {
		if snap.Broker == d.Broker && snap.Cluster == d.Cluster {
			return snap.ReadersOf(d)
		}
	}
	return nil
}
