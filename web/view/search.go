package view

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/inspect"
	"github.com/queuewatch/queuewatch/jsonpath"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/selexpr"
	"github.com/queuewatch/queuewatch/web/auth"
)

// Search modes: what a query is compared with.
const (
	SearchAuto   = "auto"   // a path when it starts with $, else id, key, a header's value or body text
	SearchID     = "id"     // the message id, whole
	SearchKey    = "key"    // the key's text, whole
	SearchHeader = "header" // NAME=VALUE (a header or property's text, whole) or NAME (present)
	SearchText   = "text"   // the body's text (the decoded value's when decoded), case folded
	SearchPath   = "path"   // $.order.id == "123": a value at a path into the decoded or JSON body
	SearchCEL    = "cel"    // a CEL expression (selexpr)
)

// SearchModes lists the modes in the order a form offers them.
var SearchModes = []string{SearchAuto, SearchID, SearchKey, SearchHeader, SearchText, SearchPath, SearchCEL}

// Bounds of a search: its time budget and the messages read per DLQ,
// both shown in the answer, and the hits returned.
const (
	DefaultSearchBudget = 5 * time.Second
	MaxSearchBudget     = 30 * time.Second
	DefaultSearchPerDLQ = dlqreplay.MaxBrowse
	MaxSearchPerDLQ     = dlqreplay.WhereScan
	DefaultSearchLimit  = 100
	MaxSearchLimit      = 1000
	// searchWorkers DLQs are read at once: a search over many DLQs does
	// not wait for each in turn, nor put more than this on the brokers.
	searchWorkers = 4
)

// SearchQuery is a search across every DLQ the principal may read.
type SearchQuery struct {
	Mode, Q string
	Budget  time.Duration
	PerDLQ  int // messages read per DLQ at most
	Limit   int // hits returned at most
}

// SearchHit is one message found, as the principal may see it, with the
// page token (After) its DLQ was read from.
type SearchHit struct {
	DLQ     string
	After   string
	Message queue.Message
	Size    int // the body's size on the wire
}

// SearchedDLQ is how far one DLQ was searched.
type SearchedDLQ struct {
	DLQ     string
	Depth   int64 // as the last poll counted
	Scanned int
	Matches int
	// Complete: every message was read (the DLQ ended before the cap).
	Complete bool
	// Note says why it was not searched, or not to its end: empty, out
	// of budget, a job running, a broker whose look moves messages, a
	// read that failed.
	Note string
}

// SearchResult is a search's answer: what it found and how far it went.
type SearchResult struct {
	Query     SearchQuery
	Hits      []SearchHit
	DLQs      []SearchedDLQ
	Took      time.Duration
	OutOfTime bool // the budget ran out before every DLQ was read to its cap
	Truncated bool // more hits were found than Limit
}

// Normalize fills defaults and checks the bounds; a bad query is a 400.
func (q *SearchQuery) Normalize() error {
	q.Q = strings.TrimSpace(q.Q)
	if q.Q == "" {
		return echo.NewHTTPError(http.StatusBadRequest, "q is required: an id, a key, a header NAME=VALUE, body text, a path ($.order.id == \"123\") or a CEL expression")
	}
	if q.Mode == "" {
		q.Mode = SearchAuto
	}
	if !slices.Contains(SearchModes, q.Mode) {
		return echo.NewHTTPError(http.StatusBadRequest, "mode "+strconv.Quote(q.Mode)+": want one of "+strings.Join(SearchModes, ", "))
	}
	if q.Budget == 0 {
		q.Budget = DefaultSearchBudget
	}
	if q.PerDLQ == 0 {
		q.PerDLQ = DefaultSearchPerDLQ
	}
	if q.Limit == 0 {
		q.Limit = DefaultSearchLimit
	}
	switch {
	case q.Budget < 100*time.Millisecond || q.Budget > MaxSearchBudget:
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("budget %s: want 100ms to %s", q.Budget, MaxSearchBudget))
	case q.PerDLQ < 1 || q.PerDLQ > MaxSearchPerDLQ:
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("per_dlq %d: want 1 to %d", q.PerDLQ, MaxSearchPerDLQ))
	case q.Limit < 1 || q.Limit > MaxSearchLimit:
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("limit %d: want 1 to %d", q.Limit, MaxSearchLimit))
	}
	return nil
}

// browseRotation is a DLQ service that can tell whether a look moves a
// DLQ's messages (*dlqreplay.Service): search leaves such DLQs alone.
type browseRotation interface {
	BrowseRotates(dlqID string) bool
}

// Search reads every DLQ the principal may read, up to q's bounds, and
// returns the messages q matches. Messages are matched as the principal
// sees them — decoded, then masked — so a masked value is never matched
// by its clear value; the hits shown are recorded as body reads.
func (d DLQs) Search(ctx context.Context, q SearchQuery) (SearchResult, error) {
	if err := q.Normalize(); err != nil {
		return SearchResult{}, err
	}
	match, err := searchMatcher(q.Mode, q.Q)
	if err != nil {
		return SearchResult{}, echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, q.Budget)
	defer cancel()
	out := SearchResult{Query: q, DLQs: d.searchable()}
	hits := make([][]SearchHit, len(out.DLQs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range searchWorkers {
		wg.Go(func() {
			for i := range next {
				hits[i] = d.searchOne(ctx, &out.DLQs[i], q, match)
			}
		})
	}
	for i := range out.DLQs {
		if out.DLQs[i].Note == "" {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	out.Took = time.Since(start)
	for i := range out.DLQs {
		out.OutOfTime = out.OutOfTime || out.DLQs[i].Note == noteOutOfTime
		for _, h := range hits[i] {
			if len(out.Hits) == q.Limit {
				out.Truncated = true
				break
			}
			out.Hits = append(out.Hits, h)
		}
	}
	d.recordSearchReads(ctx, out.Hits)
	return out, nil
}

const noteOutOfTime = "the time budget ran out"

// searchable lists the DLQs the principal may read, by ID, with a note
// on those a search does not read.
func (d DLQs) searchable() []SearchedDLQ {
	p := auth.PrincipalOf(d.c.Request().Context())
	rot, _ := d.svc.(browseRotation)
	var out []SearchedDLQ
	for _, snap := range d.s.Mon(d.c).Snapshots() {
		for i := range snap.DLQs {
			dl := &snap.DLQs[i]
			id := dl.ID()
			if !p.MayDLQ(config.RoleViewer, id) {
				continue
			}
			s := SearchedDLQ{DLQ: id, Depth: dl.Messages}
			switch {
			case dl.Messages == 0:
				s.Complete, s.Note = true, "empty at the last poll"
			case rot != nil && rot.BrowseRotates(id):
				s.Note = "not read: a look moves its messages and counts a receive; search it on its page"
			}
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b SearchedDLQ) int { return strings.Compare(a.DLQ, b.DLQ) })
	return out
}

// searchOne reads one DLQ in pages from its head, up to q.PerDLQ
// messages or the budget, and returns its hits.
func (d DLQs) searchOne(ctx context.Context, s *SearchedDLQ, q SearchQuery, match func(*queue.Message) bool) []SearchHit {
	var hits []SearchHit
	after := ""
	for s.Scanned < q.PerDLQ {
		if ctx.Err() != nil {
			s.Note = noteOutOfTime
			return hits
		}
		p, err := d.svc.Browse(ctx, s.DLQ, dlqreplay.BrowseOptions{Limit: min(dlqreplay.MaxBrowse, q.PerDLQ-s.Scanned), After: after})
		if err != nil {
			s.Note = searchFailure(ctx, err)
			return hits
		}
		shown := d.s.opts.Inspect.Messages(ctx, s.DLQ, p.Messages, false)
		for i := range shown {
			if match(&shown[i]) {
				s.Matches++
				hits = append(hits, SearchHit{DLQ: s.DLQ, After: after, Message: shown[i], Size: len(p.Messages[i].Body)})
			}
		}
		s.Scanned += len(p.Messages)
		if p.Next == "" || len(p.Messages) == 0 {
			s.Complete = true
			return hits
		}
		after = p.Next
	}
	return hits
}

// searchFailure says why a DLQ's read failed, for its line in the answer.
func searchFailure(ctx context.Context, err error) string {
	var ce *dlqreplay.ConflictError
	switch {
	case ctx.Err() != nil:
		return noteOutOfTime
	case errors.As(err, &ce):
		return "not read: job " + ce.JobID + " is running on it"
	case errors.Is(err, dlqreplay.ErrNoReplay):
		return "not read: its broker has no browsing"
	case errors.Is(err, dlqreplay.ErrDeliveryLimit):
		return "not read: a look would spend its messages' delivery limit"
	}
	return "read failed: " + err.Error()
}

// recordSearchReads records the hits shown, per DLQ (a masked read, as
// audit.body_reads says).
func (d DLQs) recordSearchReads(ctx context.Context, hits []SearchHit) {
	byDLQ := map[string][]string{}
	for _, h := range hits {
		byDLQ[h.DLQ] = append(byDLQ[h.DLQ], h.Message.ID)
	}
	who := Who(d.c.Request().Context())
	for dlq, ids := range byDLQ {
		_ = d.s.opts.Inspect.Read(context.WithoutCancel(ctx), who, dlq, inspect.SurfaceSearch, false, ids) // a masked read only logs a failure
	}
}

// searchMatcher compiles a query into a test of one message as shown.
func searchMatcher(mode, q string) (func(*queue.Message) bool, error) {
	switch mode {
	case SearchID:
		return func(m *queue.Message) bool { return m.ID == q }, nil
	case SearchKey:
		return func(m *queue.Message) bool { return m.Key != nil && queue.PrintableBytes(m.Key) == q }, nil
	case SearchHeader:
		name, value, hasValue := strings.Cut(q, "=")
		return func(m *queue.Message) bool { return hasHeader(m, strings.TrimSpace(name), value, hasValue) }, nil
	case SearchText:
		lq := strings.ToLower(q)
		return func(m *queue.Message) bool { return strings.Contains(strings.ToLower(bodyText(m)), lq) }, nil
	case SearchPath:
		return pathMatcher(q)
	case SearchCEL:
		p, err := selexpr.Compile(q)
		if err != nil {
			return nil, fmt.Errorf("q: %w", err)
		}
		now := time.Now()
		return func(m *queue.Message) bool {
			ok, _ := p.Match(selexpr.Input{Message: m, Now: now})
			return ok
		}, nil
	}
	if strings.HasPrefix(q, "$") {
		return pathMatcher(q)
	}
	lq := strings.ToLower(q)
	return func(m *queue.Message) bool {
		return m.ID == q || (m.Key != nil && queue.PrintableBytes(m.Key) == q) ||
			slices.ContainsFunc(m.Headers, func(h queue.Header) bool { return h.Text() == q }) ||
			strings.Contains(strings.ToLower(bodyText(m)), lq)
	}, nil
}

// hasHeader reports whether m has a header or property name (without
// case) whose text is value, or any value when none is given.
func hasHeader(m *queue.Message, name, value string, hasValue bool) bool {
	for _, h := range m.Headers {
		if strings.EqualFold(h.Key, name) && (!hasValue || h.Text() == value) {
			return true
		}
	}
	for k, v := range m.Properties {
		if strings.EqualFold(k, name) && (!hasValue || v == value) {
			return true
		}
	}
	return false
}

// bodyText is the body as searched: the decoded value where the message
// was decoded, else the body's text (0x-hex when binary).
func bodyText(m *queue.Message) string {
	if m.Decoded != nil && m.Decoded.Value != nil {
		return string(m.Decoded.Value)
	}
	return queue.PrintableBytes(m.Body)
}

// pathMatcher reads `$.path == value` (value JSON, or bare text) or
// `$.path` alone (present). Values compare by their text, so "123" and
// 123 both find an order id stored either way.
func pathMatcher(q string) (func(*queue.Message) bool, error) {
	left, right, hasValue := strings.Cut(q, "==")
	p, err := jsonpath.Parse(strings.TrimSpace(left))
	if err != nil {
		return nil, fmt.Errorf("q: %w", err)
	}
	want := strings.TrimSpace(right)
	if u, err := strconv.Unquote(want); err == nil && strings.HasPrefix(want, `"`) {
		want = u
	}
	return func(m *queue.Message) bool {
		b := m.Body
		if m.Decoded != nil && m.Decoded.Value != nil {
			b = m.Decoded.Value
		}
		v, err := jsonpath.Decode(b)
		if err != nil {
			return false
		}
		for _, got := range p.Select(v) {
			if !hasValue || scalarText(got) == want {
				return true
			}
		}
		return false
	}, nil
}

// scalarText is a JSON scalar's text; objects and arrays have none.
func scalarText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case fmt.Stringer: // json.Number
		return t.String()
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return "null"
	}
	return "\x00" // an object or array equals no text
}

// SearchQueryOf reads a search from the request: q, mode, budget (a
// duration: 5s), per_dlq and limit.
func SearchQueryOf(c echo.Context) (SearchQuery, error) {
	q := SearchQuery{Q: c.QueryParam("q"), Mode: c.QueryParam("mode")}
	if q.Mode == "" && c.QueryParams().Has("mode") {
		// Absent is auto; present, it must name a mode.
		return q, echo.NewHTTPError(http.StatusBadRequest, `mode "": want one of `+strings.Join(SearchModes, ", "))
	}
	if v := c.QueryParam("budget"); v != "" {
		b, err := time.ParseDuration(v)
		if err != nil {
			return q, echo.NewHTTPError(http.StatusBadRequest, "budget "+strconv.Quote(v)+": want a duration such as 5s")
		}
		q.Budget = b
	}
	var err error
	if q.PerDLQ, err = IntQuery(c, "per_dlq", DefaultSearchPerDLQ, 1, MaxSearchPerDLQ); err != nil {
		return q, err
	}
	if q.Limit, err = IntQuery(c, "limit", DefaultSearchLimit, 1, MaxSearchLimit); err != nil {
		return q, err
	}
	return q, q.Normalize()
}

// MessageURL is the API's answer for one message, read from page after.
func MessageURL(dlq, msgID, after string) string {
	u := "/api/v1/dlqs/" + url.PathEscape(dlq) + "/messages/" + url.PathEscape(msgID)
	if after != "" {
		u += "?after=" + url.QueryEscape(after)
	}
	return u
}

// MessagePageURL is the DLQ page showing one message: filtered by its id,
// so it is found wherever it is in the DLQ's first 5,000.
func MessagePageURL(dlq, msgID string) string {
	return "/dlq/" + url.PathEscape(dlq) + "?" + url.Values{"where": {"id == " + strconv.Quote(msgID)}}.Encode()
}
