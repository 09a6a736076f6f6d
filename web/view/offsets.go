package view

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
	"github.com/queuewatch/queuewatch/web/auth"
	"github.com/queuewatch/queuewatch/web/components"
)

// OffsetResets plans and applies consumer-group offset resets;
// offsets.Service implements it (app adds the audit store's listing),
// recording applies in the audit store the replays use.
type OffsetResets interface {
	// Plan plans req on a Kafka cluster (a consumer group, or a share
	// group by req.Kind); it changes nothing. An unknown cluster is a
	// queue.ErrNotFound.
	Plan(ctx context.Context, cluster string, req offsets.Request) (offsets.Plan, error)
	// Apply applies plan as who, audited and counted whatever its result.
	Apply(ctx context.Context, plan offsets.Plan, who string) (offsets.Receipt, error)
	// Resets lists the newest resets (and pauses) q selects, newest first.
	Resets(ctx context.Context, q store.ResetQuery) ([]store.OffsetReset, error)

	// The plans the API issued are kept by the service, in the store every
	// replica shares, not by the server: apply takes only a plan_id, and
	// may reach another replica than the plan did.

	// KeepPlan keeps plan, just issued, for its apply.
	KeepPlan(ctx context.Context, plan offsets.Plan) error
	// IssuedPlan returns the kept plan id of cluster's group:
	// offsets.ErrUnknownPlan when none is kept (never issued, applied,
	// pushed out, another group's), offsets.ErrPlanExpired past
	// offsets.PlanTTL.
	IssuedPlan(ctx context.Context, id, cluster, group string) (offsets.Plan, error)
	// DropPlan forgets plan id once applied.
	DropPlan(ctx context.Context, id string) error
}

var errNoResets = echo.NewHTTPError(http.StatusServiceUnavailable, "offset resets not configured")

// Resets returns the reset service or the 503 every offsets endpoint
// answers without one.
func (s *Server) Resets() (OffsetResets, error) {
	if s.opts.Offsets == nil {
		return nil, errNoResets
	}
	return s.opts.Offsets, nil
}

// ResetLog lists the newest resets, pauses and resumes of the readers the
// principal sees, limit at most; none without a reset service.
func (s *Server) ResetLog(ctx context.Context, limit int) ([]store.OffsetReset, error) {
	if s.opts.Offsets == nil {
		return nil, nil
	}
	return s.opts.Offsets.Resets(ctx, store.ResetQuery{Visible: auth.SeenResets(ctx), Limit: limit})
}

// ResetViews fills d's offset resets from the audit log.
func (s *Server) ResetViews(ctx context.Context, d *components.JobsData) error {
	if s.opts.Offsets == nil {
		d.ResetsOff = true
		return nil
	}
	list, err := s.ResetLog(ctx, components.PageSize)
	if err != nil {
		return err
	}
	for _, r := range list {
		v := components.ResetView{At: r.At, Who: r.Who, Cluster: r.Cluster, Group: r.Group, PlanID: r.PlanID, Result: r.Result}
		var e offsets.Entry
		var pause struct {
			Action string             `json:"action"`
			State  offsets.PauseState `json:"state"`
			Error  string             `json:"error"`
		}
		// An entry that does not decode still shows who did what, when.
		if json.Unmarshal(r.Entry, &pause) == nil && pause.Action != "" {
			// A JetStream consumer's pause or resume, or a connector's restart, logged beside the resets.
			v.To, v.Error = pause.Action, pause.Error
			v.Page, v.Note = resetPage(r, pause.Action)
			if pause.State.Paused {
				v.To += " until " + pause.State.Until.Format(time.RFC3339)
			}
		} else if json.Unmarshal(r.Entry, &e) == nil {
			v.To, v.Error = e.Plan.To.String(), e.Receipt.Error
			v.Page, v.Note = resetPage(r, e.Plan.Kind)
			v.Partitions = e.Plan.Totals.Changed
			v.Reprocess, v.Skip = e.Plan.Totals.Reprocess, e.Plan.Totals.Skip
			for _, p := range e.Receipt.Partitions {
				if p.Result == "committed" {
					v.Committed++
				}
			}
		}
		if v.Page == "" {
			v.Page, v.Note = resetPage(r, "")
		}
		d.Resets = append(d.Resets, v)
	}
	return nil
}

// resetPage is the page of the reader a reset-log record names, and the
// note that says its kind: what names it is the record's broker and its
// entry's kind (offsets.KindShare) or action ("restart").
func resetPage(r store.OffsetReset, kindOrAction string) (page, note string) {
	scope, name, scoped := strings.Cut(r.Group, "/")
	switch {
	case r.Broker == string(queue.NATS) && scoped:
		return queue.ConsumerPage(r.Cluster, scope, name), "nats:"
	case kindOrAction == "restart" && scoped:
		return queue.ConnectorPage(r.Cluster, scope, name), "connector · kafka:"
	case kindOrAction == offsets.KindShare:
		return queue.ShareGroupPage(r.Cluster, r.Group), "share group · kafka:"
	}
	return queue.GroupPage(r.Cluster, r.Group), "kafka:"
}

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

// ConsumerActions returns the service, or the 503 its endpoints answer
// without one.
func (s *Server) ConsumerActions() (ConsumerActions, error) {
	ca, ok := s.opts.Offsets.(ConsumerActions)
	if !ok {
		return nil, errNoConsumerActions
	}
	return ca, nil
}

// ConsumerResetAPI is the base of a consumer's reset endpoints,
// …/offsets (plan, apply).
func ConsumerResetAPI(c *queue.StreamConsumer) string {
	return ConsumerAPI(c) + "/offsets"
}

// ConsumerAPI is a consumer's URL space in the API.
func ConsumerAPI(c *queue.StreamConsumer) string {
	return "/api/v1/nats/consumers/" + url.PathEscape(c.Cluster) + "/" + url.PathEscape(c.Stream) + "/" + url.PathEscape(c.Name)
}

// RecentPause returns con with the last pause or resume made through any
// replica after its snapshot was polled laid over it. The page shows the
// poll's state when the store does not answer.
func (s *Server) RecentPause(ctx context.Context, con queue.StreamConsumer, polled time.Time) queue.StreamConsumer {
	ca, err := s.ConsumerActions()
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

// Plan plans req for own — a Kafka consumer or share group (req.Kind), or
// a JetStream consumer — and has the service keep the plan for its apply,
// once the principal may see everything req names besides own
// (auth.CheckPlanNames: a group: spec's group, the topics). It changes
// nothing at the broker.
func (s *Server) Plan(c echo.Context, own queue.Reader, req offsets.Request) (offsets.Plan, error) {
	if err := auth.CheckPlanNames(c, s.Mon(c), own, req); err != nil {
		return offsets.Plan{}, err
	}
	svc, err := s.Resets()
	if err != nil {
		return offsets.Plan{}, err
	}
	ctx := c.Request().Context()
	var plan offsets.Plan
	if own.Broker == queue.NATS {
		ca, caErr := s.ConsumerActions()
		if caErr != nil {
			return offsets.Plan{}, caErr
		}
		plan, err = ca.PlanOn(ctx, string(queue.NATS), own.Cluster, req)
	} else {
		plan, err = svc.Plan(ctx, own.Cluster, req)
	}
	if err != nil {
		return offsets.Plan{}, err
	}
	// A plan nobody can apply is no answer: a failure is the request's.
	if err := svc.KeepPlan(ctx, plan); err != nil {
		return offsets.Plan{}, fmt.Errorf("%w: the plan could not be kept for its apply: %w", ErrPlanStore, err)
	}
	return plan, nil
}

// ErrPlanStore is wrapped around a failure to keep, read or drop an
// issued plan in the service's store: a 500, logged.
var ErrPlanStore = errors.New("plan store")

// ConnectorActions restart Kafka Connect connectors, audited in the
// reset log like pauses.
type ConnectorActions interface {
	// RestartConnector restarts connector and its failed tasks as who.
	RestartConnector(ctx context.Context, cluster, connect, connector, who string) (offsets.RestartState, error)
}

var errNoConnectorActions = echo.NewHTTPError(http.StatusServiceUnavailable, "connector restarts not configured")

// ConnectorActions returns the service, or the 503 the restart answers
// without one.
func (s *Server) ConnectorActions() (ConnectorActions, error) {
	ca, ok := s.opts.Offsets.(ConnectorActions)
	if !ok {
		return nil, errNoConnectorActions
	}
	return ca, nil
}
