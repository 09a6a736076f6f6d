package web

import (
	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/offsets"
)

// routeShareOffsetsAPI adds a Kafka share group's start-offset resets under
// its own URLs: the consumer groups' plan → apply flow and log, for groups
// of kind offsets.KindShare.
func (s *Server) routeShareOffsetsAPI(api *echo.Group) {
	operator := requireRole(config.RoleOperator)
	api.POST("/kafka/share-groups/:cluster/:group/offsets/plan", func(c echo.Context) error { return s.offsetsPlan(c, offsets.KindShare) }, operator)
	api.POST("/kafka/share-groups/:cluster/:group/offsets/apply", func(c echo.Context) error { return s.offsetsApply(c, offsets.KindShare) }, operator)
	api.GET("/kafka/share-groups/:cluster/:group/offsets/resets", s.apiOffsetResets)
}
