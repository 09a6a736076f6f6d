package api

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
	"github.com/queuewatch/queuewatch/web/view"
)

// consumerGroup reads :cluster, :stream and :consumer (the route's need
// checked the principal's role on the consumer) and names the consumer as
// package offsets does.
func consumerGroup(c echo.Context) (cluster, group string, err error) {
	var names [3]string
	for i, p := range []string{"cluster", "stream", "consumer"} {
		if names[i], err = view.PathParam(c, p); err != nil {
			return "", "", err
		}
		if names[i] == "" && i > 0 {
			return "", "", echo.NewHTTPError(http.StatusBadRequest, p+" name is empty")
		}
	}
	return names[0], names[1] + "/" + names[2], nil
}

// ConsumerPlan plans a reset of the path's JetStream consumer.
func (s *Server) ConsumerPlan(c echo.Context) error {
	if _, err := s.ConsumerActions(); err != nil {
		return err
	}
	cluster, group, err := consumerGroup(c)
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
	stream, name, _ := strings.Cut(group, "/")
	plan, err := s.Plan(c, queue.Reader{Broker: queue.NATS, Cluster: cluster, Scope: stream, Name: name}, req)
	if err != nil {
		return s.offsetsFail(c, err)
	}
	return c.JSON(http.StatusOK, plan)
}

// ConsumerApply applies a plan of the path's JetStream consumer.
func (s *Server) ConsumerApply(c echo.Context) error {
	svc, err := s.Resets()
	if err != nil {
		return err
	}
	cluster, group, err := consumerGroup(c)
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
	if plan.Broker != string(queue.NATS) {
		return echo.NewHTTPError(http.StatusNotFound, "unknown plan_id for this consumer: re-plan")
	}
	r, err := s.applyOffsets(c.Request().Context(), svc, plan)
	if err != nil {
		return s.offsetsFail(c, err)
	}
	return c.JSON(http.StatusOK, r)
}

// ConsumerResets lists the resets and pauses of the path's consumer.
func (s *Server) ConsumerResets(c echo.Context) error {
	svc, err := s.Resets()
	if err != nil {
		return err
	}
	cluster, group, err := consumerGroup(c)
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
	out := make([]any, 0, len(list))
	for _, r := range list {
		if r.Broker == string(queue.NATS) {
			out = append(out, r)
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"resets": out})
}

// pauseRequest is the body of POST …/pause.
type pauseRequest struct {
	PauseUntil time.Time `json:"pause_until"`
}

// ConsumerPause pauses the path's JetStream consumer (servers ≥ 2.11).
func (s *Server) ConsumerPause(c echo.Context) error {
	ca, err := s.ConsumerActions()
	if err != nil {
		return err
	}
	cluster, group, err := consumerGroup(c)
	if err != nil {
		return err
	}
	var body pauseRequest
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	if body.PauseUntil.IsZero() {
		return echo.NewHTTPError(http.StatusBadRequest, `pause_until is required: an RFC 3339 time like "2026-12-05T18:00:00Z"`)
	}
	ctx := c.Request().Context()
	st, err := ca.Pause(ctx, string(queue.NATS), cluster, group, body.PauseUntil, view.Who(ctx))
	return s.pauseAnswer(c, st, err)
}

// ConsumerResume resumes the path's paused JetStream consumer.
func (s *Server) ConsumerResume(c echo.Context) error {
	ca, err := s.ConsumerActions()
	if err != nil {
		return err
	}
	cluster, group, err := consumerGroup(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	st, err := ca.Resume(ctx, string(queue.NATS), cluster, group, view.Who(ctx))
	return s.pauseAnswer(c, st, err)
}

// pauseAnswer answers a pause or resume: the state, or the error's status
// (a deadline in the past is 400, an old server 501). A pause that took
// effect but was not recorded (the service's only ErrAudit: not in the
// audit log, or not kept for the consumer pages) is answered with its
// state and logged. The service keeps the pause for every replica's
// consumer page (ConsumerActions.RecentPause).
func (s *Server) pauseAnswer(c echo.Context, st offsets.PauseState, err error) error {
	switch {
	case err == nil:
	case errors.Is(err, offsets.ErrAudit):
		s.Logger().Error("consumer pause not recorded", "path", c.Request().URL.Path, "err", err)
	case errors.Is(err, offsets.ErrPauseInPast):
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	default:
		return s.offsetsFail(c, err)
	}
	return c.JSON(http.StatusOK, st)
}
