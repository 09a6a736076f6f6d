package web

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/audit"
	"github.com/queuewatch/queuewatch/queue"
)

// auditEvent is one line of the one audit feed: any action taken through
// queuewatch — a replay, move, delete or restore (a job), a read of dead
// letters' bodies or an unmask, an offset reset, a pause or a resume —
// with who, on what and how it ended.
type auditEvent struct {
	At     time.Time `json:"at"`
	Who    string    `json:"who"`
	Action string    `json:"action"` // replay, move, delete, restore, read, unmask, reset, pause, resume
	Object string    `json:"object"` // a DLQ ID, or a reader ID (broker:cluster:scope:name)
	Result string    `json:"result"` // a job's state, a read's surface, a reset's result
	Ref    string    `json:"ref"`    // the job ID, body-read ID or plan ID
}

// auditFilter selects audit events: each field set must match (object as
// a substring, dlq whole), as the API's who, object, action and dlq
// parameters say.
type auditFilter struct{ who, object, action, dlq string }

func (f auditFilter) keeps(e auditEvent) bool {
	return (f.who == "" || e.Who == f.who) && (f.action == "" || e.Action == f.action) &&
		(f.object == "" || strings.Contains(e.Object, f.object)) && (f.dlq == "" || e.Object == f.dlq)
}

// auditWindow is how many of the newest rows of each kind (jobs, body
// reads, resets) the feed searches when it is filtered by who, object or
// action; without a filter it reads only the limit of each.
const auditWindow = 1000

// auditFeed is what the principal may read of every action, newest first,
// cut to limit after f.
func (s *Server) auditFeed(c echo.Context, f auditFilter, limit int) ([]auditEvent, error) {
	ctx, seen := c.Request().Context(), seenDLQs(c)
	window := limit
	if f != (auditFilter{}) {
		window = max(limit, auditWindow)
	}
	var out []auditEvent
	if s.opts.DLQs != nil {
		jobs, err := s.opts.DLQs.Jobs(ctx, dlqreplay.JobQuery{Visible: seen, Limit: window})
		if err != nil {
			return nil, err
		}
		for _, j := range jobs {
			out = append(out, auditEvent{At: j.Created, Who: j.Who, Action: string(j.Action), Object: j.DLQ, Result: string(j.State), Ref: j.ID})
		}
	}
	reads, err := s.opts.Inspect.Reads(ctx, audit.ReadQuery{Visible: seen, Limit: window})
	if err != nil {
		return nil, err
	}
	for _, r := range reads {
		action := "read"
		if r.Clear {
			action = "unmask"
		}
		out = append(out, auditEvent{At: r.At, Who: r.Who, Action: action, Object: r.DLQ, Result: r.Surface, Ref: strconv.FormatInt(r.ID, 10)})
	}
	resets, err := s.resetEvents(ctx, window)
	if err != nil {
		return nil, err
	}
	out = append(out, resets...)
	out = slices.DeleteFunc(out, func(e auditEvent) bool { return !f.keeps(e) })
	slices.SortStableFunc(out, func(a, b auditEvent) int { return b.At.Compare(a.At) })
	return out[:min(len(out), limit)], nil
}

// resetEvents are the offset resets, pauses and resumes of readers the
// principal sees, among the newest limit.
func (s *Server) resetEvents(ctx context.Context, limit int) ([]auditEvent, error) {
	if s.opts.Offsets == nil {
		return nil, nil
	}
	list, err := s.opts.Offsets.Resets(ctx, audit.ResetQuery{Visible: seenResets(ctx), Limit: limit})
	if err != nil {
		return nil, err
	}
	var out []auditEvent
	for _, r := range list {
		out = append(out, auditEvent{
			At: r.At, Who: r.Who, Action: cmp.Or(pauseAction(r.Entry), "reset"),
			Object: resetReader(r).ID(), Result: r.Result, Ref: r.PlanID,
		})
	}
	return out, nil
}

// pauseAction is "pause" or "resume" for a pause's log entry, "" for a
// reset's.
func pauseAction(entry json.RawMessage) string {
	var e struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(entry, &e) // a reset's entry has no action
	return e.Action
}

// resetReader is the reader a reset record names: a group, or a JetStream
// consumer's "stream/consumer".
func resetReader(r audit.OffsetReset) queue.Reader {
	rd := queue.Reader{Broker: queue.Broker(r.Broker), Cluster: r.Cluster, Name: r.Group}
	if rd.Broker == queue.NATS {
		if stream, name, ok := strings.Cut(r.Group, "/"); ok {
			rd.Scope, rd.Name = stream, name
		}
	}
	return rd
}
