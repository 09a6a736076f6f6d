package view

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/inspect"
	"github.com/queuewatch/queuewatch/jsonpath"
	"github.com/queuewatch/queuewatch/masking"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/selexpr"
	"github.com/queuewatch/queuewatch/web/auth"
)

// Every surface that shows a dead letter's key, headers or body gets it
// through shown or shownArchived: decoded, masked unless a clear view was
// asked for and allowed, and the read recorded.

// canUnmask reports whether the request's principal may show one
// message of DLQ dlq with its masked values in clear: the unmask role,
// there.
func (s *Server) canUnmask(c echo.Context, dlq string) bool {
	return auth.PrincipalOf(c.Request().Context()).MayDLQ(s.unmaskRole(), dlq)
}

// ClearRequested reads ?unmask=true for a DLQ: false when its messages
// have nothing masked, 403 when the principal may not unmask.
func (s *Server) ClearRequested(c echo.Context, dlq string) (bool, error) {
	v := c.QueryParam("unmask")
	if v == "" {
		return false, nil
	}
	inClear, err := strconv.ParseBool(v)
	if err != nil {
		return false, echo.NewHTTPError(http.StatusBadRequest, "unmask must be true or false")
	}
	if !inClear || s.opts.Inspect.Policy(dlq) == nil {
		return false, nil
	}
	if !s.canUnmask(c, dlq) {
		return false, echo.NewHTTPError(http.StatusForbidden, "showing masked values needs the "+string(s.unmaskRole())+" role")
	}
	return true, nil
}

// unmaskRole is the role that may show masked values in clear
// (auth.unmask_role, admin by default).
func (s *Server) unmaskRole() config.Role {
	if s.opts.Auth.UnmaskRole == "" {
		return config.RoleAdmin
	}
	return s.opts.Auth.UnmaskRole
}

// shown returns msgs of dlq as they may leave the process and records the
// read. A clear view is recorded before it is shown, or not shown.
func (s *Server) shown(c echo.Context, dlq, surface string, msgs []queue.Message, inClear bool) ([]queue.Message, error) {
	ctx := c.Request().Context()
	ids := make([]string, len(msgs))
	for i := range msgs {
		ids[i] = msgs[i].ID
	}
	if err := s.opts.Inspect.Read(ctx, Who(ctx), dlq, surface, inClear, ids); err != nil {
		return nil, echo.NewHTTPError(http.StatusServiceUnavailable, "the clear view could not be audited, so it is not shown: "+err.Error())
	}
	return s.opts.Inspect.Messages(ctx, dlq, msgs, inClear), nil
}

// shownArchived is shown for archived messages, which may come from
// several DLQs: the rows returned are copies with what may be shown, and
// the messages their display forms.
func (s *Server) shownArchived(c echo.Context, recs []dlqreplay.Archived) ([]dlqreplay.Archived, []queue.Message) {
	ctx := c.Request().Context()
	rows, msgs := make([]dlqreplay.Archived, len(recs)), make([]queue.Message, len(recs))
	byDLQ := map[string][]string{}
	for i := range recs {
		a := recs[i]
		m := s.opts.Inspect.Messages(ctx, a.DLQ, []queue.Message{archivedMessage(&a)}, false)[0]
		a.Properties, a.Headers, a.Key, a.Body = m.Properties, m.Headers, m.Key, m.Body
		rows[i], msgs[i] = a, m
		byDLQ[a.DLQ] = append(byDLQ[a.DLQ], a.MessageID)
	}
	for dlq, ids := range byDLQ {
		_ = s.opts.Inspect.Read(ctx, Who(ctx), dlq, inspect.SurfaceArchive, false, ids) // masked reads only log a failure
	}
	return rows, msgs
}

// CheckMaskedSelection refuses a selection by the value of a masked
// header, or of a table holding one (masking.Policy.MasksSelection),
// unless the principal may unmask: the count of a dry run would tell
// whether a guessed value is there.
func (s *Server) CheckMaskedSelection(c echo.Context, dlq string, sel dlqreplay.Selection) error {
	p := s.opts.Inspect.Policy(dlq)
	for name, value := range sel.Headers {
		if p.MasksSelection(name, value) && !s.canUnmask(c, dlq) {
			return echo.NewHTTPError(http.StatusBadRequest, "header "+strconv.Quote(name)+" is masked on this DLQ (or holds a masked header): selecting by its value needs the "+string(s.unmaskRole())+" role")
		}
	}
	return s.CheckMaskedWhere(c, dlq, sel.Where)
}

// CheckMaskedWhere refuses a CEL selection (selexpr) that reads a value
// masked on DLQ dlq, unless the principal may unmask: its matches would
// tell a guessed value. A bad expression is a 400 naming its position.
func (s *Server) CheckMaskedWhere(c echo.Context, dlq, where string) error {
	if where == "" {
		return nil
	}
	prog, err := selexpr.Compile(where)
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "where: "+err.Error())
	}
	p := s.opts.Inspect.Policy(dlq)
	if p == nil || s.canUnmask(c, dlq) {
		return nil
	}
	for _, r := range prog.Refs() {
		if what := maskedRef(p, r); what != "" {
			return echo.NewHTTPError(http.StatusBadRequest, "where reads "+what+", masked on this DLQ: selecting by it needs the "+string(s.unmaskRole())+" role")
		}
	}
	return nil
}

// whereMasked reports whether the CEL selection where reads a value p
// masks (or no longer compiles, so what it reads is unknown).
func whereMasked(p *masking.Policy, where string) bool {
	if where == "" {
		return false
	}
	prog, err := selexpr.Compile(where)
	if err != nil {
		return true
	}
	return slices.ContainsFunc(prog.Refs(), func(r selexpr.Ref) bool { return maskedRef(p, r) != "" })
}

// maskedRef names what r reads that p masks, or is "". Reading the body
// or a value whole reads every value in it. Where any header is masked,
// every header read counts: a header may be a table holding the masked
// one (what an expression does with it is not known before it runs), and
// the failure facts are read from headers.
func maskedRef(p *masking.Policy, r selexpr.Ref) string {
	switch r.Var {
	case selexpr.VarHeaders:
		if !p.MasksAnyHeader() {
			return ""
		}
		if len(r.Path) > 0 && r.Path[0].IsKey {
			return "header " + strconv.Quote(r.Path[0].Key) + " (a header here may be a table holding a masked one)"
		}
		return "every header"
	case selexpr.VarProperties: // AMQP properties are never tables
		if len(r.Path) > 0 && r.Path[0].IsKey {
			if p.MasksHeader(r.Path[0].Key) {
				return "property " + strconv.Quote(r.Path[0].Key)
			}
			return ""
		}
		if p.MasksAnyHeader() {
			return "every property"
		}
	case selexpr.VarFailure:
		if p.MasksAnyHeader() {
			return "the failure facts (read from headers, some masked)"
		}
	case selexpr.VarID:
		if p.MasksHeader("message_id") {
			return "the message id"
		}
	case selexpr.VarKey, selexpr.VarBody:
		if p.MasksBody() {
			return "the " + r.Var
		}
	case selexpr.VarValue:
		if p.MasksValueAt(r.Path) {
			return "value " + jsonpath.StepsString(r.Path)
		}
	}
	return ""
}

// GroupByQuery reads ?group_by=, a path into the decoded or JSON body
// ($.reason, $.customer.country) that groups the page's messages.
func GroupByQuery(c echo.Context) (*jsonpath.Path, error) {
	raw := c.QueryParam("group_by")
	if raw == "" {
		return nil, nil
	}
	p, err := jsonpath.Parse(raw)
	if err != nil {
		return nil, echo.NewHTTPError(http.StatusBadRequest, "group_by: "+err.Error())
	}
	return &p, nil
}

// jobView is a job as it may be shown: a selection by a masked header's
// value (made by someone who may unmask) keeps the value from those who
// may not.
func (s *Server) jobView(c echo.Context, j dlqreplay.Job) dlqreplay.Job {
	p := s.opts.Inspect.Policy(j.DLQ)
	if p == nil || (len(j.Selection.Headers) == 0 && j.Selection.Where == "") || s.canUnmask(c, j.DLQ) {
		return j
	}
	if whereMasked(p, j.Selection.Where) {
		j.Selection.Where = masking.Redacted // its literals may be the clear values
	}
	if len(j.Selection.Headers) == 0 {
		return j
	}
	hs := make(map[string]string, len(j.Selection.Headers))
	for k, v := range j.Selection.Headers {
		if p.MasksSelection(k, v) {
			v = masking.Redacted
		}
		hs[k] = v
	}
	j.Selection.Headers = hs
	return j
}

// receiptView is a receipt with its job as jobView shows it.
func (s *Server) receiptView(c echo.Context, r dlqreplay.Receipt) dlqreplay.Receipt {
	r.Job = s.jobView(c, r.Job)
	return r
}
