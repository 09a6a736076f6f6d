package ui

import (
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/inspect"
	"github.com/queuewatch/queuewatch/jsonpath"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
	"github.com/queuewatch/queuewatch/web/auth"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// dlqPageSize is how many messages the DLQ page reads per page.
const dlqPageSize = 50

// DLQPage shows one DLQ: its header from the latest poll, then a page of
// its messages read (without changing the DLQ) through the DLQ service.
func (s *Server) DLQPage(c echo.Context) error {
	id, err := view.PathParam(c, "id")
	if err != nil {
		return err
	}
	ref, err := dlqreplay.ParseID(id)
	if err != nil {
		return echo.NewHTTPError(http.StatusNotFound, "no such DLQ")
	}
	p := auth.PrincipalOf(c.Request().Context())
	d := components.DLQData{
		Chrome: s.Chrome(c, ref.Name, "dlqs"), ID: id, Broker: string(ref.Broker), Cluster: ref.Cluster,
		VHost: ref.VHost, Name: ref.Name, DLQ: s.FindDLQ(s.Mon(c), id),
		CanReplay:  s.HasDLQTools() && p.MayDLQ(config.RoleOperator, id),
		CanDelete:  s.HasDLQTools() && p.MayDLQ(config.RoleAdmin, id),
		ReplayAPI:  "/api/v1/dlqs/" + url.PathEscape(id) + "/replay",
		PreviewAPI: "/api/v1/dlqs/" + url.PathEscape(id) + "/preview",
		Limit:      dlqPageSize,
	}
	if s.ReplayRate() > 0 {
		d.Rate = strconv.FormatFloat(s.ReplayRate(), 'f', -1, 64)
	}
	svc, dlqErr := s.DLQ(c)
	if dlqErr == nil && d.CanReplay {
		d.CanNative = svc.CanRedriveNatively(id)
	}
	if d.DLQ != nil {
		d.Readers = s.ReadersOf(c, d.DLQ)
		d.Headroom = s.HeadroomOf(c, d.DLQ)
		d.HeadroomSoon = d.Headroom.Below(s.HeadroomLow())
		d.Grafana = s.grafanaDLQLink(d.DLQ)
		h := s.Mon(c).DLQHistory(id)
		d.Inflow = growthPerMinute(h)
		d.Trend = s.dlqSpark(s.Mon(c), d.DLQ)
	}
	if Partial(c) {
		return view.Render(c, http.StatusOK, components.DLQPartial(d))
	}
	if dlqErr != nil {
		d.Notice = "DLQ tools not configured: this queuewatch has no replay service, so messages cannot be browsed or replayed here."
		return view.Render(c, http.StatusServiceUnavailable, components.DLQ(d))
	}
	d.Limit, _ = view.IntQuery(c, "limit", dlqPageSize, 1, 1000)
	d.After = c.QueryParam("after")
	status := s.loadMessages(c, svc, &d)
	if status == http.StatusNotFound && d.DLQ == nil {
		// Neither the poll nor the broker knows it: the product's page for
		// what is not there (a stale alert link lands here), not a DLQ page
		// with buttons for nothing.
		return echo.NewHTTPError(http.StatusNotFound, d.Notice)
	}
	d.Fanout = s.fanout(c, svc, ref, d.Messages)
	if s.HasFilters() {
		d.Filters, _ = svc.Filters(c.Request().Context(), id) // the page stands without them
		if d.CanReplay {
			d.FiltersAPI = "/api/v1/dlqs/" + url.PathEscape(id) + "/filters"
		}
	}
	d.Jobs, _ = svc.Jobs(c.Request().Context(), dlqreplay.JobQuery{DLQ: id, Limit: 5})
	d.Targets = s.jobTargets(s.Mon(c), d.Jobs)
	return view.Render(c, status, components.DLQ(d))
}

// loadMessages reads the page of messages into d, or explains in d.Notice
// why it cannot, and returns the page's HTTP status.
func (s *Server) loadMessages(c echo.Context, svc view.DLQs, d *components.DLQData) int {
	d.CanUnmask = svc.CanUnmask(d.ID)
	o := dlqreplay.BrowseOptions{Limit: d.Limit, After: d.After, GroupOver: dlqreplay.MaxGroupOver}
	if d.Where = strings.TrimSpace(c.QueryParam("where")); d.Where != "" {
		o.Where, o.GroupOver = d.Where, 0
	}
	p, err := svc.Browse(c.Request().Context(), d.ID, o, inspect.SurfacePage, c.QueryParam("unmask"))
	var ce *dlqreplay.ConflictError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ce):
		d.RunningJob = ce.JobID
		d.Notice = "A job is running on this DLQ; its messages are listed again when it ends."
		if ce.JobID == "" {
			d.Notice = "Another queuewatch instance is running a job on this DLQ; its messages are listed again when it ends."
		}
		return http.StatusOK
	case errors.Is(err, dlqreplay.ErrUnknownDLQ), errors.Is(err, queue.ErrNotFound):
		// 404 like the API, also when the poll lists the DLQ (dlq_queues
		// names it): the page still shows what the poll knows.
		d.Notice = "This DLQ cannot be read: " + err.Error()
		return http.StatusNotFound
	case errors.Is(err, dlqreplay.ErrDeliveryLimit):
		d.Notice = "Browsing is paused to protect the delivery limit: " + err.Error()
		return http.StatusOK
	case errors.As(err, &he) && d.Where != "" && he.Code == http.StatusBadRequest:
		// The filter does not compile, or reads a masked value.
		d.WhereError = fmt.Sprint(he.Message)
		return he.Code
	case errors.As(err, &he):
		// Refused or not recorded: a clear view the principal may not
		// have, or one the audit could not record.
		d.Notice = fmt.Sprint(he.Message)
		return he.Code
	case err != nil:
		s.Logger().Warn("browse dlq", "dlq", d.ID, "err", err)
		d.Notice = "Could not read the messages: " + err.Error()
		return http.StatusOK
	}
	d.Next, d.Groups = p.Next, p.Groups
	d.GroupsOf, d.GroupsHead, d.GroupsWhole = p.GroupsOf, p.GroupsHead, p.GroupsWhole
	d.SafeBrowsesLeft, d.CachedAt, d.Scanned = p.SafeBrowsesLeft, p.CachedAt, p.Scanned
	shown := p.Messages
	d.Unmasked = p.Unmasked
	// Samples come from what is shown: an exception text may be masked.
	d.GroupSample = map[string]string{}
	for i := range shown {
		k := shown[i].Death.Signature().Key()
		if _, ok := d.GroupSample[k]; !ok {
			d.GroupSample[k] = shown[i].Death.ExceptionMessage
		}
	}
	if d.GroupBy = strings.TrimSpace(c.QueryParam("group_by")); d.GroupBy != "" {
		if gp, err := jsonpath.Parse(d.GroupBy); err != nil {
			d.GroupByError = err.Error()
		} else {
			d.FieldGroups = inspect.GroupByField(shown, gp)
		}
	}
	d.Messages = make([]components.MessageView, len(shown))
	for i := range shown {
		d.Messages[i] = messageView(d.ID, d.After, i, &shown[i])
		d.Messages[i].Size = p.Sizes[i]
	}
	return http.StatusOK
}

func messageView(dlq, after string, i int, m *queue.Message) components.MessageView {
	kind, text, cut := m.BodyView(components.InspectorBodyLimit)
	v := components.MessageView{
		Idx: i, M: m, BodyKind: kind, BodyText: text, Truncated: cut,
		ReplayCount: view.ReplayCount(m), DownloadURL: view.BodyURL(dlq, m.ID, after),
	}
	v.Preview = components.Preview(kind, m.Body)
	if kind == queue.BodyJSON {
		// Pretty JSON spreads over lines; the list shows it compact.
		v.Preview = components.Preview(queue.BodyText, m.Body)
	}
	b := m.Body
	if len(b) > components.InspectorHexLimit {
		b, v.HexTruncated = b[:components.InspectorHexLimit], true
	}
	v.Hex = hex.Dump(b)
	return v
}

// ReplaysPage lists running and past jobs (the audit log), one receipt
// when ?job= names it, and the archive of deleted messages.
func (s *Server) ReplaysPage(c echo.Context) error {
	ctx := c.Request().Context()
	p := auth.PrincipalOf(ctx)
	d := components.JobsData{
		Chrome:    s.Chrome(c, "Replays", "replays"),
		Table:     components.Table{Path: "/replays", Q: strings.TrimSpace(c.QueryParam("q"))},
		CanCancel: view.HasRole(ctx, config.RoleOperator), CanDelete: view.HasRole(ctx, config.RoleAdmin),
	}
	if s.ReplayRate() > 0 {
		d.Rate = strconv.FormatFloat(s.ReplayRate(), 'f', -1, 64)
	}
	svc, err := s.DLQ(c)
	if err != nil {
		d.Notice = "DLQ tools not configured: this queuewatch has no replay service and no audit log."
		if Partial(c) {
			return view.Render(c, http.StatusOK, components.ReplaysPartial(d))
		}
		if err := s.ResetViews(ctx, &d); err != nil {
			d.Notice += " Could not read the offset resets: " + err.Error()
		}
		return view.Render(c, http.StatusServiceUnavailable, components.Replays(d))
	}
	jobs, err := svc.Jobs(ctx, dlqreplay.JobQuery{Limit: 1000})
	if err != nil {
		d.Notice = "Could not read the audit log: " + err.Error()
	}
	d.Total = len(jobs)
	d.NoCancel = map[string]bool{}
	for _, j := range jobs {
		if j.State == dlqreplay.StateRunning {
			d.Running = append(d.Running, j)
			d.NoCancel[j.ID] = !p.MayDLQ(config.RoleOperator, j.DLQ)
		}
	}
	d.Jobs = view.FilterRows(jobs, d.Table.Q, func(j dlqreplay.Job) []string {
		return []string{j.ID, j.DLQ, j.Who, string(j.Action), string(j.State), j.Target.Name}
	})
	d.Jobs = d.Jobs[:min(len(d.Jobs), components.PageSize)]
	d.Targets = s.jobTargets(s.Mon(c), append(d.Running, d.Jobs...))
	if Partial(c) {
		return view.Render(c, http.StatusOK, components.ReplaysPartial(d))
	}
	if err := s.ResetViews(ctx, &d); err != nil {
		d.Notice = "Could not read the offset resets: " + err.Error()
	}
	if id := c.QueryParam("job"); id != "" {
		r, err := svc.Receipt(ctx, id)
		if err != nil {
			d.Notice = "No receipt for job " + id + ": " + err.Error()
		} else {
			d.ReceiptMore = max(len(r.Outcomes)-components.ReceiptLimit, 0)
			r.Outcomes = r.Outcomes[:min(len(r.Outcomes), components.ReceiptLimit)]
			d.Receipt = &r
			maps.Copy(d.Targets, s.jobTargets(s.Mon(c), []dlqreplay.Job{r.Job}))
		}
	}
	d.Reads, err = svc.Reads(ctx, store.ReadQuery{Limit: components.PageSize})
	if err != nil {
		d.Notice = "Could not read the body-read audit: " + err.Error()
	}
	a, err := svc.Archived(ctx, dlqreplay.ArchiveQuery{Limit: components.PageSize})
	if err != nil {
		d.Notice = "Could not read the archive: " + err.Error()
	}
	archived, shown := a.Rows, a.Messages
	for i := range archived {
		m := &shown[i]
		kind, _, _ := m.BodyView(4096)
		if kind != queue.BodyBinary && kind != queue.BodyEmpty {
			kind = queue.BodyText
		}
		d.Archived = append(d.Archived, components.ArchivedView{
			A: &archived[i], Size: a.Sizes[i], Restorable: p.MayDLQ(config.RoleAdmin, archived[i].DLQ),
			Preview: components.Preview(kind, m.Body),
		})
	}
	return view.Render(c, http.StatusOK, components.Replays(d))
}

// jobTargets names the queue a replay to the "original queue" went to
// when its DLQ has a single source, so the log says "orders", not a rule.
func (s *Server) jobTargets(m auth.Monitor, jobs []dlqreplay.Job) map[string]string {
	out := map[string]string{}
	for _, j := range jobs {
		if j.Action != dlqreplay.ActionReplay || (j.Target.Kind != "" && j.Target.Kind != dlqreplay.TargetOriginal) {
			continue
		}
		if d := s.FindDLQ(m, j.DLQ); d != nil && len(d.Sources) == 1 {
			out[j.ID] = d.Sources[0] + " (original)"
		}
	}
	return out
}

// maxFanoutSubjects bounds the consumer lookups of one page.
const maxFanoutSubjects = 5

// fanout finds, for the original subjects of a DLQ page, the other
// consumers that read them: a replay to the subject redelivers to those
// too. The service answers nil for a DLQ whose broker does not fan out
// (dlqreplay.Service asks the DLQ's backend), so every DLQ asks. A failed
// lookup only leaves its warning out.
func (s *Server) fanout(c echo.Context, svc view.DLQs, ref dlqreplay.Ref, msgs []components.MessageView) []components.Fanout {
	// The DLQ is named after its consumer ("stream.consumer" when the
	// name is shared by two streams).
	self := ref.Name
	if _, after, found := strings.Cut(ref.Name, "."); found {
		self = after
	}
	seen := map[[2]string]bool{}
	var out []components.Fanout
	for _, v := range msgs {
		d := &v.M.Death
		if len(d.Deaths) == 0 || d.OriginalTopic == "" {
			continue
		}
		k := [2]string{d.Deaths[0].Queue, d.OriginalTopic}
		if seen[k] || len(seen) >= maxFanoutSubjects {
			continue
		}
		seen[k] = true
		names, ok, err := svc.SubjectConsumers(c.Request().Context(), ref.ID(), k[0], k[1])
		if !ok {
			return nil // the service cannot tell who reads a subject
		}
		if err != nil {
			s.Logger().Warn("consumers of a subject", "dlq", ref.ID(), "subject", k[1], "err", err)
			continue
		}
		others := slices.DeleteFunc(names, func(n string) bool { return n == self })
		if len(others) > 0 {
			out = append(out, components.Fanout{Stream: k[0], Subject: k[1], Others: others})
		}
	}
	return out
}
