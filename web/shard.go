package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// shardElsewhere answers a page of a cluster that another replica polls
// with a page naming that replica, and a link to the same page there:
// this replica holds no data for it, and a bare 404 would read as "no
// such cluster". The broker is the page's first path segment
// (/kafka/prod/…, /outbox/orders) or, for a DLQ, its id; the API keeps
// its 404s, whose clients address a replica on purpose.
func (s *Server) shardElsewhere(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.opts.ShardOwner == nil || isAPI(c) || c.Request().Method != http.MethodGet {
			return next(c)
		}
		b, cluster := pageCluster(c)
		if cluster == "" {
			return next(c)
		}
		place, ok := s.opts.ShardOwner(b, cluster)
		if !ok {
			return next(c)
		}
		d := components.ShardData{
			Chrome: s.ui.Chrome(c, string(b)+":"+cluster, ""),
			Source: string(b) + ":" + cluster, Owner: place.Index, Count: place.Count,
		}
		if place.Base != "" {
			d.URL = strings.TrimRight(place.Base, "/") + c.Request().URL.RequestURI()
		}
		return view.Render(c, http.StatusMisdirectedRequest, components.ShardElsewhere(d))
	}
}

// pageCluster is the broker and cluster a page is about, or an empty
// cluster for a page about none.
func pageCluster(c echo.Context) (queue.Broker, string) {
	if id := c.Param("id"); id != "" && strings.HasPrefix(c.Path(), "/dlq/") {
		ref, err := queue.ParseDLQID(id)
		if err != nil {
			return "", ""
		}
		return ref.Broker, ref.Cluster
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(c.Request().URL.Path, "/"), "/")
	cluster := c.Param("cluster")
	if cluster == "" {
		cluster = c.Param("source")
	}
	return queue.Broker(first), cluster
}
