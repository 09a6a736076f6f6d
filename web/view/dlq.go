package view

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/auth"
)

// DLQFail answers a DLQ service error with the status callers branch on.
// A conflict names the job that holds the DLQ so a client can follow it.
func (s *Server) DLQFail(c echo.Context, err error) error {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return err
	}
	var ce *dlqreplay.ConflictError
	switch {
	case errors.As(err, &ce):
		return c.JSON(http.StatusConflict, map[string]string{"error": err.Error(), "job": ce.JobID})
	case errors.Is(err, dlqreplay.ErrUnknownDLQ), errors.Is(err, dlqreplay.ErrJobNotFound), errors.Is(err, queue.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, err.Error())
	case errors.Is(err, dlqreplay.ErrInvalidRequest):
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	case errors.Is(err, dlqreplay.ErrTargetMissing):
		return echo.NewHTTPError(http.StatusUnprocessableEntity, err.Error())
	case errors.Is(err, dlqreplay.ErrJobRunning), errors.Is(err, dlqreplay.ErrDeliveryLimit):
		return echo.NewHTTPError(http.StatusConflict, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return echo.NewHTTPError(http.StatusGatewayTimeout, err.Error())
	}
	// What is left failed at the broker or the audit store: the operator
	// needs the reason, so it is passed on (JSON-encoded, never as markup).
	s.opts.Logger.Error("dlq request failed", "path", c.Path(), "err", err)
	return echo.NewHTTPError(http.StatusBadGateway, err.Error())
}

// HasRole reports whether the request's principal has at least role.
func HasRole(ctx context.Context, role config.Role) bool {
	p, ok := auth.PrincipalFrom(ctx)
	return ok && auth.RoleRank(p.Role) >= auth.RoleRank(role)
}

// Who names the request's principal, for the audit.
func Who(ctx context.Context) string {
	p, _ := auth.PrincipalFrom(ctx)
	return p.Name
}

// IntQuery reads an optional integer query parameter within [lo, hi].
func IntQuery(c echo.Context, name string, def, lo, hi int) (int, error) {
	v := c.QueryParam(name)
	if v == "" && !c.QueryParams().Has(name) {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("%s must be a whole number from %d to %d", name, lo, hi))
	}
	return n, nil
}

// replayCountHeader is the header every replayed copy carries.
const replayCountHeader = queue.HeaderReplayCount

// ReplayCount is how often a message was replayed before, from its header.
func ReplayCount(m *queue.Message) int64 {
	v, ok := m.Header(replayCountHeader)
	if !ok {
		return 0
	}
	n, _ := strconv.ParseInt(string(v), 10, 64)
	return n
}

// BodyURL is the download path of one message's full body; after is the
// page token the message was found on, a hint that spares a long search.
func BodyURL(dlq, msgID, after string) string {
	u := "/api/v1/dlqs/" + url.PathEscape(dlq) + "/messages/" + url.PathEscape(msgID) + "/body"
	if after != "" {
		u += "?after=" + url.QueryEscape(after)
	}
	return u
}

// archivedMessage views an archived message as a queue.Message, for the
// same display rules.
func archivedMessage(a *dlqreplay.Archived) queue.Message {
	return queue.Message{
		ID: a.MessageID, Properties: a.Properties, Headers: a.Headers, Key: a.Key, Body: a.Body,
		Timestamp: a.ArchivedAt,
	}
}

// FindDLQ returns the latest poll's view of a DLQ.
func (s *Server) FindDLQ(m auth.Monitor, id string) *queue.DLQ {
	for _, snap := range m.Snapshots() {
		for i := range snap.DLQs {
			if snap.DLQs[i].ID() == id {
				return &snap.DLQs[i]
			}
		}
	}
	return nil
}

// JobKey is where checkJobParam leaves the job it read, so that the
// handler does not read it again (pathJob).
const JobKey = "web.job"

// PathJob is the :job id as shown, as the route's authorization read it,
// or as read now when it could not (a job it did not find, left to the
// handler to answer for a principal whose role holds everywhere).
func (d DLQs) PathJob(ctx context.Context, id string) (dlqreplay.Job, error) {
	if j, ok := d.c.Get(JobKey).(dlqreplay.Job); ok && j.ID == id {
		return d.s.jobView(d.c, j), nil
	}
	return d.Job(ctx, id)
}

// Links between a DLQ and the readers of its sources are found in the
// principal's view (s.mon), as every list is: a link never names a group,
// queue or DLQ the viewer may not see, and a page links only to pages the
// viewer may open.

// DLQsOf are the DLQs r's messages die in, as the request's principal
// sees them.
func (s *Server) DLQsOf(c echo.Context, r queue.Reader) []queue.DLQ {
	for _, snap := range s.Mon(c).Snapshots() {
		if snap.Broker == r.Broker && snap.Cluster == r.Cluster {
			return snap.DLQsOf(r)
		}
	}
	return nil
}

// ReadersOf are the readers of d's sources, as the request's principal
// sees them.
func (s *Server) ReadersOf(c echo.Context, d *queue.DLQ) []queue.Reader {
	for _, snap := range s.Mon(c).Snapshots() {
		if snap.Broker == d.Broker && snap.Cluster == d.Cluster {
			return snap.ReadersOf(d)
		}
	}
	return nil
}

// HeadroomOf is how long until the broker deletes d's oldest dead letter,
// from d's own poll as the request's principal sees it
// (queue.Snapshot.DLQHeadroom); unknown when that poll does not tell.
func (s *Server) HeadroomOf(c echo.Context, d *queue.DLQ) queue.Headroom {
	for _, snap := range s.Mon(c).Snapshots() {
		if snap.Broker == d.Broker && snap.Cluster == d.Cluster {
			return snap.DLQHeadroom(d)
		}
	}
	return queue.Headroom{}
}
