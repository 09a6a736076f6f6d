package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
	"github.com/queuewatch/queuewatch/web/view"
)

// planRequest is the body of POST …/offsets/plan.
type planRequest struct {
	To     string   `json:"to"`
	Topics []string `json:"topics"`
}

// applyRequest is the body of POST …/offsets/apply.
type applyRequest struct {
	PlanID string `json:"plan_id"`
}

// groupParams reads the :cluster and :group path parameters (the route's
// need checked the principal's role on the group).
func groupParams(c echo.Context) (cluster, group string, err error) {
	if cluster, err = view.PathParam(c, "cluster"); err != nil {
		return "", "", err
	}
	if group, err = view.PathParam(c, "group"); err != nil {
		return "", "", err
	}
	if group == "" {
		return "", "", echo.NewHTTPError(http.StatusBadRequest, "group name is empty")
	}
	return cluster, group, nil
}

// OffsetsPlan plans a reset of the path's consumer group.
func (s *Server) OffsetsPlan(c echo.Context) error { return s.PlanOf(c, "") }

// PlanOf plans a reset of the path's group of kind (offsets.Kinded).
func (s *Server) PlanOf(c echo.Context, kind string) error {
	if _, err := s.Resets(); err != nil {
		return err
	}
	cluster, group, err := groupParams(c)
	if err != nil {
		return err
	}
	var body planRequest
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	req, err := body.request(group)
	if err != nil {
		return err
	}
	req.Kind = kind
	plan, err := s.Plan(c, queue.Reader{Broker: queue.Kafka, Cluster: cluster, Name: group}, req)
	if err != nil {
		return s.offsetsFail(c, err)
	}
	return c.JSON(http.StatusOK, plan)
}

// request is the offsets request of group that b asks for; 400 when the
// spec or a topic is malformed.
func (b planRequest) request(group string) (offsets.Request, error) {
	spec, err := offsets.ParseSpec(b.To)
	if err != nil {
		return offsets.Request{}, echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	req := offsets.Request{Group: group, To: spec}
	for _, t := range b.Topics {
		ts, err := offsets.ParseTopicScope(t)
		if err != nil {
			return offsets.Request{}, echo.NewHTTPError(http.StatusBadRequest, err.Error())
		}
		req.Topics = append(req.Topics, ts)
	}
	return req, nil
}

// OffsetsApply applies a plan of the path's consumer group.
func (s *Server) OffsetsApply(c echo.Context) error { return s.ApplyOf(c, "") }

// ApplyOf applies a plan of the path's group of kind.
func (s *Server) ApplyOf(c echo.Context, kind string) error {
	svc, err := s.Resets()
	if err != nil {
		return err
	}
	cluster, group, err := groupParams(c)
	if err != nil {
		return err
	}
	var body applyRequest
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	plan, err := issuedPlan(c, svc, body.PlanID, cluster, group)
	if err != nil {
		return s.offsetsFail(c, err)
	}
	if plan.Kind != kind {
		// A share group's plan under a consumer group's URL, or back.
		return echo.NewHTTPError(http.StatusNotFound, "unknown plan_id for this group: re-plan")
	}
	r, err := s.applyOffsets(c.Request().Context(), svc, plan)
	if err != nil {
		return s.offsetsFail(c, err)
	}
	return c.JSON(http.StatusOK, r)
}

// applyOffsets applies plan as the request's principal. A receipt with
// partitions is the answer even when some failed (it says which); an
// error is returned only for an apply that committed nothing.
func (s *Server) applyOffsets(ctx context.Context, svc view.OffsetResets, plan offsets.Plan) (offsets.Receipt, error) {
	r, err := svc.Apply(ctx, plan, view.Who(ctx))
	if err != nil && len(r.Partitions) == 0 {
		return r, err
	}
	if err != nil {
		r.Error = err.Error()
	}
	if errors.Is(err, offsets.ErrAudit) {
		// The commit ran but the log still says "applying": an operator
		// must know the log is wrong.
		s.Logger().Error("offset reset applied but its result was not recorded in the audit log",
			"cluster", r.Cluster, "group", r.Group, "plan_id", r.PlanID, "who", r.Who, "result", r.Result, "err", err)
	}
	// A plan commits once: applied again it could only be stale (and the
	// apply would say so), so a drop that fails is logged, not answered.
	if err := svc.DropPlan(ctx, plan.ID); err != nil {
		s.Logger().Warn("applied plan not dropped; it expires by itself", "plan_id", plan.ID, "err", err)
	}
	return r, nil
}

// issuedPlan is the plan id of cluster's group that the service kept when
// it was issued, through whichever replica.
func issuedPlan(c echo.Context, svc view.OffsetResets, id, cluster, group string) (offsets.Plan, error) {
	plan, err := svc.IssuedPlan(c.Request().Context(), id, cluster, group)
	if err != nil && !errors.Is(err, offsets.ErrUnknownPlan) && !errors.Is(err, offsets.ErrPlanExpired) {
		return plan, fmt.Errorf("%w: %w", view.ErrPlanStore, err)
	}
	return plan, err
}

// OffsetResets lists the resets of the path's group.
func (s *Server) OffsetResets(c echo.Context) error {
	svc, err := s.Resets()
	if err != nil {
		return err
	}
	cluster, group, err := groupParams(c)
	if err != nil {
		return err
	}
	limit, err := view.IntQuery(c, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	list, err := svc.Resets(c.Request().Context(), store.ResetQuery{Cluster: cluster, Group: group, Limit: limit})
	if err != nil {
		return s.offsetsFail(c, err)
	}
	if list == nil {
		list = []store.OffsetReset{}
	}
	return c.JSON(http.StatusOK, map[string]any{"resets": list})
}

// offsetsFail answers a reset service error with the status callers
// branch on: a refused or stale apply is 409 with the reason.
func (s *Server) offsetsFail(c echo.Context, err error) error {
	var he *echo.HTTPError
	switch {
	case errors.As(err, &he):
		return err
	case errors.Is(err, offsets.ErrGroupActive), errors.Is(err, offsets.ErrStale), errors.Is(err, offsets.ErrPlanModified), errors.Is(err, offsets.ErrBusy):
		return echo.NewHTTPError(http.StatusConflict, err.Error())
	case errors.Is(err, offsets.ErrSpec), errors.Is(err, offsets.ErrScope):
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	case errors.Is(err, queue.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, err.Error())
	case errors.Is(err, offsets.ErrUnsupported):
		return echo.NewHTTPError(http.StatusNotImplemented, err.Error())
	case errors.Is(err, offsets.ErrUnknownPlan):
		return echo.NewHTTPError(http.StatusNotFound, offsets.ErrUnknownPlan.Error())
	case errors.Is(err, offsets.ErrPlanExpired):
		return echo.NewHTTPError(http.StatusGone, offsets.ErrPlanExpired.Error())
	case errors.Is(err, offsets.ErrAudit), errors.Is(err, view.ErrPlanStore):
		s.Logger().Error("offsets request failed", "path", c.Path(), "err", err)
		return echo.NewHTTPError(http.StatusInternalServerError, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return echo.NewHTTPError(http.StatusGatewayTimeout, err.Error())
	}
	s.Logger().Error("offsets request failed", "path", c.Path(), "err", err)
	return echo.NewHTTPError(http.StatusBadGateway, err.Error())
}
