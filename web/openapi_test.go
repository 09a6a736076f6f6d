package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/web/api"
)

// loadOpenAPI loads the embedded document and checks it is a valid
// OpenAPI document before anything is validated against it.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPIDoc)
	if err != nil {
		t.Fatalf("load openapi.json: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}
	return doc
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc := loadOpenAPI(t)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi version %q", doc.OpenAPI)
	}
	// Every /api/v1 route the server has is in the document, and the
	// document has no path the server does not route.
	s := testServer(true)
	var routed []string
	for _, r := range s.e.Routes() {
		if p, ok := strings.CutPrefix(r.Path, "/api/v1"); ok {
			routed = append(routed, r.Method+" "+echoToOpenAPI(p))
		}
	}
	var documented []string
	for p, item := range doc.Paths.Map() {
		for m := range item.Operations() {
			documented = append(documented, m+" "+p)
		}
	}
	slices.Sort(routed)
	slices.Sort(documented)
	if !slices.Equal(routed, documented) {
		t.Errorf("routes and document differ:\nrouted     %v\ndocumented %v", routed, documented)
	}
}

// echoToOpenAPI turns echo's /dlqs/:id into OpenAPI's /dlqs/{id}.
func echoToOpenAPI(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if name, ok := strings.CutPrefix(s, ":"); ok {
			segs[i] = "{" + name + "}"
		}
	}
	return strings.Join(segs, "/")
}

// apiChecker sends requests through a real server and validates each
// request and response against the document; it records which
// operations answered with which statuses.
type apiChecker struct {
	t    *testing.T
	doc  *openapi3.T
	seen map[string][]int
}

func (a *apiChecker) check(s *Server, method, tmpl, target, body string, opts ...reqOpt) *httptest.ResponseRecorder {
	a.t.Helper()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for _, o := range opts {
		o(r)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)

	item := a.doc.Paths.Value(tmpl)
	if item == nil || item.GetOperation(method) == nil {
		a.t.Fatalf("%s %s is not in the document", method, tmpl)
	}
	params, err := matchPath("/api/v1"+tmpl, r.URL.EscapedPath())
	if err != nil {
		a.t.Fatalf("%s: %v", target, err)
	}
	route := &routers.Route{Spec: a.doc, Path: tmpl, PathItem: item, Method: method, Operation: item.GetOperation(method)}
	// The request is checked too (with a fresh body), so the tests cannot
	// pass by sending what the document does not allow.
	vr := httptest.NewRequest(method, target, strings.NewReader(body))
	vr.Header = r.Header.Clone()
	in := &openapi3filter.RequestValidationInput{
		Request: vr, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	if rec.Code < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			a.t.Errorf("%s %s: request outside the document: %v", method, target, err)
		}
	}
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
		Body: io.NopCloser(bytes.NewReader(rec.Body.Bytes())), Options: &openapi3filter.Options{MultiError: true},
	})
	if err != nil {
		a.t.Errorf("%s %s → %d %s\nresponse outside the document: %v", method, target, rec.Code, clip(rec.Body.String()), err)
	}
	key := method + " " + tmpl
	a.seen[key] = append(a.seen[key], rec.Code)
	return rec
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// matchPath matches an escaped request path against a template and
// returns the decoded parameters.
func matchPath(tmpl, escaped string) (map[string]string, error) {
	ts, ps := strings.Split(tmpl, "/"), strings.Split(escaped, "/")
	if len(ts) != len(ps) {
		return nil, fmt.Errorf("path %s does not match %s", escaped, tmpl)
	}
	params := map[string]string{}
	for i, seg := range ts {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			v, err := url.PathUnescape(ps[i])
			if err != nil {
				return nil, err
			}
			params[strings.TrimSuffix(name, "}")] = v
		} else if seg != ps[i] {
			return nil, fmt.Errorf("path %s does not match %s", escaped, tmpl)
		}
	}
	return params, nil
}

// failingDLQ is the fake DLQ service with a broker that fails or times out.
type failingDLQ struct {
	*fakeDLQ
	err error
}

func (f failingDLQ) Browse(context.Context, string, dlqreplay.BrowseOptions) (dlqreplay.Page, error) {
	return dlqreplay.Page{}, f.err
}

func (f failingDLQ) Jobs(context.Context, dlqreplay.JobQuery) ([]dlqreplay.Job, error) {
	return nil, f.err
}

func (f failingDLQ) Archived(context.Context, dlqreplay.ArchiveQuery) ([]dlqreplay.Archived, error) {
	return nil, f.err
}

// TestAPIMatchesOpenAPI drives every endpoint through the real server,
// happy and error paths, and validates every answer against the
// document, so the document cannot drift from the handlers.
func TestAPIMatchesOpenAPI(t *testing.T) {
	a := &apiChecker{t: t, doc: loadOpenAPI(t), seen: map[string][]int{}}
	alice, victor, token := basic("alice", "wonderland"), basic("victor", "viewer-pw"), bearerTok(apiToken)
	crossSite := header("Sec-Fetch-Site", "cross-site")
	stuck := "/api/v1/groups/prod/" + url.PathEscape("stuck/group %2F")

	// Monitoring, with auth none, then basic.
	open, groups := testServer(true), authServer(t, config.AuthBasic)
	a.check(open, "GET", "/openapi.json", "/api/v1/openapi.json", "")
	a.check(groups, "GET", "/openapi.json", "/api/v1/openapi.json", "")
	a.check(open, "GET", "/sources", "/api/v1/sources", "")
	a.check(New(Options{Monitor: staticMonitor{}}), "GET", "/sources", "/api/v1/sources", "")
	a.check(groups, "GET", "/sources", "/api/v1/sources", "", token)
	a.check(groups, "GET", "/sources", "/api/v1/sources", "")
	a.check(open, "GET", "/groups", "/api/v1/groups", "")
	a.check(groups, "GET", "/groups", "/api/v1/groups", "", victor)
	a.check(groups, "GET", "/groups", "/api/v1/groups", "", basic("victor", "wrong"))
	for _, tmpl := range []string{"/groups/{cluster}/{group}", "/groups/{cluster}/{group}/history"} {
		suffix := strings.TrimPrefix(tmpl, "/groups/{cluster}/{group}")
		a.check(open, "GET", tmpl, stuck+suffix, "")
		a.check(open, "GET", tmpl, "/api/v1/groups/prod/ok-group"+suffix, "")
		a.check(open, "GET", tmpl, "/api/v1/groups/prod/nope"+suffix, "")
		a.check(open, "GET", tmpl, "/api/v1/groups/prod/%25zz%2F"+suffix, "")
		a.check(groups, "GET", tmpl, stuck+suffix, "")
		a.check(groups, "GET", tmpl, stuck+suffix, "", alice)
	}
	a.check(open, "GET", "/dlqs", "/api/v1/dlqs", "")
	a.check(natsServer(), "GET", "/nats/consumers", "/api/v1/nats/consumers", "")
	nh, natsHist := "/nats/consumers/{cluster}/{stream}/{consumer}/history", natsHistoryServer(time.Now())
	a.check(natsHist, "GET", nh, "/api/v1/nats/consumers/local/ORDERS/mailer/history", "")
	a.check(natsHist, "GET", nh, "/api/v1/nats/consumers/local/ORDERS/healthy/history", "")
	a.check(natsHist, "GET", nh, "/api/v1/nats/consumers/local/ORDERS/"+url.PathEscape("invoicing/stalled "+hostile)+"/history", "")
	a.check(natsHist, "GET", nh, "/api/v1/nats/consumers/local/ORDERS/nope/history", "")
	a.check(natsServer(), "GET", "/sources", "/api/v1/sources", "")
	a.check(natsServer(), "GET", "/dlqs", "/api/v1/dlqs", "")
	a.check(groups, "GET", "/nats/consumers", "/api/v1/nats/consumers", "")
	sqsS := sqsServer()
	a.check(sqsS, "GET", "/sqs/queues", "/api/v1/sqs/queues", "")
	a.check(open, "GET", "/sqs/queues", "/api/v1/sqs/queues", "")
	a.check(groups, "GET", "/sqs/queues", "/api/v1/sqs/queues", "")
	// An SQS account and its DLQs answer in the documented shape too.
	a.check(sqsS, "GET", "/sources", "/api/v1/sources", "")
	a.check(sqsS, "GET", "/dlqs", "/api/v1/dlqs", "")
	sh := "/sqs/queues/{cluster}/{queue}/history"
	a.check(sqsS, "GET", sh, "/api/v1/sqs/queues/prod-eu/orders/history", "")
	a.check(sqsS, "GET", sh, "/api/v1/sqs/queues/prod-eu/"+url.PathEscape(sqsMailer)+"/history", "")
	a.check(sqsS, "GET", sh, "/api/v1/sqs/queues/prod-eu/nope/history", "")
	a.check(groups, "GET", sh, "/api/v1/sqs/queues/prod-eu/orders/history", "")
	a.check(groups, "GET", "/dlqs", "/api/v1/dlqs", "")
	ps := pubsubServer()
	a.check(ps, "GET", "/pubsub/subscriptions", "/api/v1/pubsub/subscriptions", "")
	a.check(groups, "GET", "/pubsub/subscriptions", "/api/v1/pubsub/subscriptions", "")
	a.check(ps, "GET", "/dlqs", "/api/v1/dlqs", "")
	ph := "/pubsub/subscriptions/{cluster}/{subscription}/history"
	a.check(ps, "GET", ph, "/api/v1/pubsub/subscriptions/gcp/orders/history", "")
	a.check(ps, "GET", ph, "/api/v1/pubsub/subscriptions/gcp/nope/history", "")
	a.check(groups, "GET", ph, "/api/v1/pubsub/subscriptions/gcp/orders/history", "")
	rs := rabbitServer()
	a.check(rs, "GET", "/rabbitmq/queues", "/api/v1/rabbitmq/queues", "")
	a.check(groups, "GET", "/rabbitmq/queues", "/api/v1/rabbitmq/queues", "")
	odd := "/api/v1/rabbitmq/queues/main/" + url.PathEscape(rabbitOddVHost) + "/" + url.PathEscape(rabbitOddQueue)
	for _, tmpl := range []string{"/rabbitmq/queues/{cluster}/{vhost}/{queue}", "/rabbitmq/queues/{cluster}/{vhost}/{queue}/history"} {
		suffix := strings.TrimPrefix(tmpl, "/rabbitmq/queues/{cluster}/{vhost}/{queue}")
		a.check(rs, "GET", tmpl, "/api/v1/rabbitmq/queues/main/%2F/orders"+suffix, "")
		a.check(rs, "GET", tmpl, "/api/v1/rabbitmq/queues/main/%2F/orders.dlq"+suffix, "")
		a.check(rs, "GET", tmpl, odd+suffix, "")
		a.check(rs, "GET", tmpl, "/api/v1/rabbitmq/queues/main/%2F/nope"+suffix, "")
		a.check(groups, "GET", tmpl, "/api/v1/rabbitmq/queues/main/%2F/orders"+suffix, "")
	}
	a.check(kinesisServer(), "GET", "/kinesis/applications", "/api/v1/kinesis/applications", "")
	a.check(open, "GET", "/kinesis/applications", "/api/v1/kinesis/applications", "")
	a.check(groups, "GET", "/kinesis/applications", "/api/v1/kinesis/applications", "")
	kh := "/kinesis/applications/{cluster}/{application}/history"
	a.check(kinesisServer(), "GET", kh, "/api/v1/kinesis/applications/prod-eu/billing/history", "")
	a.check(kinesisServer(), "GET", kh, "/api/v1/kinesis/applications/prod-eu/nope/history", "")
	a.check(groups, "GET", kh, "/api/v1/kinesis/applications/prod-eu/billing/history", "")
	a.check(connectServer(), "GET", "/kafka/connectors", "/api/v1/kafka/connectors", "")
	a.check(open, "GET", "/kafka/connectors", "/api/v1/kafka/connectors", "")
	a.check(groups, "GET", "/kafka/connectors", "/api/v1/kafka/connectors", "")
	ch := "/kafka/connectors/{cluster}/{connect}/{connector}/history"
	a.check(connectServer(), "GET", ch, "/api/v1/kafka/connectors/prod/main/payments-sink/history", "")
	a.check(connectServer(), "GET", ch, "/api/v1/kafka/connectors/prod/main/"+url.PathEscape(connectHostile)+"/history", "")
	a.check(connectServer(), "GET", ch, "/api/v1/kafka/connectors/prod/main/nope/history", "")
	a.check(groups, "GET", ch, "/api/v1/kafka/connectors/prod/main/payments-sink/history", "")
	a.check(shareServer(), "GET", "/kafka/share-groups", "/api/v1/kafka/share-groups", "")
	a.check(open, "GET", "/kafka/share-groups", "/api/v1/kafka/share-groups", "")
	a.check(groups, "GET", "/kafka/share-groups", "/api/v1/kafka/share-groups", "")
	shh := "/kafka/share-groups/{cluster}/{group}/history"
	a.check(shareServer(), "GET", shh, "/api/v1/kafka/share-groups/prod/workers/history", "")
	a.check(shareServer(), "GET", shh, "/api/v1/kafka/share-groups/prod/"+url.PathEscape(shareHostile)+"/history", "")
	a.check(shareServer(), "GET", shh, "/api/v1/kafka/share-groups/prod/nope/history", "")
	a.check(groups, "GET", shh, "/api/v1/kafka/share-groups/prod/workers/history", "")
	a.check(streamsServer(), "GET", "/kafka/streams-groups", "/api/v1/kafka/streams-groups", "")
	a.check(groups, "GET", "/kafka/streams-groups", "/api/v1/kafka/streams-groups", "")
	sth := "/kafka/streams-groups/{cluster}/{group}/history"
	a.check(streamsServer(), "GET", sth, "/api/v1/kafka/streams-groups/prod/wordcount/history", "")
	a.check(streamsServer(), "GET", sth, "/api/v1/kafka/streams-groups/prod/nope/history", "")

	// Outbox sources, polled by the real collector.
	outbox, _ := outboxServer(t)
	outboxBasic := New(Options{Monitor: outbox.opts.Monitor, Auth: authConfig(t, config.AuthBasic)})
	a.check(outbox, "GET", "/outbox", "/api/v1/outbox", "")
	a.check(outbox, "GET", "/sources", "/api/v1/sources", "")
	a.check(open, "GET", "/outbox", "/api/v1/outbox", "")
	a.check(outboxBasic, "GET", "/outbox", "/api/v1/outbox", "")
	a.check(outboxBasic, "GET", "/outbox", "/api/v1/outbox", "", victor)
	oh := "/outbox/{source}/history"
	a.check(outbox, "GET", oh, "/api/v1/outbox/orders-db/history", "")
	a.check(outbox, "GET", oh, "/api/v1/outbox/billing-db/history", "")
	a.check(outbox, "GET", oh, "/api/v1/outbox/"+url.PathEscape(hostileSource)+"/history", "")
	a.check(outbox, "GET", oh, "/api/v1/outbox/nope/history", "")
	a.check(outbox, "GET", oh, "/api/v1/outbox/prod/history", "")
	a.check(outboxBasic, "GET", oh, "/api/v1/outbox/orders-db/history", "")

	// Dead letters, with the fake service.
	f := newFakeDLQ()
	s, basicS := dlqServer(t, config.AuthNone, f), dlqServer(t, config.AuthBasic, f)
	none := dlqServer(t, config.AuthNone, nil)
	down := dlqServer(t, config.AuthNone, failingDLQ{newFakeDLQ(), errors.New("broker connection refused")})
	slow := dlqServer(t, config.AuthNone, failingDLQ{newFakeDLQ(), fmt.Errorf("browse: %w", context.DeadlineExceeded)})
	msgs := apiDLQ(testDLQ) + "/messages"
	unknown := apiDLQ(strings.Replace(testDLQ, ":main:", ":elsewhere:", 1))

	a.check(s, "GET", "/dlqs/{id}/messages", msgs, "")
	a.check(s, "GET", "/dlqs/{id}/messages", msgs+"?limit=1", "")
	a.check(s, "GET", "/dlqs/{id}/messages", msgs+"?limit=1&after=1", "")
	a.check(s, "GET", "/dlqs/{id}/messages", apiDLQ(hostileDLQ)+"/messages", "")
	a.check(s, "GET", "/dlqs/{id}/messages", msgs+"?limit=0", "")
	a.check(s, "GET", "/dlqs/{id}/messages", unknown+"/messages", "")
	a.check(s, "GET", "/dlqs/{id}/messages", "/api/v1/dlqs/not-an-id/messages", "")
	a.check(basicS, "GET", "/dlqs/{id}/messages", msgs, "")
	a.check(none, "GET", "/dlqs/{id}/messages", msgs, "")
	a.check(down, "GET", "/dlqs/{id}/messages", msgs, "")
	a.check(slow, "GET", "/dlqs/{id}/messages", msgs, "")

	body := "/dlqs/{id}/messages/{msg}/body"
	a.check(s, "GET", body, msgs+"/m-1/body", "")
	a.check(s, "GET", body, msgs+"/m-bin/body?after=2", "")
	a.check(s, "GET", body, msgs+"/absent/body", "")
	a.check(s, "GET", body, "/api/v1/dlqs/not-an-id/messages/m-1/body", "")
	a.check(basicS, "GET", body, msgs+"/m-1/body", "")
	a.check(none, "GET", body, msgs+"/m-1/body", "")
	a.check(down, "GET", body, msgs+"/m-1/body", "")
	a.check(s, "GET", "/dlqs/{id}/messages", msgs+"?group_by=%24.order", "")
	a.check(s, "GET", "/dlqs/{id}/messages", msgs+"?group_by=order", "")
	a.check(s, "GET", "/dlqs/{id}/messages", msgs+"?where="+url.QueryEscape(`value.order == 1`), "")
	a.check(s, "GET", "/dlqs/{id}/messages", msgs+"?where="+url.QueryEscape(`value.order ==`), "")
	for _, q := range []string{"q=m-1", "q=m-1&per_dlq=1&limit=1&budget=1s", "mode=path&q=" + url.QueryEscape(`$.order == 1`), "mode=cel&q=true", "mode=cel&q=oops%3D", "q=", "q=x&mode=nope"} {
		a.check(s, "GET", "/search", "/api/v1/search?"+q, "")
	}
	a.check(basicS, "GET", "/search", "/api/v1/search?q=m-1", "")
	a.check(none, "GET", "/search", "/api/v1/search?q=m-1", "")
	a.check(down, "GET", "/search", "/api/v1/search?q=m-1", "")
	withF := withFilters(t, s)
	fl, oneF := "/dlqs/{id}/filters", "/dlqs/{id}/filters/{name}"
	a.check(withF, "PUT", oneF, apiDLQ(testDLQ)+"/filters/big", `{"where":"value.total > 10.0"}`)
	a.check(withF, "PUT", oneF, apiDLQ(testDLQ)+"/filters/big", `{"where":"value.total >"}`)
	a.check(withF, "PUT", oneF, apiDLQ(testDLQ)+"/filters/big", `{"where":"true","extra":1}`)
	a.check(withF, "GET", fl, apiDLQ(testDLQ)+"/filters", "")
	a.check(withF, "DELETE", oneF, apiDLQ(testDLQ)+"/filters/big", "")
	a.check(withF, "DELETE", oneF, apiDLQ(testDLQ)+"/filters/big", "")
	a.check(s, "GET", fl, apiDLQ(testDLQ)+"/filters", "")
	a.check(withFilters(t, basicS), "PUT", oneF, apiDLQ(testDLQ)+"/filters/big", `{"where":"true"}`)
	one := "/dlqs/{id}/messages/{msg}"
	a.check(s, "GET", one, msgs+"/m-1", "")
	a.check(s, "GET", one, msgs+"/m-1?unmask=maybe", "")
	a.check(s, "GET", one, msgs+"/absent?unmask=true", "")
	a.check(basicS, "GET", one, msgs+"/m-1", "")
	a.check(down, "GET", one, msgs+"/m-1", "")

	preview, pv := "/dlqs/{id}/preview", apiDLQ(testDLQ)+"/preview"
	a.check(s, "POST", preview, pv, `{"selection":{"all":true}}`)
	a.check(s, "POST", preview, pv, `{"selection":{"where":"value.order == 1"}}`)
	a.check(s, "POST", preview, pv, `{"selection":{"where":"value.order =="}}`)
	a.check(s, "POST", preview, pv, `{"action":"move","selection":{"ids":["m-1"]},"target":{"name":"elsewhere"}}`)
	a.check(s, "POST", preview, pv, `{"selection":{"ids":["m-1"]},"target":{"kind":"queue","name":"missing"}}`)
	a.check(s, "POST", preview, pv, `{"selection":{"all":true},"dry_run":true}`)
	a.check(s, "POST", preview, pv, `{"selection":{}}`)
	a.check(s, "POST", preview, unknown+"/preview", `{"selection":{"all":true}}`)
	a.check(basicS, "POST", preview, pv, `{"selection":{"all":true}}`, victor)
	a.check(basicS, "POST", preview, pv, `{"action":"delete","selection":{"all":true}}`, alice)
	a.check(none, "POST", preview, pv, `{"selection":{"all":true}}`)
	if n := len(f.started); n != 0 {
		t.Errorf("previews started %d jobs, want none", n)
	}

	replay := "/dlqs/{id}/replay"
	rp := apiDLQ(testDLQ) + "/replay"
	a.check(s, "POST", replay, rp, `{"selection":{"all":true},"dry_run":true}`)
	a.check(s, "POST", replay, rp, `{"selection":{"ids":["m-1"]},"target":{"kind":"queue","name":"missing"}}`)
	a.check(s, "POST", replay, rp, `{"selection":{"all":true},"dryrun":true}`)
	a.check(s, "POST", replay, rp, ``)
	a.check(s, "POST", replay, rp, `{"selection":{"all":true}}`+strings.Repeat(" ", api.MaxRequestBody))
	a.check(s, "POST", replay, unknown+"/replay", `{"selection":{"all":true}}`)
	a.check(s, "POST", replay, rp, `{"selection":{"all":true}}`, crossSite)
	a.check(basicS, "POST", replay, rp, `{"selection":{"all":true}}`, victor)
	a.check(basicS, "POST", replay, rp, `{"action":"delete","selection":{"all":true}}`, alice)
	a.check(basicS, "POST", replay, rp, `{"selection":{"all":true}}`)
	a.check(none, "POST", replay, rp, `{"selection":{"all":true}}`)
	rec := a.check(s, "POST", replay, rp, `{"selection":{"all":true},"rate":-1}`)
	job := decode[map[string]dlqreplay.Job](t, rec)["job"].ID
	a.check(s, "POST", replay, rp, `{"selection":{"all":true}}`) // 409: the job above holds the DLQ
	a.check(s, "GET", "/dlqs/{id}/messages", msgs, "")           // 409 too

	jobPath := "/api/v1/replays/" + url.PathEscape(job)
	a.check(s, "GET", "/replays/{job}", jobPath, "")
	a.check(s, "GET", "/replays/{job}", jobPath+"?outcomes=false", "")
	a.check(s, "GET", "/replays/{job}", "/api/v1/replays/job-nope", "")
	a.check(s, "GET", "/replays/{job}", "/api/v1/replays/job-nope?outcomes=false", "")
	a.check(basicS, "GET", "/replays/{job}", jobPath, "")
	a.check(none, "GET", "/replays/{job}", jobPath, "")
	a.check(basicS, "DELETE", "/replays/{job}", jobPath, "", victor)
	a.check(s, "DELETE", "/replays/{job}", jobPath, "", crossSite)
	a.check(s, "DELETE", "/replays/{job}", jobPath, "")
	a.check(s, "DELETE", "/replays/{job}", jobPath, "") // 409: no longer running
	a.check(s, "DELETE", "/replays/{job}", "/api/v1/replays/job-nope", "")
	a.check(basicS, "DELETE", "/replays/{job}", jobPath, "")
	a.check(none, "DELETE", "/replays/{job}", jobPath, "")

	for _, p := range []string{"/audit", "/archive"} {
		a.check(s, "GET", p, "/api/v1"+p, "")
		a.check(s, "GET", p, "/api/v1"+p+"?limit=2&dlq="+url.QueryEscape(testDLQ), "")
		a.check(s, "GET", p, "/api/v1"+p+"?limit=x", "")
		a.check(basicS, "GET", p, "/api/v1"+p, "")
		a.check(basicS, "GET", p, "/api/v1"+p, "", victor)
		a.check(none, "GET", p, "/api/v1"+p, "")
		a.check(down, "GET", p, "/api/v1"+p, "")
	}

	restore := "/archive/restore"
	a.check(s, "POST", restore, "/api/v1/archive/restore", `{"archive_ids":[7],"target":"`+testDLQ+`"}`)
	// 7.0 and 7e0 are integers to JSON Schema, so to the API too.
	if rec := a.check(s, "POST", restore, "/api/v1/archive/restore", `{"archive_ids":[7.0, 7e0],"target":"`+testDLQ+`"}`); rec.Code != http.StatusAccepted {
		t.Errorf("integral numbers refused: %d", rec.Code)
	}
	a.check(s, "POST", restore, "/api/v1/archive/restore", `{"archive_ids":[7],"target":"`+testDLQ+`","rate":-1}`)
	a.check(s, "POST", restore, "/api/v1/archive/restore", `{"archive_ids":[7],"target":"`+testDLQ+`","rate":"fast"}`)
	a.check(s, "POST", restore, "/api/v1/archive/restore", `{"archive_ids":[404],"target":"`+testDLQ+`"}`)
	a.check(s, "POST", restore, "/api/v1/archive/restore", `{"archive_ids":[7]}`)
	a.check(s, "POST", restore, "/api/v1/archive/restore", `{"archive_ids":[7],"target":"x"}`)
	a.check(s, "POST", restore, "/api/v1/archive/restore", `{"archive_ids":[7],"target":"\u0085"}`)
	a.check(basicS, "POST", restore, "/api/v1/archive/restore", `{"job_id":"job-del","target":"`+testDLQ+`"}`, alice)
	a.check(basicS, "POST", restore, "/api/v1/archive/restore", `{"job_id":"job-del","target":"`+testDLQ+`"}`, token)
	a.check(basicS, "POST", restore, "/api/v1/archive/restore", `{"job_id":"job-del","target":"`+testDLQ+`"}`)
	a.check(none, "POST", restore, "/api/v1/archive/restore", `{"job_id":"job-del","target":"`+testDLQ+`"}`)

	// Offset resets, on a real (kfake) cluster.
	re := newResetEnv(t)
	op, oa, ol := "/groups/{cluster}/{group}/offsets/plan", "/groups/{cluster}/{group}/offsets/apply", "/groups/{cluster}/{group}/offsets/resets"
	billing := "/api/v1/groups/prod/billing/offsets"
	a.check(re.s, "POST", op, billing+"/plan", `{"to":"earliest","topics":["orders:0"]}`, alice)
	a.check(re.s, "POST", op, billing+"/plan", `{"to":"shift:-1"}`, alice)
	a.check(re.s, "POST", op, billing+"/plan", `{"to":"soon"}`, alice)
	a.check(re.s, "POST", op, billing+"/plan", `{"to":"earliest"}`, victor)
	a.check(re.s, "POST", op, "/api/v1/groups/elsewhere/billing/offsets/plan", `{"to":"earliest"}`, alice)
	a.check(re.s, "POST", op, billing+"/plan", `{"to":"earliest"}`)
	a.check(open, "POST", op, "/api/v1/groups/prod/ok-group/offsets/plan", `{"to":"earliest"}`)
	plan := re.plan("billing", `{"to":"latest"}`)
	a.check(re.s, "POST", oa, billing+"/apply", `{"plan_id":"nope"}`, alice)
	a.check(re.s, "POST", oa, billing+"/apply", `{"plan_id":"`+plan.ID+`"}`, alice, crossSite)
	a.check(re.s, "POST", oa, billing+"/apply", `{"plan_id":"`+plan.ID+`"}`, alice)
	a.check(re.s, "POST", oa, billing+"/apply", `{"plan_id":"`+plan.ID+`","to":"x"}`, alice)
	stale := re.plan("billing", `{"to":"earliest"}`)
	re.commit("billing", 9, 9)
	a.check(re.s, "POST", oa, billing+"/apply", `{"plan_id":"`+stale.ID+`"}`, alice)
	a.check(re.s, "GET", ol, billing+"/resets", "", victor)
	a.check(re.s, "GET", ol, billing+"/resets?limit=0", "", victor)
	a.check(re.s, "GET", ol, billing+"/resets", "")
	a.check(open, "GET", ol, "/api/v1/groups/prod/ok-group/offsets/resets", "")
	checkShareResetsAPI(t, a)

	// JetStream consumer resets and pauses, on a real nats-server.
	checkConsumerActionsAPI(t, a, alice, victor)

	// A Kafka Connect connector's restart.
	rs, fc := restartServer(t)
	restart := "/api/v1/kafka/connectors/prod/main/" + url.PathEscape(connectHostile) + "/restart"
	a.check(rs, "POST", "/kafka/connectors/{cluster}/{connect}/{connector}/restart", restart, "", alice)
	a.check(rs, "POST", "/kafka/connectors/{cluster}/{connect}/{connector}/restart", restart, "", victor)
	a.check(rs, "POST", "/kafka/connectors/{cluster}/{connect}/{connector}/restart", "/api/v1/kafka/connectors/prod/main/nobody/restart", "", alice)
	fc.answerWith(http.StatusConflict)
	a.check(rs, "POST", "/kafka/connectors/{cluster}/{connect}/{connector}/restart", restart, "", alice)

	// Every operation answered at least once with success and once with
	// an error.
	for p, item := range a.doc.Paths.Map() {
		for m := range item.Operations() {
			codes := a.seen[m+" "+p]
			if !slices.ContainsFunc(codes, func(c int) bool { return c < 300 }) || !slices.ContainsFunc(codes, func(c int) bool { return c >= 400 }) {
				t.Errorf("%s %s: want a success and an error among %v", m, p, codes)
			}
		}
	}
}

// TestAPIErrorShape checks that every error the API answers is one shape,
// {"error": …, "detail": …}, whoever produced it: a handler, the auth or
// cross-origin middleware, or echo's router.
func TestAPIErrorShape(t *testing.T) {
	f := newFakeDLQ()
	s, basicS := dlqServer(t, config.AuthNone, f), dlqServer(t, config.AuthBasic, f)
	rp := apiDLQ(testDLQ) + "/replay"
	for _, tc := range []struct {
		name       string
		s          *Server
		method     string
		target     string
		body       string
		opts       []reqOpt
		status     int
		error      string
		wantDetail bool
	}{
		{"400 bad JSON", s, "POST", rp, `{"selection":{"all":true},"dryrun":true}`, nil, 400, `invalid JSON: json: unknown field "dryrun"`, false},
		{"400 bad query", s, "GET", "/api/v1/audit?limit=0", "", nil, 400, "limit must be a whole number from 1 to 1000", false},
		{"400 empty limit", s, "GET", "/api/v1/archive?limit=", "", nil, 400, "limit must be a whole number from 1 to 1000", false},
		{"400 null", s, "POST", rp, `{"selection":{"all":true},"target":{"kind":null}}`, nil, 400, "invalid JSON: null is not allowed (target.kind)", false},
		{"400 null in a list", s, "POST", "/api/v1/archive/restore", `{"archive_ids":[null],"target":"x"}`, nil, 400, "invalid JSON: null is not allowed (archive_ids[0])", false},
		{"400 bad target on delete", s, "POST", rp, `{"action":"delete","selection":{"all":true},"target":{"kind":"nowhere"}}`, nil, 400, `target kind "nowhere": want original, exchange or queue`, false},
		{"400 empty target kind", s, "POST", rp, `{"action":"delete","selection":{"all":true},"target":{"kind":""}}`, nil, 400, `target kind "": want original, exchange or queue`, false},
		{"400 outcomes", s, "GET", "/api/v1/replays/job-old?outcomes=-0.5", "", nil, 400, "outcomes must be true or false", false},
		{"401", basicS, "GET", "/api/v1/groups", "", nil, 401, "authentication required", false},
		{"403 role", basicS, "POST", rp, `{"selection":{"all":true}}`, []reqOpt{basic("victor", "viewer-pw")}, 403, "forbidden: needs role operator, victor is viewer", false},
		{"403 cross-origin", s, "POST", rp, `{"selection":{"all":true}}`, []reqOpt{header("Sec-Fetch-Site", "cross-site")}, 403, "cross-origin request refused: cross-origin request detected from Sec-Fetch-Site header", false},
		{"404 group", s, "GET", "/api/v1/groups/main/none", "", nil, 404, "no such consumer group", false},
		{"404 route", s, "GET", "/api/v1/nothing", "", nil, 404, "Not Found", true},
		{"405", s, "PUT", "/api/v1/groups", "", nil, 405, "Method Not Allowed", true},
		{"422", s, "POST", rp, `{"selection":{"all":true},"target":{"kind":"queue","name":"missing"}}`, nil, 422, "queue missing: target does not exist", false},
		{"503", dlqServer(t, config.AuthNone, nil), "GET", "/api/v1/audit", "", nil, 503, "DLQ tools not configured", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := send(tc.s, tc.method, tc.target, append(tc.opts, func(r *http.Request) {
				r.Body = io.NopCloser(strings.NewReader(tc.body))
			})...)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body.String())
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("content type %q", ct)
			}
			var e api.Error
			dec := json.NewDecoder(rec.Body)
			dec.DisallowUnknownFields()
			if err := dec.Decode(&e); err != nil {
				t.Fatalf("error body is not {error, detail}: %v", err)
			}
			if e.Error != tc.error || (e.Detail != "") != tc.wantDetail || e.Job != "" {
				t.Errorf("error body %+v, want error %q (detail: %v)", e, tc.error, tc.wantDetail)
			}
		})
	}

	// 409 is the same shape, with the job that holds the DLQ.
	c := newClient(t, s)
	if rec := c.do("POST", rp, `{"selection":{"all":true}}`); rec.Code != http.StatusAccepted {
		t.Fatalf("start: %d %s", rec.Code, rec.Body.String())
	}
	rec := c.do("POST", rp, `{"selection":{"all":true}}`)
	var e api.Error
	dec := json.NewDecoder(rec.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || rec.Code != http.StatusConflict || e.Job != f.running || e.Error == "" {
		t.Errorf("409: %d %+v %v", rec.Code, e, err)
	}
}
