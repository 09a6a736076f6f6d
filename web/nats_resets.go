package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// ConsumerActions are the resets and pauses of JetStream consumers. The
// reset service (Options.Offsets) implements it beside OffsetResets; the
// consumer page offers what it finds. A consumer is named to package
// offsets as <stream>/<consumer>, on a cluster of broker nats.
type ConsumerActions interface {
	// PlanOn plans req on cluster of broker; it changes nothing.
	PlanOn(ctx context.Context, broker, cluster string, req offsets.Request) (offsets.Plan, error)
	// Pause pauses group until until, audited.
	Pause(ctx context.Context, broker, cluster, group string, until time.Time, who string) (offsets.PauseState, error)
	// Resume resumes group at once, audited.
	Resume(ctx context.Context, broker, cluster, group, who string) (offsets.PauseState, error)
	// RecentPause is the last pause or resume of group made through any
	// replica sharing the service's store, if it was made after polled:
	// the consumer page lays it over a snapshot that cannot show it yet
	// (polls may be minutes apart).
	RecentPause(ctx context.Context, broker, cluster, group string, polled time.Time) (offsets.PauseState, bool, error)
}

var errNoConsumerActions = echo.NewHTTPError(http.StatusServiceUnavailable, "consumer resets not configured")

// consumerActions returns the service, or the 503 its endpoints answer
// without one.
func (s *Server) consumerActions() (ConsumerActions, error) {
	ca, ok := s.opts.Offsets.(ConsumerActions)
	if !ok {
		return nil, errNoConsumerActions
	}
	return ca, nil
}

// consumerGroup reads :cluster, :stream and :consumer (the route's need
// checked the principal's role on the consumer) and names the consumer as
// package offsets does.
func consumerGroup(c echo.Context) (cluster, group string, err error) {
	var names [3]string
	for i, p := range []string{"cluster", "stream", "consumer"} {
		if names[i], err = pathParam(c, p); err != nil {
			return "", "", err
		}
		if names[i] == "" && i > 0 {
			return "", "", echo.NewHTTPError(http.StatusBadRequest, p+" name is empty")
		}
	}
	return names[0], names[1] + "/" + names[2], nil
}

// ConsumerResetAPI is the base of a consumer's reset endpoints,
// …/offsets (plan, apply).
func ConsumerResetAPI(c *queue.StreamConsumer) string {
	return consumerAPI(c) + "/offsets"
}

// consumerAPI is a consumer's URL space in the API.
func consumerAPI(c *queue.StreamConsumer) string {
	return "/api/v1/nats/consumers/" + url.PathEscape(c.Cluster) + "/" + url.PathEscape(c.Stream) + "/" + url.PathEscape(c.Name)
}

func (s *Server) apiConsumerPlan(c echo.Context) error {
	ca, err := s.consumerActions()
	if err != nil {
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
	if err := checkPlanNames(c, s.mon(c), queue.Reader{Broker: queue.NATS, Cluster: cluster, Scope: stream, Name: name}, req); err != nil {
		return err
	}
	plan, err := ca.PlanOn(c.Request().Context(), string(queue.NATS), cluster, req)
	if err != nil {
		return s.offsetsFail(c, err)
	}
	// ca is Options.Offsets, an OffsetResets: the plans' keeper.
	if err := keepPlan(c.Request().Context(), s.opts.Offsets, plan); err != nil {
		return s.offsetsFail(c, err)
	}
	return c.JSON(http.StatusOK, plan)
}

func (s *Server) apiConsumerApply(c echo.Context) error {
	svc, err := s.resets()
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

func (s *Server) apiConsumerResets(c echo.Context) error {
	svc, err := s.resets()
	if err != nil {
		return err
	}
	cluster, group, err := consumerGroup(c)
	if err != nil {
		return err
	}
	limit, err := intQuery(c, "limit", 100, 1, 1000)
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

func (s *Server) apiConsumerPause(c echo.Context) error {
	ca, err := s.consumerActions()
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
	st, err := ca.Pause(ctx, string(queue.NATS), cluster, group, body.PauseUntil, who(ctx))
	return s.pauseAnswer(c, st, err)
}

func (s *Server) apiConsumerResume(c echo.Context) error {
	ca, err := s.consumerActions()
	if err != nil {
		return err
	}
	cluster, group, err := consumerGroup(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	st, err := ca.Resume(ctx, string(queue.NATS), cluster, group, who(ctx))
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
		s.opts.Logger.Error("consumer pause not recorded", "path", c.Request().URL.Path, "err", err)
	case errors.Is(err, offsets.ErrPauseInPast):
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	default:
		return s.offsetsFail(c, err)
	}
	return c.JSON(http.StatusOK, st)
}

// recentPause returns con with the last pause or resume made through any
// replica after its snapshot was polled laid over it. The page shows the
// poll's state when the store does not answer.
func (s *Server) recentPause(ctx context.Context, con queue.StreamConsumer, polled time.Time) queue.StreamConsumer {
	ca, err := s.consumerActions()
	if err != nil {
		return con
	}
	st, ok, err := ca.RecentPause(ctx, string(queue.NATS), con.Cluster, con.Stream+"/"+con.Name, polled)
	if err != nil {
		s.opts.Logger.Warn("recent consumer pause not read; the page shows the last poll's", "cluster", con.Cluster,
			"stream", con.Stream, "consumer", con.Name, "err", err)
	}
	if ok {
		con.Paused, con.PauseUntil = st.Paused, st.Until
	}
	return con
}
