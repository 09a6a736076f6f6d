package web

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/inspect"
	"github.com/queuewatch/queuewatch/jsonpath"
	"github.com/queuewatch/queuewatch/masking"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
	"github.com/queuewatch/queuewatch/web/api"
)

const (
	clearCard  = "4111111111111111"
	clearEmail = "ann@example.com"
)

// maskedServer serves testDLQ holding a card number and an email in a
// JSON body, a header and a text body, and one archived copy, with masking
// rules for them and a real (SQLite) audit store for the body reads.
func maskedServer(t *testing.T, reads inspect.ReadLog) (*Server, *fakeDLQ) {
	t.Helper()
	f := newFakeDLQ()
	body := []byte(`{"order":7,"card":{"number":"` + clearCard + `","exp":"12/29"},"customer":{"email":"` + clearEmail + `"}}`)
	f.msgs = []queue.Message{
		{ID: "m-card", Timestamp: time.Now(), Body: body, Headers: []queue.Header{{Key: "x-card", Value: []byte(clearCard)}}},
		{ID: "m-text", Timestamp: time.Now(), Body: []byte("customer " + clearEmail + " paid with " + clearCard)},
	}
	f.archived = []dlqreplay.Archived{{
		ID: 1, DLQ: testDLQ, MessageID: "m-old", JobID: "job-1", ArchivedAt: time.Now(), Body: body,
		Headers: []queue.Header{{Key: "x-card", Value: []byte(clearCard)}},
	}}
	if reads == nil {
		st, err := store.Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		reads = st
	}
	path := func(s string) jsonpath.Path {
		p, err := jsonpath.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	m := masking.New([]masking.Rule{
		{Fields: []jsonpath.Path{path("$.card.number")}, Mode: masking.Last4},
		{Fields: []jsonpath.Path{path("$..email")}, Headers: []string{"X-Card"}, Mode: masking.Redact},
	}, []byte("a key of sixteen bytes"))
	s := dlqServerAuth(authConfig(t, config.AuthBasic), f)
	opts := s.opts
	opts.Auth.Tokens = authConfig(t, config.AuthBasic).Tokens // ci-bot, an admin
	opts.Inspect = inspect.New(inspect.Options{Masker: m, Reads: reads})
	return New(opts), f
}

var base64Run = regexp.MustCompile(`"([A-Za-z0-9+/]{12,}={0,2})"`)

// noSecret fails when a clear value is in b, as text or inside any base64
// string (the API's key, body and header values).
func noSecret(t *testing.T, what string, b []byte) {
	t.Helper()
	for _, secret := range []string{clearCard, clearEmail} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s shows %s", what, secret)
		}
		for _, m := range base64Run.FindAllSubmatch(b, -1) {
			if dec, err := base64.StdEncoding.DecodeString(string(m[1])); err == nil && bytes.Contains(dec, []byte(secret)) {
				t.Errorf("%s shows %s in base64", what, secret)
			}
		}
	}
}

// TestMaskingOnEverySurface: an operator sees no masked value through the
// API list, one message, the body download, the DLQ page, the archive API,
// the replays page, or a selection by a masked header; and each read is
// in the body-read audit.
func TestMaskingOnEverySurface(t *testing.T) {
	s, f := maskedServer(t, nil)
	alice := newClient(t, s, basic("alice", "wonderland"))
	for _, target := range []string{
		apiDLQ(testDLQ) + "/messages",
		apiDLQ(testDLQ) + "/messages/m-card",
		apiDLQ(testDLQ) + "/messages/m-card/body",
		apiDLQ(testDLQ) + "/messages/m-text/body",
		"/dlq/" + url.PathEscape(testDLQ),
		"/api/v1/archive",
		"/replays",
	} {
		rec := alice.do(http.MethodGet, target, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", target, rec.Code, rec.Body)
		}
		noSecret(t, target, rec.Body.Bytes())
	}

	rec := alice.do(http.MethodGet, apiDLQ(testDLQ)+"/messages/m-card", "")
	m := decode[api.MessageJSON](t, rec)
	if m.Size != len(f.msgs[0].Body) {
		t.Errorf("size %d, want the body's %d bytes on the wire", m.Size, len(f.msgs[0].Body))
	}
	if m.Masked != 3 || !strings.Contains(m.BodyView.Text, `"number": "****1111"`) || !strings.Contains(m.BodyView.Text, `"exp": "12/29"`) {
		t.Errorf("masked message: %d masked, body %s", m.Masked, m.BodyView.Text)
	}
	if rec := alice.do(http.MethodGet, apiDLQ(testDLQ)+"/messages/m-card/body", ""); rec.Header().Get("X-Queuewatch-Masked") != "3" {
		t.Errorf("download X-Queuewatch-Masked = %q", rec.Header().Get("X-Queuewatch-Masked"))
	}

	type groups struct {
		FieldGroups []inspect.FieldGroup `json:"field_groups"`
	}
	byEmail := decode[groups](t, alice.do(http.MethodGet, apiDLQ(testDLQ)+"/messages?group_by="+url.QueryEscape("$.customer.email"), ""))
	if g := byEmail.FieldGroups; len(g) != 2 || g[0].Value != masking.Redacted || g[0].Count != 1 || !g[1].Absent {
		t.Errorf("grouped by a masked field: %+v", g)
	}
	if rec := alice.do(http.MethodGet, apiDLQ(testDLQ)+"/messages?group_by=customer", ""); rec.Code != http.StatusBadRequest {
		t.Errorf("a malformed group_by = %d", rec.Code)
	}
	if page := alice.do(http.MethodGet, "/dlq/"+url.PathEscape(testDLQ)+"?group_by="+url.QueryEscape("$.order"), ""); !strings.Contains(page.Body.String(), `<td class="name mono" title="7">7</td>`) {
		t.Error("the page does not group by $.order")
	}

	// No oracle: a dry run selecting by the masked header's value would
	// count the messages that carry a guessed card number.
	sel := `{"action":"replay","dry_run":true,"selection":{"headers":{"X-CARD":"` + clearCard + `"}}}`
	if rec := alice.do(http.MethodPost, apiDLQ(testDLQ)+"/replay", sel); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "masked") {
		t.Errorf("selection by a masked header = %d %s", rec.Code, rec.Body)
	}
	if len(f.started) != 0 {
		t.Errorf("a job started: %+v", f.started)
	}

	audit := decode[struct{ Reads []store.BodyRead }](t, alice.do(http.MethodGet, "/api/v1/audit", ""))
	surfaces := map[string]bool{}
	for _, r := range audit.Reads {
		if r.Who != "alice" || r.Clear || r.DLQ != testDLQ {
			t.Errorf("read %+v", r)
		}
		surfaces[r.Surface] = true
	}
	for _, want := range []string{inspect.SurfaceAPI, inspect.SurfaceMessage, inspect.SurfaceDownload, inspect.SurfacePage, inspect.SurfaceArchive} {
		if !surfaces[want] {
			t.Errorf("no %s read in the audit: %+v", want, audit.Reads)
		}
	}
}

// TestUnmask: the unmask role (admin by default) sees one message in
// clear on request, and that view is audited as clear; an operator gets
// 403; a clear view that cannot be audited is not shown.
func TestUnmask(t *testing.T) {
	s, _ := maskedServer(t, nil)
	one := apiDLQ(testDLQ) + "/messages/m-card?unmask=true"
	if rec := newClient(t, s, basic("alice", "wonderland")).do(http.MethodGet, one, ""); rec.Code != http.StatusForbidden {
		t.Fatalf("operator unmask = %d %s", rec.Code, rec.Body)
	}
	admin := newClient(t, s, bearerTok(apiToken))
	rec := admin.do(http.MethodGet, one, "")
	if rec.Code != http.StatusOK || !strings.Contains(decode[api.MessageJSON](t, rec).BodyView.Text, clearCard) {
		t.Fatalf("admin unmask = %d %s", rec.Code, rec.Body)
	}
	page := admin.do(http.MethodGet, "/dlq/"+url.PathEscape(testDLQ)+"?unmask=m-card", "")
	if page.Code != http.StatusOK || strings.Count(page.Body.String(), clearCard) == 0 {
		t.Fatalf("page with ?unmask = %d", page.Code)
	}
	if strings.Contains(page.Body.String(), "paid with "+clearCard) {
		t.Error("the page showed another message in clear than the one asked for")
	}
	var clearReads []store.BodyRead
	for _, r := range decode[struct{ Reads []store.BodyRead }](t, admin.do(http.MethodGet, "/api/v1/audit", "")).Reads {
		if r.Clear {
			clearReads = append(clearReads, r)
		}
	}
	if len(clearReads) != 2 || clearReads[0].Who != "ci-bot" || len(clearReads[0].Messages) != 1 || clearReads[0].Messages[0] != "m-card" {
		t.Fatalf("clear reads %+v", clearReads)
	}

	broken, _ := maskedServer(t, failingReads{})
	if rec := newClient(t, broken, bearerTok(apiToken)).do(http.MethodGet, one, ""); rec.Code != http.StatusServiceUnavailable || strings.Contains(rec.Body.String(), clearCard) {
		t.Fatalf("unaudited clear view = %d %s", rec.Code, rec.Body)
	}
	if rec := newClient(t, broken, basic("alice", "wonderland")).do(http.MethodGet, apiDLQ(testDLQ)+"/messages", ""); rec.Code != http.StatusOK {
		t.Fatalf("a masked read fails with the audit store: %d", rec.Code)
	}
}

type failingReads struct{}

func (failingReads) RecordBodyRead(context.Context, store.BodyRead) error {
	return errors.New("audit store down")
}

func (failingReads) BodyReads(context.Context, store.ReadQuery) ([]store.BodyRead, error) {
	return nil, nil
}

// TestOneMessageWhileAJobRuns: reading one message or its body while a job
// holds the DLQ answers the conflict naming the job (no crash: the conflict
// answer is written before the handler would render the message).
func TestOneMessageWhileAJobRuns(t *testing.T) {
	s, f := maskedServer(t, nil)
	f.running = "job-9"
	alice := newClient(t, s, basic("alice", "wonderland"))
	for _, target := range []string{apiDLQ(testDLQ) + "/messages/m-card", apiDLQ(testDLQ) + "/messages/m-card/body"} {
		rec := alice.do(http.MethodGet, target, "")
		if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), `"job":"job-9"`) {
			t.Errorf("GET %s = %d %s", target, rec.Code, rec.Body)
		}
	}
}

// TestSelectionByNestedMaskedHeader: a masked header nested in an AMQP
// table ({"wrap":{"x-card":…}}) is no oracle either. A selection names a
// header at the top level and matches its whole text, so selecting by
// wrap's text with a guessed card inside would count the messages that
// carry it: it is refused, for a preview as for a dry run, to a principal
// who may not unmask. One who may selects by it, and the job shows the
// selected value to the others masked.
func TestSelectionByNestedMaskedHeader(t *testing.T) {
	s, f := maskedServer(t, nil)
	wrap := `{"order":"o-1","inner":{"x-card":"` + clearCard + `"}}`
	f.msgs = append(f.msgs, queue.Message{ID: "m-wrap", Timestamp: time.Now(), Headers: []queue.Header{{Key: "wrap", Kind: "table", Value: []byte(wrap)}}})
	byWrap := `"selection":{"headers":{"wrap":` + strconv.Quote(wrap) + `}}`
	sel := `{"action":"replay","dry_run":true,` + byWrap + `}`
	alice := newClient(t, s, basic("alice", "wonderland"))
	for target, body := range map[string]string{
		apiDLQ(testDLQ) + "/preview": `{"action":"replay",` + byWrap + `}`,
		apiDLQ(testDLQ) + "/replay":  sel,
	} {
		if rec := alice.do(http.MethodPost, target, body); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "masked") {
			t.Errorf("POST %s selecting by a table holding a masked header = %d %s", target, rec.Code, rec.Body)
		}
	}
	plain := `{"action":"replay","selection":{"headers":{"wrap":"{\"order\":\"o-1\"}"}}}`
	if rec := alice.do(http.MethodPost, apiDLQ(testDLQ)+"/preview", plain); rec.Code != http.StatusOK {
		t.Errorf("a table without a masked header is refused: %d %s", rec.Code, rec.Body)
	}
	if len(f.started) != 0 {
		t.Fatalf("a job started: %+v", f.started)
	}

	admin := newClient(t, s, bearerTok(apiToken))
	if rec := admin.do(http.MethodPost, apiDLQ(testDLQ)+"/replay", sel); rec.Code != http.StatusOK {
		t.Fatalf("the unmask role's selection = %d %s", rec.Code, rec.Body)
	}
	for _, target := range []string{"/api/v1/replays/job-1", "/api/v1/audit", "/replays", "/replays?job=job-1"} {
		rec := alice.do(http.MethodGet, target, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", target, rec.Code)
		}
		noSecret(t, target, rec.Body.Bytes())
	}
}
