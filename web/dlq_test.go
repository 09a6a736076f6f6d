package web

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/api"
	"github.com/queuewatch/queuewatch/web/auth"
)

// The real service satisfies the interface the web layer declares.
var _ auth.DLQService = (*dlqreplay.Service)(nil)

const (
	hostileImg = `<img src=x onerror=alert(2)>`
	// hostileQueue is a DLQ whose very name is markup.
	hostileQueue = `orders<script>alert(3)</script>.dlq`
)

var (
	testDLQ    = dlqreplay.Ref{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "orders.dlq"}.ID()
	hostileDLQ = dlqreplay.Ref{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: hostileQueue}.ID()
)

// fakeDLQ is a DLQService over fixed messages: it checks what the handlers
// pass in and answers with the errors the real service uses.
type fakeDLQ struct {
	mu       sync.Mutex
	msgs     []queue.Message
	running  string // job holding testDLQ
	started  []dlqreplay.Request
	jobs     map[string]dlqreplay.Receipt
	order    []string
	archived []dlqreplay.Archived
	restores []dlqreplay.RestoreRequest
	limitHit bool
	// clusters are the clusters besides "main" whose DLQs it reads.
	clusters []string
}

func newFakeDLQ() *fakeDLQ {
	died := time.Now().Add(-2 * time.Hour)
	death := []queue.Death{{Queue: "orders", Reason: "rejected", Exchange: "", RoutingKeys: []string{"orders"}, Count: 3, Time: died}}
	msgs := []queue.Message{
		{
			ID: "m-1", Timestamp: died, Body: []byte(`{"order":1,"total":19.5}`), Properties: map[string]string{"content_type": "application/json"},
			Headers: []queue.Header{{Key: "x-queuewatch-replay-count", Value: []byte("2"), Kind: "int"}},
		},
		{
			ID: "m-hostile", Timestamp: died.Add(time.Minute), Body: []byte(`<script>alert(1)</script>`),
			Headers:    []queue.Header{{Key: "note", Value: []byte(hostileImg), Kind: "string"}, {Key: hostileImg, Value: []byte{0, 1, 0xfe}, Kind: "bytes"}},
			Properties: map[string]string{"type": hostileImg},
		},
		{ID: "m-bin", Timestamp: died.Add(2 * time.Minute), Body: bytes.Repeat([]byte{0xff, 0x00, 0x3c}, 10000)},
	}
	for i := range msgs {
		msgs[i].Position = int64(i)
		msgs[i].Death = queue.DecodeDeath(msgs[i].Headers, death)
	}
	f := &fakeDLQ{msgs: msgs, jobs: map[string]dlqreplay.Receipt{}}
	now := time.Now()
	f.add(dlqreplay.Receipt{
		Job: dlqreplay.Job{
			ID: "job-old", DLQ: testDLQ, Action: dlqreplay.ActionReplay, Who: "alice",
			State: dlqreplay.StateInterrupted, Created: now.Add(-time.Hour), Target: dlqreplay.Target{Kind: dlqreplay.TargetOriginal},
			Selection: dlqreplay.Selection{All: true}, Progress: dlqreplay.Progress{ToMove: 10, Moved: 4, Remaining: 6},
		},
		Outcomes: []dlqreplay.Outcome{{MessageID: hostileImg, Result: dlqreplay.ResultMoved, Target: "/orders", Source: "orders"}},
	})
	f.archived = []dlqreplay.Archived{{
		ID: 7, JobID: "job-del", DLQ: hostileDLQ, MessageID: "m-gone", ArchivedAt: now.Add(-time.Minute),
		Headers: []queue.Header{{Key: "k", Value: []byte(hostileImg)}}, Body: []byte(`<script>alert(4)</script>`),
	}}
	return f
}

func (f *fakeDLQ) add(r dlqreplay.Receipt) {
	f.jobs[r.Job.ID] = r
	f.order = append([]string{r.Job.ID}, f.order...)
}

func (f *fakeDLQ) check(id string) error {
	ref, err := dlqreplay.ParseID(id)
	if err != nil {
		return err
	}
	if ref.Cluster != "main" && !slices.Contains(f.clusters, ref.Cluster) {
		return fmt.Errorf("dlq %s: no cluster: %w", id, dlqreplay.ErrUnknownDLQ)
	}
	return nil
}

func (f *fakeDLQ) Browse(_ context.Context, id string, o dlqreplay.BrowseOptions) (dlqreplay.Page, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check(id); err != nil {
		return dlqreplay.Page{}, err
	}
	if f.running != "" {
		return dlqreplay.Page{}, &dlqreplay.ConflictError{DLQ: id, JobID: f.running}
	}
	if f.limitHit {
		return dlqreplay.Page{}, fmt.Errorf("browse: %w: message 0 was delivered 3 times", dlqreplay.ErrDeliveryLimit)
	}
	from, _ := strconv.Atoi(o.After)
	to := min(from+o.Limit, len(f.msgs))
	if o.Where != "" { // the service's filtered page: every message read
		to = len(f.msgs)
	}
	p := dlqreplay.Page{Messages: append([]queue.Message(nil), f.msgs[from:to]...)}
	if to < len(f.msgs) {
		p.Next = strconv.Itoa(to)
	}
	if o.Where != "" {
		p.Scanned = len(p.Messages)
		p.Messages = slices.DeleteFunc(p.Messages, func(m queue.Message) bool { return !(dlqreplay.Selection{Where: o.Where}).Match(&m) })
	}
	p.Groups, p.GroupsOf = queue.GroupFailures(p.Messages), len(p.Messages)
	p.GroupsHead = o.After == ""
	p.GroupsWhole = p.GroupsHead && p.Next == ""
	return p, nil
}

func (f *fakeDLQ) Start(_ context.Context, req dlqreplay.Request) (dlqreplay.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check(req.DLQ); err != nil {
		return dlqreplay.Job{}, err
	}
	if f.running != "" {
		return dlqreplay.Job{}, &dlqreplay.ConflictError{DLQ: req.DLQ, JobID: f.running}
	}
	if req.Action == "" {
		req.Action = dlqreplay.ActionReplay
	}
	switch {
	case req.Action != dlqreplay.ActionReplay && req.Action != dlqreplay.ActionMove && req.Action != dlqreplay.ActionDelete:
		return dlqreplay.Job{}, fmt.Errorf("action %q: %w", req.Action, dlqreplay.ErrInvalidRequest)
	case req.Target.Name == "missing":
		return dlqreplay.Job{}, fmt.Errorf("queue missing: %w", dlqreplay.ErrTargetMissing)
	}
	f.started = append(f.started, req)
	j := dlqreplay.Job{
		ID: "job-" + strconv.Itoa(len(f.started)), DLQ: req.DLQ, Action: req.Action, Who: req.Who, DryRun: req.DryRun,
		Selection: req.Selection, Target: req.Target, State: dlqreplay.StateRunning, Created: time.Now(),
	}
	r := dlqreplay.Receipt{Job: j}
	if req.DryRun {
		r.Job.State = dlqreplay.StateSucceeded
		r.Outcomes = []dlqreplay.Outcome{{MessageID: "m-1", Result: dlqreplay.ResultWouldMove, Target: "/orders"}}
	} else {
		f.running = j.ID
	}
	f.add(r)
	return j, nil
}

// Preview answers as the real service's preview: every message would
// move, nothing is recorded; the errors are Start's.
func (f *fakeDLQ) Preview(_ context.Context, req dlqreplay.Request) (dlqreplay.Preview, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check(req.DLQ); err != nil {
		return dlqreplay.Preview{}, err
	}
	if f.running != "" {
		return dlqreplay.Preview{}, &dlqreplay.ConflictError{DLQ: req.DLQ, JobID: f.running}
	}
	if req.Action == "" {
		req.Action = dlqreplay.ActionReplay
	}
	if req.Target.Name == "missing" {
		return dlqreplay.Preview{}, fmt.Errorf("queue missing: %w", dlqreplay.ErrTargetMissing)
	}
	if err := req.Selection.Validate(); err != nil {
		return dlqreplay.Preview{}, err
	}
	p := dlqreplay.Preview{Complete: true, Job: dlqreplay.Job{
		DLQ: req.DLQ, Action: req.Action, DryRun: true, Selection: req.Selection, Target: req.Target,
		State: dlqreplay.StateSucceeded, Created: time.Now(),
	}}
	for _, m := range f.msgs {
		if req.Selection.All || req.Selection.Match(&m) {
			p.Outcomes = append(p.Outcomes, dlqreplay.Outcome{MessageID: m.ID, Result: dlqreplay.ResultWouldMove, Target: "/orders"})
		}
	}
	n := int64(len(p.Outcomes))
	p.Job.Progress = dlqreplay.Progress{Depth: int64(len(f.msgs)), ToMove: n, WouldMove: n}
	return p, nil
}

func (f *fakeDLQ) Wait(_ context.Context, id string) (dlqreplay.Receipt, error) {
	return f.Receipt(context.Background(), id)
}

func (f *fakeDLQ) Job(_ context.Context, id string) (dlqreplay.Job, error) {
	r, err := f.Receipt(context.Background(), id)
	return r.Job, err
}

func (f *fakeDLQ) ReceiptOf(ctx context.Context, j dlqreplay.Job) (dlqreplay.Receipt, error) {
	return f.Receipt(ctx, j.ID)
}

func (f *fakeDLQ) Receipt(_ context.Context, id string) (dlqreplay.Receipt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.jobs[id]
	if !ok {
		return dlqreplay.Receipt{}, fmt.Errorf("job %s: %w", id, dlqreplay.ErrJobNotFound)
	}
	return r, nil
}

func (f *fakeDLQ) Cancel(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id != f.running {
		return fmt.Errorf("job %s: %w", id, dlqreplay.ErrJobNotFound)
	}
	r := f.jobs[id]
	r.Job.State = dlqreplay.StateCancelled
	f.jobs[id] = r
	f.running = ""
	return nil
}

// Jobs filters as the store does: by DLQ and Visible, then the limit.
func (f *fakeDLQ) Jobs(_ context.Context, q dlqreplay.JobQuery) ([]dlqreplay.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []dlqreplay.Job{}
	for _, id := range f.order {
		if j := f.jobs[id].Job; (q.DLQ == "" || j.DLQ == q.DLQ) && (q.Visible == nil || q.Visible(j.DLQ)) && len(out) < q.Limit {
			out = append(out, j)
		}
	}
	return out, nil
}

func (f *fakeDLQ) Archived(_ context.Context, q dlqreplay.ArchiveQuery) ([]dlqreplay.Archived, error) {
	out := []dlqreplay.Archived{}
	for _, a := range f.archived {
		if (q.DLQ == "" || a.DLQ == q.DLQ) && (q.Visible == nil || q.Visible(a.DLQ)) && (q.IDs == nil || slices.Contains(q.IDs, a.ID)) {
			out = append(out, a)
		}
	}
	return out, nil
}

func (f *fakeDLQ) StartRestore(_ context.Context, req dlqreplay.RestoreRequest) (dlqreplay.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check(req.Target); err != nil {
		return dlqreplay.Job{}, err
	}
	if len(req.ArchiveIDs) == 1 && req.ArchiveIDs[0] == 404 {
		return dlqreplay.Job{}, fmt.Errorf("no archived messages match: %w", dlqreplay.ErrJobNotFound)
	}
	f.restores = append(f.restores, req)
	ref, _ := dlqreplay.ParseID(req.Target)
	j := dlqreplay.Job{
		ID: "job-restore-" + strconv.Itoa(len(f.restores)), DLQ: req.Target, Action: dlqreplay.ActionRestore, Who: req.Who,
		State: dlqreplay.StateRunning, Created: time.Now(), Target: dlqreplay.Target{Kind: dlqreplay.TargetNamed, Name: ref.Name},
		Progress: dlqreplay.Progress{ToMove: 1, Remaining: 1},
	}
	f.add(dlqreplay.Receipt{Job: j})
	return j, nil
}

// dlqServer serves the fake DLQ service with one RabbitMQ DLQ and one
// whose name is markup.
func dlqServer(t *testing.T, mode string, svc auth.DLQService) *Server {
	t.Helper()
	return dlqServerAuth(authConfig(t, mode), svc)
}

// dlqServerAuth is dlqServer with any auth configuration.
func dlqServerAuth(auth config.Auth, svc auth.DLQService) *Server {
	snap := &queue.Snapshot{Broker: queue.RabbitMQ, Cluster: "main", Time: time.Now(), DLQs: []queue.DLQ{
		{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "orders.dlq", Sources: []string{"orders"}, Messages: 3, OldestAge: 2 * time.Hour, HasOldestAge: true},
		{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: hostileQueue, Sources: []string{hostileImg}, Messages: 1},
	}}
	return New(Options{
		Metrics: http.NotFoundHandler(), DLQs: svc, Auth: auth, ReplayRate: 200,
		Monitor: historyMonitor{staticMonitor{
			ready: true, snaps: []*queue.Snapshot{snap},
			statuses: []queue.SourceStatus{{Broker: queue.RabbitMQ, Cluster: "main", Up: true, Polled: true, LastPoll: time.Now()}},
		}},
	})
}

// client sends requests as one user, as a script does: no Origin and no
// Sec-Fetch-Site.
type client struct {
	t    *testing.T
	s    *Server
	auth []reqOpt
}

func newClient(t *testing.T, s *Server, auth ...reqOpt) *client {
	return &client{t: t, s: s, auth: auth}
}

func (c *client) do(method, target, body string, extra ...reqOpt) *httptest.ResponseRecorder {
	c.t.Helper()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for _, o := range c.auth {
		o(r)
	}
	for _, o := range extra {
		o(r)
	}
	rec := httptest.NewRecorder()
	c.s.ServeHTTP(rec, r)
	return rec
}

func decode[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %q: %v", rec.Body.String(), err)
	}
	return v
}

func apiDLQ(id string) string { return "/api/v1/dlqs/" + url.PathEscape(id) }

func TestDLQAPINotConfigured(t *testing.T) {
	s := dlqServer(t, config.AuthNone, nil)
	c := newClient(t, s)
	for _, r := range []struct{ method, target, body string }{
		{"GET", apiDLQ(testDLQ) + "/messages", ""},
		{"GET", apiDLQ(testDLQ) + "/messages/m-1/body", ""},
		{"POST", apiDLQ(testDLQ) + "/replay", `{"selection":{"all":true}}`},
		{"GET", "/api/v1/replays/job-1", ""},
		{"DELETE", "/api/v1/replays/job-1", ""},
		{"GET", "/api/v1/audit", ""},
		{"GET", "/api/v1/archive", ""},
		{"POST", "/api/v1/archive/restore", `{"archive_ids":[1],"target":"` + testDLQ + `"}`},
	} {
		rec := c.do(r.method, r.target, r.body)
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "DLQ tools not configured") {
			t.Errorf("%s %s = %d %s", r.method, r.target, rec.Code, rec.Body.String())
		}
	}
	rec := c.do("GET", "/dlq/"+url.PathEscape(testDLQ), "")
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "DLQ tools not configured") ||
		strings.Contains(rec.Body.String(), `data-action="replay"`) {
		t.Errorf("DLQ page without service: %d", rec.Code)
	}
}

func TestDLQMessagesAPI(t *testing.T) {
	f := newFakeDLQ()
	s := dlqServer(t, config.AuthNone, f)
	c := newClient(t, s)
	type page struct {
		DLQ      string
		Messages []api.MessageJSON
		Next     string
		Groups   []api.FailureGroupJSON
	}
	t.Run("page with base64 bodies and display forms", func(t *testing.T) {
		rec := c.do("GET", apiDLQ(testDLQ)+"/messages?limit=2", "")
		if rec.Code != 200 {
			t.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
		p := decode[page](t, rec)
		if p.DLQ != testDLQ || len(p.Messages) != 2 || p.Next != "2" || len(p.Groups) != 1 || p.Groups[0].Count != 2 || p.Groups[0].Key != "orders|rejected|" {
			t.Fatalf("page %+v", p)
		}
		m0, m1 := p.Messages[0], p.Messages[1]
		if string(m0.Body) != `{"order":1,"total":19.5}` || m0.BodyView.Kind != queue.BodyJSON || !strings.Contains(m0.BodyView.Text, "\n  \"order\": 1") || m0.ReplayCount != 2 {
			t.Errorf("json message %+v", m0)
		}
		if m0.Failure.Reason != "rejected" || m0.Failure.Source != "orders" || len(m0.Failure.Deaths) != 1 || m0.Failure.Deaths[0].Count != 3 {
			t.Errorf("failure %+v", m0.Failure)
		}
		raw := rec.Body.String()
		if !strings.Contains(raw, `"body":"`+base64.StdEncoding.EncodeToString([]byte(`<script>alert(1)</script>`))+`"`) {
			t.Error("body is not base64 in the JSON")
		}
		if strings.Contains(raw, "<script>") || strings.Contains(raw, "<img") {
			t.Error("JSON carries raw markup (json escapes < and >)")
		}
		if h := m1.Headers[1]; h.Text != "0x0001fe" || !bytes.Equal(h.Value, []byte{0, 1, 0xfe}) {
			t.Errorf("binary header %+v", h)
		}
		if m1.BodyURL != apiDLQ(testDLQ)+"/messages/m-hostile/body" {
			t.Errorf("body url %q", m1.BodyURL)
		}
	})
	t.Run("next page", func(t *testing.T) {
		p := decode[page](t, c.do("GET", apiDLQ(testDLQ)+"/messages?limit=2&after=2", ""))
		if len(p.Messages) != 1 || p.Messages[0].ID != "m-bin" || p.Next != "" || p.Messages[0].BodyView.Kind != queue.BodyBinary {
			t.Errorf("page 2 %+v", p)
		}
	})
	for _, tc := range []struct {
		name, target string
		code         int
		want         string
		setup        func()
	}{
		{name: "not an id", target: "/api/v1/dlqs/orders/messages", code: 404, want: "want broker:cluster:vhost:name"},
		{name: "unknown broker", target: apiDLQ("nats:main:/:x") + "/messages", code: 404},
		{name: "unknown cluster", target: apiDLQ("rabbitmq:eu:/:orders.dlq") + "/messages", code: 404},
		{name: "empty name", target: apiDLQ("rabbitmq:main:/:") + "/messages", code: 404},
		{name: "rabbitmq without vhost", target: apiDLQ("rabbitmq:main::orders.dlq") + "/messages", code: 404, want: "needs a vhost"},
		{name: "limit zero", target: apiDLQ(testDLQ) + "/messages?limit=0", code: 400},
		{name: "limit too big", target: apiDLQ(testDLQ) + "/messages?limit=1001", code: 400},
		{name: "limit not a number", target: apiDLQ(testDLQ) + "/messages?limit=ten", code: 400},
		{name: "job running", target: apiDLQ(testDLQ) + "/messages", code: 409, want: `"job":"job-9"`, setup: func() { f.running = "job-9" }},
		{name: "delivery limit", target: apiDLQ(testDLQ) + "/messages", code: 409, want: "delivery limit", setup: func() { f.limitHit = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.running, f.limitHit = "", false
			if tc.setup != nil {
				tc.setup()
			}
			rec := c.do("GET", tc.target, "")
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
				t.Errorf("%s = %d %s", tc.target, rec.Code, rec.Body.String())
			}
		})
	}
}

func TestDLQBodyDownload(t *testing.T) {
	f := newFakeDLQ()
	c := newClient(t, dlqServer(t, config.AuthNone, f))
	rec := c.do("GET", apiDLQ(testDLQ)+"/messages/m-hostile/body", "")
	if rec.Code != 200 || rec.Body.String() != `<script>alert(1)</script>` {
		t.Fatalf("%d %q", rec.Code, rec.Body.String())
	}
	for h, want := range map[string]string{
		"Content-Type":           "application/octet-stream",
		"Content-Disposition":    `attachment; filename=message-m-hostile.bin`,
		"X-Content-Type-Options": "nosniff",
	} {
		if got := rec.Header().Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	// A page hint that no longer holds the message falls back to the head.
	rec = c.do("GET", apiDLQ(testDLQ)+"/messages/m-bin/body?after=1", "")
	if rec.Code != 200 || rec.Body.Len() != 30000 {
		t.Errorf("binary body %d, %d bytes", rec.Code, rec.Body.Len())
	}
	if rec := c.do("GET", apiDLQ(testDLQ)+"/messages/nope/body", ""); rec.Code != 404 {
		t.Errorf("missing message: %d", rec.Code)
	}
	if got := api.DownloadName(`../../etc/"passwd` + "\r\n"); got != "message-.._.._etc__passwd__.bin" {
		t.Errorf("downloadName = %q", got)
	}
}

func TestDLQReplayAPI(t *testing.T) {
	alice, victor := basic("alice", "wonderland"), basic("victor", "viewer-pw")
	replay := apiDLQ(testDLQ) + "/replay"
	for _, tc := range []struct {
		name    string
		auth    reqOpt // nil: admin bearer token
		target  string
		body    string
		running string
		// crossSite sends the request as a browser does from another site.
		crossSite bool
		code      int
		want      string
		check     func(t *testing.T, f *fakeDLQ)
	}{
		{
			name: "operator replays ids", auth: alice, body: `{"action":"replay","selection":{"ids":["m-1"]},"rate":50}`, code: 202, want: `"job":{"id":"job-1"`,
			check: func(t *testing.T, f *fakeDLQ) {
				r := f.started[0]
				if r.DLQ != testDLQ || r.Who != "alice" || r.Rate != 50 || r.DryRun || len(r.Selection.IDs) != 1 {
					t.Errorf("request %+v", r)
				}
			},
		},
		{name: "dry run answers with the receipt", auth: alice, body: `{"selection":{"group":"orders|rejected|"},"dry_run":true}`, code: 200, want: `"result":"would_move"`},
		{
			name: "move with a target", auth: alice, body: `{"action":"move","selection":{"all":true},"target":{"kind":"queue","name":"other"}}`, code: 202,
			check: func(t *testing.T, f *fakeDLQ) {
				if f.started[0].Target.Name != "other" {
					t.Errorf("target %+v", f.started[0].Target)
				}
			},
		},
		{name: "admin deletes", body: `{"action":"delete","selection":{"ids":["m-1"]}}`, code: 202, check: func(t *testing.T, f *fakeDLQ) {
			if f.started[0].Who != "ci-bot" {
				t.Errorf("who %q", f.started[0].Who)
			}
		}},
		{name: "operator may not delete", auth: alice, body: `{"action":"delete","selection":{"ids":["m-1"]}}`, code: 403, want: "needs role admin"},
		{name: "viewer may not replay", auth: victor, body: `{"selection":{"all":true}}`, code: 403, want: "needs role operator"},
		{name: "cross-site browser request", auth: alice, crossSite: true, body: `{"selection":{"all":true}}`, code: 403, want: "cross-origin request refused"},
		{name: "bad JSON", auth: alice, body: `{"selection":`, code: 400, want: "invalid JSON"},
		{name: "wrong type", auth: alice, body: `{"selection":{"all":"yes"}}`, code: 400, want: "invalid JSON"},
		{name: "unknown field", auth: alice, body: `{"selection":{"all":true},"dryrun":true}`, code: 400, want: "unknown field"},
		{name: "unknown nested field", auth: alice, body: `{"selection":{"everything":true}}`, code: 400, want: "unknown field"},
		{name: "trailing data", auth: alice, body: `{"selection":{"all":true}} {}`, code: 400},
		{name: "empty body", auth: alice, body: ``, code: 400, want: "empty"},
		{name: "oversized body", auth: alice, body: `{"selection":{"ids":["` + strings.Repeat("x", api.MaxRequestBody) + `"]}}`, code: 413},
		{name: "bad DLQ id", auth: alice, target: "/api/v1/dlqs/nope/replay", body: `{"selection":{"all":true}}`, code: 404},
		{name: "unknown cluster", auth: alice, target: apiDLQ("rabbitmq:eu:/:x") + "/replay", body: `{"selection":{"all":true}}`, code: 404},
		{name: "job already running", auth: alice, running: "job-7", body: `{"selection":{"all":true}}`, code: 409, want: `"job":"job-7"`},
		{name: "invalid request", auth: alice, body: `{"action":"explode","selection":{"all":true}}`, code: 400, want: "invalid request"},
		{name: "target missing", auth: alice, body: `{"action":"move","selection":{"all":true},"target":{"name":"missing"}}`, code: 422, want: "target does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeDLQ()
			f.running = tc.running
			s := dlqServer(t, config.AuthBasic, f)
			var c *client
			if tc.auth == nil {
				c = newClient(t, s, bearerTok(apiToken))
			} else {
				c = newClient(t, s, tc.auth)
			}
			if tc.crossSite {
				c.auth = append(c.auth, header("Sec-Fetch-Site", "cross-site"))
			}
			target := replay
			if tc.target != "" {
				target = tc.target
			}
			rec := c.do("POST", target, tc.body)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("POST = %d %s, want %d with %q", rec.Code, rec.Body.String(), tc.code, tc.want)
			}
			if tc.code >= 400 && len(f.started) != 0 {
				t.Errorf("a refused request started a job: %+v", f.started)
			}
			if tc.code == 202 && rec.Header().Get("Location") != "/api/v1/replays/job-1" {
				t.Errorf("Location %q", rec.Header().Get("Location"))
			}
			if tc.check != nil {
				tc.check(t, f)
			}
		})
	}
}

func TestReplayJobAPI(t *testing.T) {
	f := newFakeDLQ()
	s := dlqServer(t, config.AuthBasic, f)
	alice := newClient(t, s, basic("alice", "wonderland"))
	victor := newClient(t, s, basic("victor", "viewer-pw"))
	if rec := alice.do("POST", apiDLQ(testDLQ)+"/replay", `{"selection":{"all":true}}`); rec.Code != 202 {
		t.Fatalf("start: %d", rec.Code)
	}
	for _, tc := range []struct {
		name   string
		c      *client
		method string
		target string
		code   int
		want   string
		reject string
	}{
		{"receipt", victor, "GET", "/api/v1/replays/job-old", 200, `"outcomes":[{"message_id":"\u003cimg`, ""},
		{"interrupted state", victor, "GET", "/api/v1/replays/job-old", 200, `"state":"interrupted"`, ""},
		{"job only", victor, "GET", "/api/v1/replays/job-old?outcomes=false", 200, `"job":{"id":"job-old"`, "outcomes"},
		{"missing job", victor, "GET", "/api/v1/replays/job-nope", 404, "job not found", ""},
		{"viewer may not cancel", victor, "DELETE", "/api/v1/replays/job-1", 403, "needs role operator", ""},
		{"cancel a finished job", alice, "DELETE", "/api/v1/replays/job-old", 409, "not running (interrupted)", ""},
		{"cancel a missing job", alice, "DELETE", "/api/v1/replays/job-nope", 404, "", ""},
		{"cancel", alice, "DELETE", "/api/v1/replays/job-1", 202, `"state":"cancelled"`, ""},
		{"audit newest first", victor, "GET", "/api/v1/audit", 200, `"jobs":[{"id":"job-1"`, ""},
		{"audit of one DLQ", victor, "GET", "/api/v1/audit?dlq=" + url.QueryEscape(hostileDLQ), 200, `{"events":[],"jobs":[],"reads":[]}`, ""},
		{"audit bad limit", victor, "GET", "/api/v1/audit?limit=-1", 400, "limit", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tc.c.do(tc.method, tc.target, "")
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) || (tc.reject != "" && strings.Contains(rec.Body.String(), tc.reject)) {
				t.Errorf("%s %s = %d %s", tc.method, tc.target, rec.Code, rec.Body.String())
			}
		})
	}
	if rec := alice.do("DELETE", "/api/v1/replays/job-1", "", header("Sec-Fetch-Site", "cross-site")); rec.Code != 403 {
		t.Errorf("cross-site DELETE = %d", rec.Code)
	}
}

func TestArchiveAPI(t *testing.T) {
	f := newFakeDLQ()
	s := dlqServer(t, config.AuthBasic, f)
	alice := newClient(t, s, basic("alice", "wonderland"))
	admin := newClient(t, s, bearerTok(apiToken))

	rec := alice.do("GET", "/api/v1/archive?dlq="+url.QueryEscape(hostileDLQ), "")
	out := decode[struct{ Archived []api.ArchivedJSON }](t, rec)
	if rec.Code != 200 || len(out.Archived) != 1 || string(out.Archived[0].Body) != `<script>alert(4)</script>` || out.Archived[0].Headers[0].Text != hostileImg {
		t.Errorf("archive %d %s", rec.Code, rec.Body.String())
	}
	for _, tc := range []struct {
		name string
		c    *client
		body string
		code int
		want string
	}{
		{"operator may not restore", alice, `{"archive_ids":[7],"target":"` + testDLQ + `"}`, 403, "needs role admin"},
		{"bad JSON", admin, `{"archive_ids":[7],`, 400, "invalid JSON"},
		{"unknown field", admin, `{"archive_ids":[7],"target":"` + testDLQ + `","force":true}`, 400, "unknown field"},
		{"no target", admin, `{"archive_ids":[7]}`, 400, "target is required"},
		{"bad target", admin, `{"archive_ids":[7],"target":"orders"}`, 404, "unknown dlq"},
		{"nothing archived", admin, `{"archive_ids":[404],"target":"` + testDLQ + `"}`, 404, "no archived messages"},
		{"oversized", admin, `{"archive_ids":[` + strings.Repeat("1,", api.MaxRequestBody/2) + `1],"target":"x"}`, 413, ""},
		{"restore", admin, `{"archive_ids":[7],"target":"` + testDLQ + `","rate":50}`, 202, `"action":"restore"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tc.c.do("POST", "/api/v1/archive/restore", tc.body)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("restore = %d %s", rec.Code, rec.Body.String())
			}
			if loc := rec.Header().Get("Location"); tc.code == http.StatusAccepted && loc != "/api/v1/replays/job-restore-1" {
				t.Errorf("restore Location %q, want the job to follow", loc)
			}
		})
	}
	if len(f.restores) != 1 || f.restores[0].Who != "ci-bot" || f.restores[0].ArchiveIDs[0] != 7 || f.restores[0].Rate != 50 {
		t.Errorf("restores %+v", f.restores)
	}
}

// markupFree fails when a page carries message content as markup.
func markupFree(t *testing.T, what, body string) {
	t.Helper()
	for _, bad := range []string{"<script>alert", "<img src=x", "onerror=alert(2)>"} {
		if strings.Contains(body, bad) {
			t.Errorf("%s renders %q as markup", what, bad)
		}
	}
}

func TestDLQPage(t *testing.T) {
	f := newFakeDLQ()
	s := dlqServer(t, config.AuthNone, f)
	c := newClient(t, s)
	rec := c.do("GET", "/dlq/"+url.PathEscape(testDLQ), "")
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, body)
	}
	markupFree(t, "DLQ page", body)
	for _, want := range []string{
		"orders.dlq", "← source", "2h", "+30/min", // header: name, source, oldest, inflow
		`data-group="orders|rejected|"`, "Replay group…", // failure groups
		`data-id="m-hostile"`, "&lt;script&gt;alert(1)&lt;/script&gt;", // escaped body in list and inspector
		"&lt;img src=x onerror=alert(2)&gt;", "0x0001fe", // header text, binary header as hex
		"⚠ replayed 2×", "&#34;order&#34;: 1", "application/json", // replay count, pretty JSON, properties
		"rejected</span> in <strong>orders</strong>",                                       // death timeline
		"Showing the first 16 KiB of 29.3 KiB", "download full body", "00000000  ff 00 3c", // truncation, download, hex
		"Replay → orders", "Dry run", "Move…", "Delete…", `value="200"`, "Type <strong", // actions for admin, rate
		`id="confirm"`, "Recent jobs on this DLQ", "interrupted",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("DLQ page lacks %q", want)
		}
	}
	partial := c.do("GET", "/dlq/"+url.PathEscape(testDLQ)+"?partial=1", "").Body.String()
	if !strings.Contains(partial, `id="dhead"`) || strings.Contains(partial, `id="messages"`) {
		t.Error("partial must carry the header and not re-read the messages")
	}
	hostilePage := c.do("GET", "/dlq/"+url.PathEscape(hostileDLQ), "")
	markupFree(t, "hostile DLQ page", hostilePage.Body.String())
	if !strings.Contains(hostilePage.Body.String(), "orders&lt;script&gt;alert(3)&lt;/script&gt;.dlq") {
		t.Error("hostile DLQ name missing (escaped)")
	}
	for missing, says := range map[string]string{"not-an-id": "no such DLQ", "rabbitmq:gone:%2F:orders.dlq": "This DLQ cannot be read: dlq rabbitmq:gone:/:orders.dlq: no cluster"} {
		// A DLQ neither the poll nor the broker knows: the product's page
		// with the sentence and the way back, not a DLQ page with buttons.
		rec := c.do("GET", "/dlq/"+missing, "")
		body := rec.Body.String()
		if rec.Code != 404 || !strings.Contains(body, says) || !strings.Contains(body, `href="/">Back to the overview`) || strings.Contains(body, "Dry run") {
			t.Errorf("page of missing DLQ %s: %d %q", missing, rec.Code, body)
		}
	}
	f.running = "job-9"
	body = c.do("GET", "/dlq/"+url.PathEscape(testDLQ), "").Body.String()
	if !strings.Contains(body, `data-job="job-9"`) || !strings.Contains(body, "A job is running on this DLQ") {
		t.Error("a running job's page does not follow the job")
	}
	overview := c.do("GET", "/?tab=dlqs", "").Body.String()
	if !strings.Contains(overview, `href="/dlq/rabbitmq:main:%2F:orders.dlq"`) {
		t.Error("overview does not link DLQs to their page")
	}
}

func TestDLQPageRoles(t *testing.T) {
	s := dlqServer(t, config.AuthBasic, newFakeDLQ())
	page := "/dlq/" + url.PathEscape(testDLQ)
	for _, tc := range []struct {
		name          string
		auth          reqOpt
		want, without []string
	}{
		{
			"viewer sees no actions", basic("victor", "viewer-pw"),
			[]string{"m-hostile"},
			[]string{`data-action=`, `class="pick"`, `id="confirm"`, `id="job-cancel"`, "Delete…"},
		},
		{
			"operator may replay, not delete", basic("alice", "wonderland"),
			[]string{`data-action="replay"`, `data-action="move"`, `class="pick"`},
			[]string{`data-action="delete"`, "Delete…"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := send(s, "GET", page, tc.auth).Body.String()
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, w := range tc.without {
				if strings.Contains(body, w) {
					t.Errorf("page shows %q", w)
				}
			}
		})
	}
}

func TestReplaysPage(t *testing.T) {
	f := newFakeDLQ()
	f.running = "job-run"
	f.add(dlqreplay.Receipt{Job: dlqreplay.Job{
		ID: "job-run", DLQ: hostileDLQ, Action: dlqreplay.ActionMove, Who: hostileImg,
		State: dlqreplay.StateRunning, Created: time.Now(), Target: dlqreplay.Target{Kind: dlqreplay.TargetNamed, Name: hostileImg},
		Progress: dlqreplay.Progress{ToMove: 100, Moved: 40, Remaining: 60},
	}})
	s := dlqServer(t, config.AuthBasic, f)
	admin := bearerTok(apiToken)
	body := send(s, "GET", "/replays?job=job-old", admin).Body.String()
	markupFree(t, "replays page", body)
	for _, want := range []string{
		"Running <span class=\"count\">1", `data-cancel="job-run"`, `max="100" value="40"`, // running job with progress and cancel
		"Replayed 4 of 10 messages from orders.dlq → orders (original)", "orders (default exchange)", "interrupted", // receipt and its state
		"Audit log", "&lt;img src=x onerror=alert(2)&gt;", // who is escaped
		"Archived messages", "m-gone", `class="apick"`, "Restore…", // archive with restore for admin
		"&lt;script&gt;alert(4)&lt;/script&gt;",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("replays page lacks %q", want)
		}
	}
	viewer := send(s, "GET", "/replays", basic("victor", "viewer-pw")).Body.String()
	for _, no := range []string{`data-cancel=`, `class="apick"`, "Restore…"} {
		if strings.Contains(viewer, no) {
			t.Errorf("viewer sees %q", no)
		}
	}
	filtered := send(s, "GET", "/replays?q=job-old&partial=1", admin).Body.String()
	if !strings.Contains(filtered, `data-job="job-old"`) || strings.Contains(filtered, `<tr data-job="job-run"`) {
		t.Error("filter does not narrow the audit log")
	}
	rec := send(dlqServer(t, config.AuthNone, nil), "GET", "/replays")
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "DLQ tools not configured") {
		t.Errorf("replays without service: %d", rec.Code)
	}
}
