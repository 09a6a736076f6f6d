package api

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
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// AuditEvent is one line of the one audit feed: any action taken through
// queuewatch — a replay, move, delete or restore (a job), a read of dead
// letters' bodies or an unmask, an offset reset, a pause, a resume or a connector restart —
// with who, on what and how it ended.
type AuditEvent struct {
	At     time.Time `json:"at"`
	Who    string    `json:"who"`
	Action string    `json:"action"` // replay, move, delete, restore, read, unmask, reset, pause, resume, restart
	Object string    `json:"object"` // a DLQ ID, or a reader ID (broker:cluster:scope:name)
	Result string    `json:"result"` // a job's state, a read's surface, a reset's result
	Ref    string    `json:"ref"`    // the job ID, body-read ID or plan ID
}

// auditFilter selects audit events: each field set must match (object as
// a substring, dlq whole), as the API's who, object, action and dlq
// parameters say.
type auditFilter struct{ who, object, action, dlq string }

func (f auditFilter) keeps(e AuditEvent) bool {
	return (f.who == "" || e.Who == f.who) && (f.action == "" || e.Action == f.action) &&
		(f.object == "" || strings.Contains(e.Object, f.object)) && (f.dlq == "" || e.Object == f.dlq)
}

// auditWindow is how many of the newest rows of each kind (jobs, body
// reads, resets) the feed searches when it is filtered by who, object or
// action; without a filter it reads only the limit of each.
const auditWindow = 1000

// auditLog is what the principal may read of the audit log: the newest
// jobs and body reads (of the filter's DLQ, when it names one), and the one
// feed of every action the filter keeps.
type auditLog struct {
	jobs   []dlqreplay.Job
	reads  []store.BodyRead
	events []AuditEvent
}

// auditFeed reads the audit log once for both of its shapes, each newest
// first and cut to limit.
func (s *Server) auditFeed(c echo.Context, f auditFilter, limit int) (auditLog, error) {
	ctx := c.Request().Context()
	window := limit
	if f != (auditFilter{dlq: f.dlq}) {
		window = max(limit, auditWindow)
	}
	var log auditLog
	svc, err := s.DLQ(c)
	if err != nil {
		return log, err
	}
	jobs, err := svc.Jobs(ctx, dlqreplay.JobQuery{DLQ: f.dlq, Limit: window})
	if err != nil {
		return log, err
	}
	for _, j := range jobs {
		log.events = append(log.events, AuditEvent{At: j.Created, Who: j.Who, Action: string(j.Action), Object: j.DLQ, Result: string(j.State), Ref: j.ID})
	}
	log.jobs = jobs[:min(len(jobs), limit)]
	reads, err := svc.Reads(ctx, store.ReadQuery{DLQ: f.dlq, Limit: window})
	if err != nil {
		return log, err
	}
	for _, r := range reads {
		action := "read"
		if r.Clear {
			action = "unmask"
		}
		log.events = append(log.events, AuditEvent{At: r.At, Who: r.Who, Action: action, Object: r.DLQ, Result: r.Surface, Ref: strconv.FormatInt(r.ID, 10)})
	}
	log.reads = reads[:min(len(reads), limit)]
	if f.dlq == "" { // resets and pauses act on readers, never on a DLQ
		resets, err := s.resetEvents(ctx, window)
		if err != nil {
			return log, err
		}
		log.events = append(log.events, resets...)
	}
	log.events = slices.DeleteFunc(log.events, func(e AuditEvent) bool { return !f.keeps(e) })
	slices.SortStableFunc(log.events, func(a, b AuditEvent) int { return b.At.Compare(a.At) })
	log.events = log.events[:min(len(log.events), limit)]
	return log, nil
}

// resetEvents are the offset resets, pauses and resumes of readers the
// principal sees, among the newest limit.
func (s *Server) resetEvents(ctx context.Context, limit int) ([]AuditEvent, error) {
	list, err := s.ResetLog(ctx, limit)
	if err != nil {
		return nil, err
	}
	var out []AuditEvent
	for _, r := range list {
		action := cmp.Or(pauseAction(r.Entry), "reset")
		out = append(out, AuditEvent{
			At: r.At, Who: r.Who, Action: action,
			Object: resetReader(r, action).ID(), Result: r.Result, Ref: r.PlanID,
		})
	}
	return out, nil
}

// pauseAction is the action of a pause's, a resume's or a connector
// restart's log entry ("pause", "resume", "restart"), "" for a reset's.
func pauseAction(entry json.RawMessage) string {
	var e struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(entry, &e) // a reset's entry has no action
	return e.Action
}

// resetReader is the reader a reset record names: a group, a JetStream
// consumer's "stream/consumer", or a restarted Kafka Connect connector's
// "connect/connector".
func resetReader(r store.OffsetReset, action string) queue.Reader {
	rd := queue.Reader{Broker: queue.Broker(r.Broker), Cluster: r.Cluster, Name: r.Group}
	if rd.Broker == queue.NATS || action == "restart" {
		if scope, name, ok := strings.Cut(r.Group, "/"); ok {
			rd.Scope, rd.Name = scope, name
		}
	}
	return rd
}
