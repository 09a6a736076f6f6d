package view

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/inspect"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
	"github.com/queuewatch/queuewatch/web/auth"
)

// DLQs is the DLQ service as one request's principal may use it, and the
// only way web/api and web/ui reach dead letters, jobs, receipts, the
// archive and the body-read log: lists are cut to the principal's scope
// in the query (before their limit), and every message, job, receipt and
// archived row comes back as the principal may see it — masked, a clear
// view only where it was asked for and allowed, each read recorded before
// it is shown (mask.go). The service in clear stays in this package.
type DLQs struct {
	s   *Server
	c   echo.Context
	svc auth.DLQService
}

var errNoDLQTools = echo.NewHTTPError(http.StatusServiceUnavailable, "DLQ tools not configured")

// DLQ is the request's DLQ service, or the 503 every DLQ endpoint
// answers without one.
func (s *Server) DLQ(c echo.Context) (DLQs, error) {
	if s.opts.DLQs == nil {
		return DLQs{}, errNoDLQTools
	}
	return DLQs{s: s, c: c, svc: s.opts.DLQs}, nil
}

// HasDLQTools reports whether this server has a DLQ service.
func (s *Server) HasDLQTools() bool { return s.opts.DLQs != nil }

// MessagePage is a page of a DLQ's messages as the principal may see them.
type MessagePage struct {
	dlqreplay.Page // its Messages as shown: masked, but for Unmasked
	// Sizes are the messages' bodies' sizes on the wire, not masked.
	Sizes []int
	// Unmasked is the ID of the message shown in clear; empty for none.
	Unmasked string
}

// Browse reads a page of DLQ id's messages as read on surface. clearID,
// when set, names the one message to show in clear: a principal who may
// not unmask gets a 403, and the clear read is recorded alone.
func (d DLQs) Browse(ctx context.Context, id string, o dlqreplay.BrowseOptions, surface, clearID string) (MessagePage, error) {
	if err := d.s.CheckMaskedWhere(d.c, id, o.Where); err != nil {
		return MessagePage{}, err
	}
	raw, err := d.svc.Browse(ctx, id, o)
	if err != nil {
		return MessagePage{}, err
	}
	p := MessagePage{Page: raw, Sizes: make([]int, len(raw.Messages))}
	for i := range raw.Messages {
		p.Sizes[i] = len(raw.Messages[i].Body)
	}
	if p.Messages, err = d.s.shown(d.c, id, surface, raw.Messages, false); err != nil {
		return MessagePage{}, err
	}
	if clearID == "" || d.s.opts.Inspect.Policy(id) == nil {
		return p, nil
	}
	if !d.CanUnmask(id) {
		return MessagePage{}, echo.NewHTTPError(http.StatusForbidden, "showing masked values needs the "+string(d.s.unmaskRole())+" role")
	}
	for i := range raw.Messages {
		if raw.Messages[i].ID == clearID {
			one, err := d.s.shown(d.c, id, inspect.SurfaceMessage, raw.Messages[i:i+1], true)
			if err != nil {
				return MessagePage{}, err
			}
			p.Messages[i], p.Unmasked = one[0], clearID
		}
	}
	return p, nil
}

// Message finds message msgID of DLQ id — on the page after names, then
// from the head, bodySearchPages pages of 1,000 deep — and returns it as
// shown on surface (in clear when inClear, which ClearRequested allowed),
// with its body's size on the wire.
func (d DLQs) Message(ctx context.Context, id, msgID, after, surface string, inClear bool) (queue.Message, int, error) {
	m, err := d.find(ctx, id, msgID, after)
	if err != nil {
		return queue.Message{}, 0, err
	}
	out, err := d.s.shown(d.c, id, surface, []queue.Message{*m}, inClear)
	if err != nil {
		return queue.Message{}, 0, err
	}
	return out[0], len(m.Body), nil
}

// bodySearchPages bounds how far Message pages through a DLQ (1,000
// messages a page) to find a message.
const bodySearchPages = 5

func (d DLQs) find(ctx context.Context, dlq, msgID, after string) (*queue.Message, error) {
	tried := map[string]bool{}
	search := func(after string) (*queue.Message, error) {
		for range bodySearchPages {
			if tried[after] {
				return nil, nil
			}
			tried[after] = true
			p, err := d.svc.Browse(ctx, dlq, dlqreplay.BrowseOptions{Limit: 1000, After: after})
			if err != nil {
				return nil, err
			}
			for i := range p.Messages {
				if p.Messages[i].ID == msgID {
					return &p.Messages[i], nil
				}
			}
			if p.Next == "" {
				return nil, nil
			}
			after = p.Next
		}
		return nil, nil
	}
	for _, start := range []string{after, ""} {
		m, err := search(start)
		if m != nil || err != nil {
			return m, err
		}
	}
	return nil, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("message %q is not in the first %d messages of the DLQ", msgID, bodySearchPages*1000))
}

// CanUnmask reports whether DLQ id has masked values and the principal
// may show them in clear there.
func (d DLQs) CanUnmask(id string) bool {
	return d.s.opts.Inspect.Policy(id) != nil && d.s.canUnmask(d.c, id)
}

// Jobs lists the jobs q selects among those of DLQs the principal sees.
func (d DLQs) Jobs(ctx context.Context, q dlqreplay.JobQuery) ([]dlqreplay.Job, error) {
	q.Visible = auth.SeenDLQs(d.c)
	jobs, err := d.svc.Jobs(ctx, q)
	for i := range jobs {
		jobs[i] = d.s.jobView(d.c, jobs[i])
	}
	return jobs, err
}

// Job is job id as shown. The route's need checked its DLQ.
func (d DLQs) Job(ctx context.Context, id string) (dlqreplay.Job, error) {
	j, err := d.svc.Job(ctx, id)
	return d.s.jobView(d.c, j), err
}

// Receipt is job id's receipt as shown; a job of a DLQ the principal may
// not see is not found.
func (d DLQs) Receipt(ctx context.Context, id string) (dlqreplay.Receipt, error) {
	r, err := d.svc.Receipt(ctx, id)
	if err == nil && !auth.PrincipalOf(d.c.Request().Context()).MayDLQ(config.RoleViewer, r.Job.DLQ) {
		return dlqreplay.Receipt{}, fmt.Errorf("job %s: %w", id, dlqreplay.ErrJobNotFound) // as for a job that is not there
	}
	return d.s.receiptView(d.c, r), err
}

// ReceiptOf is the receipt of a job read with Job (through the route's
// need: PathJob).
func (d DLQs) ReceiptOf(ctx context.Context, j dlqreplay.Job) (dlqreplay.Receipt, error) {
	r, err := d.svc.ReceiptOf(ctx, j)
	return d.s.receiptView(d.c, r), err
}

// Wait waits for job id to end and returns its receipt as shown.
func (d DLQs) Wait(ctx context.Context, id string) (dlqreplay.Receipt, error) {
	r, err := d.svc.Wait(ctx, id)
	return d.s.receiptView(d.c, r), err
}

// Start starts a job and returns it as shown, once the principal may
// run it (check).
func (d DLQs) Start(ctx context.Context, req dlqreplay.Request) (dlqreplay.Job, error) {
	if err := d.check(&req); err != nil {
		return dlqreplay.Job{}, err
	}
	j, err := d.svc.Start(ctx, req)
	return d.s.jobView(d.c, j), err
}

// StartRestore starts a restore once auth.CheckRestore allowed it, and
// returns its job as shown.
func (d DLQs) StartRestore(ctx context.Context, req dlqreplay.RestoreRequest) (dlqreplay.Job, error) {
	if err := auth.CheckRestore(d.c, d.svc, req.Target, req.JobID, req.ArchiveIDs); err != nil {
		return dlqreplay.Job{}, err
	}
	j, err := d.svc.StartRestore(ctx, req)
	return d.s.jobView(d.c, j), err
}

// Preview is what req would do, its job as shown, once the principal may
// run it (check).
func (d DLQs) Preview(ctx context.Context, req dlqreplay.Request) (dlqreplay.Preview, error) {
	if err := d.check(&req); err != nil {
		return dlqreplay.Preview{}, err
	}
	p, err := d.svc.Preview(ctx, req)
	p.Job = d.s.jobView(d.c, p.Job)
	return p, err
}

// check holds a job's request to what the principal may do, and names
// them in it: a selection by a masked header's value needs the unmask
// role, delete an admin, and the rest auth.CheckReplay (which routes
// each message to a destination the principal's grants cover).
func (d DLQs) check(req *dlqreplay.Request) error {
	if err := d.s.CheckMaskedSelection(d.c, req.DLQ, req.Selection); err != nil {
		return err
	}
	ctx := d.c.Request().Context()
	if req.Action == dlqreplay.ActionDelete && !HasRole(ctx, config.RoleAdmin) {
		return echo.NewHTTPError(http.StatusForbidden, "forbidden: delete needs role admin")
	}
	mayRoute, err := auth.CheckReplay(d.c, req.DLQ, req.Action, req.Mode, req.Target.Name)
	if err != nil {
		return err
	}
	req.MayRoute, req.Who = mayRoute, Who(ctx)
	return nil
}

// Cancel cancels job id.
func (d DLQs) Cancel(id string) error { return d.svc.Cancel(id) }

// Archive is archived messages as the principal may see them.
type Archive struct {
	Rows     []dlqreplay.Archived // each row with what may be shown
	Messages []queue.Message      // their display forms
	Sizes    []int                // each body's size as archived, not masked
}

// Archived lists the archived messages q selects among those of DLQs the
// principal sees, as they may be shown; the reads are recorded.
func (d DLQs) Archived(ctx context.Context, q dlqreplay.ArchiveQuery) (Archive, error) {
	q.Visible = auth.SeenDLQs(d.c)
	recs, err := d.svc.Archived(ctx, q)
	if err != nil {
		return Archive{}, err
	}
	a := Archive{Sizes: make([]int, len(recs))}
	for i := range recs {
		a.Sizes[i] = len(recs[i].Body)
	}
	a.Rows, a.Messages = d.s.shownArchived(d.c, recs)
	return a, nil
}

// Reads lists the body reads q selects among those of DLQs the principal
// sees.
func (d DLQs) Reads(ctx context.Context, q store.ReadQuery) ([]store.BodyRead, error) {
	q.Visible = auth.SeenDLQs(d.c)
	return d.s.opts.Inspect.Reads(ctx, q)
}

// nativeRedrive is a DLQ service that can tell whether a DLQ's broker
// moves it back itself (*dlqreplay.Service: the DLQ's backend is a
// dlqreplay.NativeRedriver), so the page offers the native redrive.
type nativeRedrive interface {
	CanRedriveNatively(dlqID string) bool
}

// CanRedriveNatively reports whether DLQ id's broker moves it back itself.
func (d DLQs) CanRedriveNatively(id string) bool {
	nr, ok := d.svc.(nativeRedrive)
	return ok && nr.CanRedriveNatively(id)
}

// subjectFanout is a DLQ service that can name who reads a subject
// (*dlqreplay.Service, for NATS DLQs).
type subjectFanout interface {
	SubjectConsumers(ctx context.Context, dlqID, stream, subject string) ([]string, error)
}

// SubjectConsumers names the consumers that read subject of stream, for a
// DLQ whose broker fans out; ok is false where the service cannot tell.
func (d DLQs) SubjectConsumers(ctx context.Context, id, stream, subject string) (names []string, ok bool, err error) {
	sf, ok := d.svc.(subjectFanout)
	if !ok {
		return nil, false, nil
	}
	names, err = sf.SubjectConsumers(ctx, id, stream, subject)
	return names, true, err
}
