package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
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

// consumerGroup reads :cluster, :stream and :consumer, a consumer the
// principal holds role for, and names it as package offsets does.
func consumerGroup(c echo.Context, role config.Role) (cluster, group string, err error) {
	var names [3]string
	for i, p := range []string{"cluster", "stream", "consumer"} {
		if names[i], err = pathParam(c, p); err != nil {
			return "", "", err
		}
		if names[i] == "" && i > 0 {
			return "", "", echo.NewHTTPError(http.StatusBadRequest, p+" name is empty")
		}
	}
	r := queue.Reader{Broker: queue.NATS, Cluster: names[0], Scope: names[1], Name: names[2]}
	if err := checkReader(c, role, r); err != nil {
		return "", "", err
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
	cluster, group, err := consumerGroup(c, config.RoleOperator)
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
	if err := s.checkPlanNames(c, queue.Reader{Broker: queue.NATS, Cluster: cluster, Scope: stream, Name: name}, req); err != nil {
		return err
	}
	plan, err := ca.PlanOn(c.Request().Context(), string(queue.NATS), cluster, req)
	if err != nil {
		return s.offsetsFail(c, err)
	}
	s.plans.put(plan, time.Now())
	return c.JSON(http.StatusOK, plan)
}

func (s *Server) apiConsumerApply(c echo.Context) error {
	svc, err := s.resets()
	if err != nil {
		return err
	}
	cluster, group, err := consumerGroup(c, config.RoleOperator)
	if err != nil {
		return err
	}
	var body applyRequest
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	plan, err := s.plans.get(body.PlanID, cluster, group, time.Now())
	if err != nil {
		return err
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
	cluster, group, err := consumerGroup(c, config.RoleViewer)
	if err != nil {
		return err
	}
	limit, err := intQuery(c, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	list, err := svc.Resets(c.Request().Context(), cluster, group, limit)
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
	cluster, group, err := consumerGroup(c, config.RoleOperator)
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
	return s.pauseAnswer(c, cluster, group, st, err)
}

func (s *Server) apiConsumerResume(c echo.Context) error {
	ca, err := s.consumerActions()
	if err != nil {
		return err
	}
	cluster, group, err := consumerGroup(c, config.RoleOperator)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	st, err := ca.Resume(ctx, string(queue.NATS), cluster, group, who(ctx))
	return s.pauseAnswer(c, cluster, group, st, err)
}

// pauseAnswer answers a pause or resume: the state, or the error's status
// (a deadline in the past is 400, an old server 501). A pause that took
// effect but was not audited (the service's only ErrAudit) is answered
// with its state and logged.
func (s *Server) pauseAnswer(c echo.Context, cluster, group string, st offsets.PauseState, err error) error {
	switch {
	case err == nil:
	case errors.Is(err, offsets.ErrAudit):
		s.opts.Logger.Error("consumer pause not recorded in the audit log", "path", c.Request().URL.Path, "err", err)
	case errors.Is(err, offsets.ErrPauseInPast):
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	default:
		return s.offsetsFail(c, err)
	}
	s.pauses.put(cluster, group, st, time.Now())
	return c.JSON(http.StatusOK, st)
}

// recentPauses are the pauses and resumes made through this server, so
// the consumer page shows them before the next poll does (polls may be
// minutes apart).
type recentPauses struct {
	mu sync.Mutex
	m  map[[2]string]recentPause
}

type recentPause struct {
	st offsets.PauseState
	at time.Time
}

func (p *recentPauses) put(cluster, group string, st offsets.PauseState, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[[2]string]recentPause{}
	}
	p.m[[2]string{cluster, group}] = recentPause{st: st, at: now}
}

// apply returns c with a pause made after its poll (polled) laid over it;
// a pause the poll already saw is forgotten.
func (p *recentPauses) apply(c queue.StreamConsumer, polled time.Time) queue.StreamConsumer {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := [2]string{c.Cluster, c.Stream + "/" + c.Name}
	r, ok := p.m[k]
	switch {
	case !ok:
	case !polled.Before(r.at):
		delete(p.m, k)
	default:
		c.Paused, c.PauseUntil = r.st.Paused, r.st.Until
	}
	return c
}
