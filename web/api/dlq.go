package api

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/inspect"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/view"
)

// Limits of the DLQ API.
const (
	// MaxRequestBody bounds a JSON request body; larger ones get 413.
	MaxRequestBody = 1 << 20
	// maxInlineBody is the largest message body sent in base64 inside the
	// JSON of a page; larger bodies are downloaded from the body endpoint.
	maxInlineBody = 256 << 10
	// apiBodyView bounds the display form of a body in the API.
	apiBodyView = 64 << 10
	// dryRunWait is how long a dry-run request waits for its receipt
	// before answering 202 with the running job.
	dryRunWait = 20 * time.Second
)

// dlqID reads the :id parameter, a well-formed DLQ ID (the route's need
// checked the principal's role on it).
func dlqID(c echo.Context) (string, error) {
	id, err := view.PathParam(c, "id")
	if err != nil {
		return "", err
	}
	if _, err := dlqreplay.ParseID(id); err != nil {
		return "", echo.NewHTTPError(http.StatusNotFound, err.Error())
	}
	return id, nil
}

// MessageJSON is a dead-lettered message in API responses. Bytes are
// base64 (key, body, header values) with a display form next to them:
// text when printable, else 0x-hex; bodies as pretty JSON, text or a hex
// dump, cut at 64 KiB.
type MessageJSON struct {
	ID            string            `json:"id"`
	Position      int64             `json:"position"`
	Partition     int32             `json:"partition,omitempty"`
	Timestamp     *time.Time        `json:"timestamp,omitempty"`
	Key           []byte            `json:"key,omitempty"`
	KeyText       string            `json:"key_text,omitempty"`
	Properties    map[string]string `json:"properties"`
	Headers       []headerJSON      `json:"headers"`
	Size          int               `json:"size"`
	Body          []byte            `json:"body,omitempty"`
	BodyOmitted   bool              `json:"body_omitted,omitempty"`
	BodyView      bodyViewJSON      `json:"body_view"`
	BodyURL       string            `json:"body_url"`
	DeliveryCount int64             `json:"delivery_count,omitempty"`
	ReplayCount   int64             `json:"replay_count,omitempty"`
	Failure       failureJSON       `json:"failure"`
	// Decoded and KeyDecoded are the body and key decoded through the
	// cluster's schema registry; Masked counts the values masking hid
	// (key, body, body_view, decoded and header values are then masked).
	Decoded    *queue.Decoded `json:"decoded,omitempty"`
	KeyDecoded *queue.Decoded `json:"key_decoded,omitempty"`
	Masked     int            `json:"masked,omitempty"`
}

type headerJSON struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
	Text  string `json:"text"`
	Kind  string `json:"kind,omitempty"`
}

type bodyViewJSON struct {
	Kind      string `json:"kind"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"`
}

type failureJSON struct {
	Group              string      `json:"group"`
	Source             string      `json:"source"`
	Reason             string      `json:"reason"`
	Framework          string      `json:"framework,omitempty"`
	ExceptionClass     string      `json:"exception_class,omitempty"`
	ExceptionMessage   string      `json:"exception_message,omitempty"`
	StackTrace         string      `json:"stack_trace,omitempty"`
	FirstQueue         string      `json:"first_queue,omitempty"`
	FirstReason        string      `json:"first_reason,omitempty"`
	OriginalExchange   string      `json:"original_exchange,omitempty"`
	OriginalRoutingKey string      `json:"original_routing_key,omitempty"`
	OriginalTopic      string      `json:"original_topic,omitempty"`
	Deaths             []deathJSON `json:"deaths,omitempty"`

	OriginalPartition     *int32     `json:"original_partition,omitempty"`
	OriginalOffset        *int64     `json:"original_offset,omitempty"`
	OriginalTimestamp     *time.Time `json:"original_timestamp,omitempty"`
	OriginalTimestampType string     `json:"original_timestamp_type,omitempty"`
	ConsumerGroup         string     `json:"consumer_group,omitempty"`
	CauseClass            string     `json:"cause_class,omitempty"`
	WrapperClass          string     `json:"wrapper_class,omitempty"`
	Connector             string     `json:"connector,omitempty"`
	TaskID                *int32     `json:"task_id,omitempty"`
	Stage                 string     `json:"stage,omitempty"`
	ExecutingClass        string     `json:"executing_class,omitempty"`
}

type deathJSON struct {
	Queue       string    `json:"queue"`
	Reason      string    `json:"reason"`
	Exchange    string    `json:"exchange"`
	RoutingKeys []string  `json:"routing_keys"`
	Count       int64     `json:"count"`
	Own         int64     `json:"own_receives,omitempty"` // of count, queuewatch's own (SQS browses)
	Time        time.Time `json:"time,omitzero"`
}

func toMessageJSON(dlq, after string, m *queue.Message) MessageJSON {
	out := MessageJSON{
		ID: m.ID, Position: m.Position, Partition: m.Partition, Key: m.Key, Properties: m.Properties,
		Headers: make([]headerJSON, len(m.Headers)), Size: len(m.Body), DeliveryCount: m.DeliveryCount,
		ReplayCount: view.ReplayCount(m), BodyURL: view.BodyURL(dlq, m.ID, after),
		Decoded: m.Decoded, KeyDecoded: m.KeyDecoded, Masked: m.Masked,
	}
	if out.Properties == nil {
		out.Properties = map[string]string{}
	}
	if !m.Timestamp.IsZero() {
		ts := m.Timestamp
		out.Timestamp = &ts
	}
	if m.Key != nil {
		out.KeyText = queue.PrintableBytes(m.Key)
	}
	for i, h := range m.Headers {
		out.Headers[i] = headerJSON{Key: queue.PrintableBytes([]byte(h.Key)), Value: h.Value, Text: h.Text(), Kind: h.Kind}
	}
	if len(m.Body) <= maxInlineBody {
		out.Body = m.Body
	} else {
		out.BodyOmitted = true
	}
	kind, text, cut := m.BodyView(apiBodyView)
	out.BodyView = bodyViewJSON{Kind: kind, Text: text, Truncated: cut}
	d := &m.Death
	out.Failure = failureJSON{
		Group: d.Signature().Key(), Source: d.Source(), Reason: d.Reason(), Framework: d.Framework,
		ExceptionClass: d.ExceptionClass, ExceptionMessage: d.ExceptionMessage, StackTrace: d.StackTrace,
		FirstQueue: d.FirstQueue, FirstReason: d.FirstReason, OriginalExchange: d.OriginalExchange,
		OriginalRoutingKey: d.OriginalRoutingKey, OriginalTopic: d.OriginalTopic,
	}
	for _, x := range d.Deaths {
		out.Failure.Deaths = append(out.Failure.Deaths, deathJSON{x.Queue, x.Reason, x.Exchange, x.RoutingKeys, x.Count, x.Own, x.Time})
	}
	frameworkFailure(&out.Failure, d)
	return out
}

// frameworkFailure adds what a framework recorded about the failed record
// beyond its exception: where it was read (Kafka), the exception's cause
// and wrapper, and Kafka Connect's connector, task, stage and class.
func frameworkFailure(f *failureJSON, d *queue.DeathInfo) {
	if d.HasOriginalOffset {
		p, o := d.OriginalPartition, d.OriginalOffset
		f.OriginalPartition, f.OriginalOffset = &p, &o
	}
	if !d.OriginalTimestamp.IsZero() {
		ts := d.OriginalTimestamp.UTC()
		f.OriginalTimestamp = &ts
	}
	if d.HasTaskID {
		id := d.TaskID
		f.TaskID = &id
	}
	f.OriginalTimestampType, f.ConsumerGroup = d.OriginalTimestampType, d.ConsumerGroup
	f.CauseClass, f.WrapperClass = d.CauseClass, d.WrapperClass
	f.Connector, f.Stage, f.ExecutingClass = d.Connector, d.Stage, d.ExecutingClass
}

// FailureGroupJSON is one group of a page's messages by failure reason
// (or ?group_by=).
type FailureGroupJSON struct {
	Key       string                 `json:"key"`
	Signature queue.FailureSignature `json:"signature"`
	Count     int                    `json:"count"`
	FirstSeen time.Time              `json:"first_seen,omitzero"`
	LastSeen  time.Time              `json:"last_seen,omitzero"`
}

// DLQMessages is GET /api/v1/dlqs/{id}/messages: one page of a DLQ's
// messages, masked, and the read recorded.
func (s *Server) DLQMessages(c echo.Context) error {
	svc, err := s.DLQ(c)
	if err != nil {
		return err
	}
	id, err := dlqID(c)
	if err != nil {
		return err
	}
	limit, err := view.IntQuery(c, "limit", 50, 1, 1000)
	if err != nil {
		return err
	}
	groupBy, err := view.GroupByQuery(c)
	if err != nil {
		return err
	}
	after, where := c.QueryParam("after"), c.QueryParam("where")
	p, err := svc.Browse(c.Request().Context(), id, dlqreplay.BrowseOptions{Limit: limit, After: after, Where: where}, inspect.SurfaceAPI, "")
	if err != nil {
		return s.DLQFail(c, err)
	}
	shown := p.Messages
	msgs := make([]MessageJSON, len(shown))
	for i := range shown {
		msgs[i] = toMessageJSON(id, after, &shown[i])
		msgs[i].Size = p.Sizes[i] // on the wire, not masked
	}
	groups := make([]FailureGroupJSON, len(p.Groups))
	for i, g := range p.Groups {
		groups[i] = FailureGroupJSON{g.Signature.Key(), g.Signature, g.Count, g.FirstSeen, g.LastSeen}
	}
	out := map[string]any{"dlq": id, "messages": msgs, "next": p.Next, "groups": groups}
	if where != "" {
		out["where"], out["scanned"] = where, p.Scanned
	}
	if groupBy != nil {
		out["field_groups"] = inspect.GroupByField(shown, *groupBy)
	}
	return c.JSON(http.StatusOK, out)
}

// DLQMessage answers one message; ?unmask=true shows its masked values
// in clear to a principal with the unmask role, and audits that view.
func (s *Server) DLQMessage(c echo.Context) error {
	id, m, size, err := s.oneMessage(c, inspect.SurfaceMessage)
	if err != nil || m == nil {
		return err
	}
	out := toMessageJSON(id, c.QueryParam("after"), m)
	out.Size = size
	return c.JSON(http.StatusOK, out)
}

// DLQBody downloads one message's body as an attachment: never
// rendered by the browser, whatever it contains. A masked body downloads
// masked (X-Queuewatch-Masked counts the values hidden).
func (s *Server) DLQBody(c echo.Context) error {
	_, m, _, err := s.oneMessage(c, inspect.SurfaceDownload)
	if err != nil || m == nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": DownloadName(m.ID)}))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	if m.Masked > 0 {
		h.Set("X-Queuewatch-Masked", strconv.Itoa(m.Masked))
	}
	return c.Blob(http.StatusOK, echo.MIMEOctetStream, m.Body)
}

// oneMessage finds the :msg of DLQ :id and returns it as it may be shown
// on surface: masked, or in clear when ?unmask=true is asked and allowed;
// size is its body's size on the wire. A nil message with a nil error
// means the answer was written already (a running job's 409).
func (s *Server) oneMessage(c echo.Context, surface string) (id string, shown *queue.Message, size int, err error) {
	svc, err := s.DLQ(c)
	if err != nil {
		return "", nil, 0, err
	}
	id, err = dlqID(c)
	if err != nil {
		return "", nil, 0, err
	}
	msgID, err := view.PathParam(c, "msg")
	if err != nil {
		return "", nil, 0, err
	}
	inClear, err := s.ClearRequested(c, id)
	if err != nil {
		return "", nil, 0, err
	}
	m, size, err := svc.Message(c.Request().Context(), id, msgID, c.QueryParam("after"), surface, inClear)
	if err != nil {
		return "", nil, 0, s.DLQFail(c, err)
	}
	return id, &m, size, nil
}

// DownloadName makes a safe file name from a message ID.
func DownloadName(id string) string {
	b := []byte(id)
	for i, ch := range b {
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9', ch == '-', ch == '_', ch == '.':
		default:
			b[i] = '_'
		}
	}
	if len(b) > 100 {
		b = b[:100]
	}
	return "message-" + string(b) + ".bin"
}

// replayRequest is the body of POST /api/v1/dlqs/{id}/replay; the DLQ is
// the path's and the user the request's.
type replayRequest struct {
	Action    dlqreplay.Action    `json:"action"`
	Selection dlqreplay.Selection `json:"selection"`
	Target    targetRequest       `json:"target"`
	DryRun    bool                `json:"dry_run"`
	// Mode "native" has the broker move everything itself (a DLQ whose
	// backend is a dlqreplay.NativeRedriver); absent or "pipeline"
	// replays through queuewatch. A pointer, so that an empty mode is
	// refused like any other the document does not list.
	Mode *dlqreplay.Mode `json:"mode"`
	// Rate is messages per second: 0 is the configured default, negative
	// is unlimited.
	Rate float64 `json:"rate"`
}

// targetRequest is a replay's target as the API takes it. Kind is a
// pointer, so that an empty kind is refused like any other the document
// does not list, while an absent one is the default.
type targetRequest struct {
	Kind *dlqreplay.TargetKind `json:"kind"`
	Name string                `json:"name"`
}

func (t targetRequest) target() dlqreplay.Target {
	d := dlqreplay.Target{Name: t.Name}
	if t.Kind != nil {
		d.Kind = *t.Kind
	}
	return d
}

// DLQReplay is POST /api/v1/dlqs/{id}/replay: a replay, move or delete
// (or its dry run), answered with its job or receipt.
func (s *Server) DLQReplay(c echo.Context) error {
	svc, err := s.DLQ(c)
	if err != nil {
		return err
	}
	id, err := dlqID(c)
	if err != nil {
		return err
	}
	var req replayRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if err := req.check(); err != nil {
		return err
	}
	ctx := c.Request().Context()
	job, err := svc.Start(ctx, dlqreplay.Request{
		DLQ: id, Action: req.Action, Selection: req.Selection,
		Target: req.Target.target(), DryRun: req.DryRun, Mode: req.mode(), Rate: req.Rate,
	})
	if err != nil {
		return s.DLQFail(c, err)
	}
	if req.DryRun {
		// A dry run moves nothing and is usually quick: answer with the
		// receipt, or with the job when it takes longer.
		wctx, cancel := context.WithTimeout(ctx, dryRunWait)
		defer cancel()
		if r, err := svc.Wait(wctx, job.ID); err == nil {
			return c.JSON(http.StatusOK, withOutcomes(r))
		}
	}
	c.Response().Header().Set(echo.HeaderLocation, "/api/v1/replays/"+url.PathEscape(job.ID))
	return c.JSON(http.StatusAccepted, map[string]any{"job": job})
}

// previewRequest is the body of POST /api/v1/dlqs/{id}/preview: what a
// job would be asked, without what only a job has (a dry run, a mode, a
// rate).
type previewRequest struct {
	Action    dlqreplay.Action    `json:"action"`
	Selection dlqreplay.Selection `json:"selection"`
	Target    targetRequest       `json:"target"`
}

// previewJSON is a preview's answer: the request as the service read it,
// the counts, and every message's outcome. Complete is false when the
// preview stopped at its deadline (progress.remaining were not read).
type previewJSON struct {
	DLQ       string              `json:"dlq"`
	Action    dlqreplay.Action    `json:"action"`
	Selection dlqreplay.Selection `json:"selection"`
	Target    dlqreplay.Target    `json:"target"`
	Note      string              `json:"note,omitempty"`
	Complete  bool                `json:"complete"`
	Progress  dlqreplay.Progress  `json:"progress"`
	Outcomes  []dlqreplay.Outcome `json:"outcomes"`
}

// DLQPreview answers what a replay, move or delete would do, found by
// the pipeline's dry run, and records nothing: no job, no line in the
// audit log. The confirmation dialog asks it when it opens; a dry run
// someone asks for is POST …/replay with dry_run, and is recorded.
func (s *Server) DLQPreview(c echo.Context) error {
	svc, err := s.DLQ(c)
	if err != nil {
		return err
	}
	id, err := dlqID(c)
	if err != nil {
		return err
	}
	var pr previewRequest
	if err := decodeJSON(c, &pr); err != nil {
		return err
	}
	req := replayRequest{Action: pr.Action, Selection: pr.Selection, Target: pr.Target}
	if err := req.check(); err != nil {
		return err
	}
	ctx := c.Request().Context()
	pctx, cancel := context.WithTimeout(ctx, dryRunWait)
	defer cancel()
	p, err := svc.Preview(pctx, dlqreplay.Request{
		DLQ: id, Action: req.Action, Selection: req.Selection, Target: req.Target.target(),
	})
	if err != nil {
		return s.DLQFail(c, err)
	}
	j := p.Job
	return c.JSON(http.StatusOK, previewJSON{
		DLQ: j.DLQ, Action: j.Action, Selection: j.Selection, Target: j.Target, Note: j.Note,
		Complete: p.Complete, Progress: j.Progress, Outcomes: list(p.Outcomes),
	})
}

// Replay returns a job with every message's outcome, or only the job
// with ?outcomes=false (the progress bar's cheap poll).
func (s *Server) Replay(c echo.Context) error {
	svc, err := s.DLQ(c)
	if err != nil {
		return err
	}
	id, err := view.PathParam(c, "job")
	if err != nil {
		return err
	}
	outcomes, err := boolQuery(c, "outcomes", true)
	if err != nil {
		return err
	}
	j, err := svc.PathJob(c.Request().Context(), id)
	if err != nil {
		return s.DLQFail(c, err)
	}
	if !outcomes {
		return c.JSON(http.StatusOK, map[string]any{"job": j})
	}
	r, err := svc.ReceiptOf(c.Request().Context(), j)
	if err != nil {
		return s.DLQFail(c, err)
	}
	return c.JSON(http.StatusOK, withOutcomes(r))
}

// CancelReplay is DELETE /api/v1/replays/{job}.
func (s *Server) CancelReplay(c echo.Context) error {
	svc, err := s.DLQ(c)
	if err != nil {
		return err
	}
	id, err := view.PathParam(c, "job")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := svc.Cancel(id); err != nil {
		if j, jerr := svc.Job(ctx, id); jerr == nil && errors.Is(err, dlqreplay.ErrJobNotFound) {
			return c.JSON(http.StatusConflict, map[string]any{"error": "job " + id + " is not running (" + string(j.State) + ")", "job": id})
		}
		return s.DLQFail(c, err)
	}
	s.Logger().Info("dlq job cancel requested", "job", id, "who", view.Who(ctx))
	j, err := svc.Job(ctx, id)
	if err != nil {
		return s.DLQFail(c, err)
	}
	return c.JSON(http.StatusAccepted, map[string]any{"job": j})
}

// Audit lists, newest first, the one audit feed of every action
// (events: jobs, body reads and unmasks, resets, pauses and resumes,
// filtered by who, object, action and dlq), and the jobs and body reads
// alone as before.
func (s *Server) Audit(c echo.Context) error {
	if _, err := s.DLQ(c); err != nil {
		return err
	}
	limit, err := view.IntQuery(c, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	f := auditFilter{who: c.QueryParam("who"), object: c.QueryParam("object"), action: c.QueryParam("action"), dlq: c.QueryParam("dlq")}
	log, err := s.auditFeed(c, f, limit)
	if err != nil {
		return s.DLQFail(c, err)
	}
	return c.JSON(http.StatusOK, map[string]any{"jobs": list(log.jobs), "reads": list(log.reads), "events": list(log.events)})
}

// list is s, or an empty list where s is nil: [] in the API, not null.
func list[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ArchivedJSON is a message a delete archived.
type ArchivedJSON struct {
	ID         int64             `json:"id"`
	JobID      string            `json:"job_id"`
	DLQ        string            `json:"dlq"`
	MessageID  string            `json:"message_id"`
	ArchivedAt time.Time         `json:"archived_at"`
	Properties map[string]string `json:"properties"`
	Headers    []headerJSON      `json:"headers"`
	Key        []byte            `json:"key,omitempty"`
	Size       int               `json:"size"`
	Body       []byte            `json:"body,omitempty"`
	BodyView   bodyViewJSON      `json:"body_view"`
	RestoredAt time.Time         `json:"restored_at,omitzero"`
	RestoredTo string            `json:"restored_to,omitempty"`
	Decoded    *queue.Decoded    `json:"decoded,omitempty"`
	Masked     int               `json:"masked,omitempty"`
}

// toArchivedJSON renders an archived row and its display form m (from
// shownArchived: a's key, headers and body are already what may be shown).
func toArchivedJSON(a *dlqreplay.Archived, m *queue.Message) ArchivedJSON {
	out := ArchivedJSON{
		Decoded: m.Decoded, Masked: m.Masked,
		ID: a.ID, JobID: a.JobID, DLQ: a.DLQ, MessageID: a.MessageID, ArchivedAt: a.ArchivedAt,
		Properties: a.Properties, Key: a.Key, Size: len(a.Body), RestoredAt: a.RestoredAt, RestoredTo: a.RestoredTo,
		Headers: make([]headerJSON, len(m.Headers)),
	}
	if out.Properties == nil {
		out.Properties = map[string]string{}
	}
	for i, h := range m.Headers {
		out.Headers[i] = headerJSON{Key: queue.PrintableBytes([]byte(h.Key)), Value: h.Value, Text: h.Text(), Kind: h.Kind}
	}
	if len(a.Body) <= maxInlineBody {
		out.Body = a.Body
	}
	kind, text, cut := m.BodyView(apiBodyView)
	out.BodyView = bodyViewJSON{Kind: kind, Text: text, Truncated: cut}
	return out
}

// Archive is GET /api/v1/archive: the archived messages the principal
// sees, newest first.
func (s *Server) Archive(c echo.Context) error {
	svc, err := s.DLQ(c)
	if err != nil {
		return err
	}
	limit, err := view.IntQuery(c, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	a, err := svc.Archived(c.Request().Context(), dlqreplay.ArchiveQuery{DLQ: c.QueryParam("dlq"), Limit: limit})
	if err != nil {
		return s.DLQFail(c, err)
	}
	rows, msgs := a.Rows, a.Messages
	out := make([]ArchivedJSON, len(rows))
	for i := range rows {
		out[i] = toArchivedJSON(&rows[i], &msgs[i])
	}
	return c.JSON(http.StatusOK, map[string]any{"archived": out})
}

// restoreRequest is the body of POST /api/v1/archive/restore: archive IDs
// or a delete job's ID, the DLQ-style ID of the queue or topic to publish
// into, and the rate.
type restoreRequest struct {
	ArchiveIDs []int64 `json:"archive_ids"`
	JobID      string  `json:"job_id"`
	Target     string  `json:"target"`
	// Rate is messages per second, as a replay's: 0 is the configured
	// default, negative is unlimited.
	Rate float64 `json:"rate"`
}

// Restore starts a restore job and answers 202 with it, like a replay:
// a restore keeps the rate, so a large one outlasts any request and is
// followed on /api/v1/replays/{job}.
func (s *Server) Restore(c echo.Context) error {
	svc, err := s.DLQ(c)
	if err != nil {
		return err
	}
	var req restoreRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.Target) == "" {
		return echo.NewHTTPError(http.StatusBadRequest, "target is required: the queue or topic to restore into, as broker:cluster:vhost:name")
	}
	ctx := c.Request().Context()
	job, err := svc.StartRestore(ctx, dlqreplay.RestoreRequest{
		ArchiveIDs: req.ArchiveIDs, JobID: req.JobID, Target: req.Target, Rate: req.Rate, Who: view.Who(ctx),
	})
	if err != nil {
		return s.DLQFail(c, err)
	}
	c.Response().Header().Set(echo.HeaderLocation, "/api/v1/replays/"+url.PathEscape(job.ID))
	return c.JSON(http.StatusAccepted, map[string]any{"job": job})
}
