package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/web/api"
)

// TestWhereFilter: ?where= filters the messages API with a CEL
// expression and says how many messages it read; a bad expression is a
// 400 naming its position, in a browse and in a job's selection.
func TestWhereFilter(t *testing.T) {
	f := newFakeDLQ()
	c := newClient(t, dlqServer(t, config.AuthNone, f))
	rec := c.do(http.MethodGet, apiDLQ(testDLQ)+"/messages?where="+url.QueryEscape(`value.order == 1 && failure.source == "orders"`), "")
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	p := decode[struct {
		Messages []api.MessageJSON
		Where    string
		Scanned  int
	}](t, rec)
	if len(p.Messages) != 1 || p.Messages[0].ID != "m-1" || p.Scanned != 3 || !strings.HasPrefix(p.Where, "value.order") {
		t.Fatalf("filtered page %+v", p)
	}
	rec = c.do(http.MethodGet, apiDLQ(testDLQ)+"/messages?where="+url.QueryEscape(`value.order ==`), "")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "line 1, column 15") {
		t.Errorf("bad filter = %d %s, want 400 naming line 1, column 15", rec.Code, rec.Body)
	}
	for target, body := range map[string]string{
		"/preview": `{"action":"replay","selection":{"where":"key =="}}`,
		"/replay":  `{"action":"replay","dry_run":true,"selection":{"where":"key =="}}`,
	} {
		rec := c.do(http.MethodPost, apiDLQ(testDLQ)+target, body)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "line 1, column 7") {
			t.Errorf("POST %s with a bad where = %d %s", target, rec.Code, rec.Body)
		}
	}
	rec = c.do(http.MethodGet, "/dlq/"+url.PathEscape(testDLQ)+"?where="+url.QueryEscape(`value.order == 1`), "")
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, `data-id="m-1"`) || strings.Contains(body, `data-id="m-bin"`) ||
		!strings.Contains(body, `among the 3 messages read`) || !strings.Contains(body, `data-where="value.order == 1"`) {
		t.Errorf("filtered DLQ page = %d %s", rec.Code, body)
	}
	rec = c.do(http.MethodGet, "/dlq/"+url.PathEscape(testDLQ)+"?where="+url.QueryEscape(`value.order = 1`), "")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `id="where-error"`) {
		t.Errorf("DLQ page with a bad filter = %d %s", rec.Code, rec.Body)
	}
	rec = c.do(http.MethodPost, apiDLQ(testDLQ)+"/replay", `{"action":"replay","dry_run":true,"selection":{"where":"replays >= 2"}}`)
	if rec.Code != http.StatusOK || len(f.started) != 1 || f.started[0].Selection.Where != "replays >= 2" {
		t.Fatalf("a where selection = %d %s, started %+v", rec.Code, rec.Body, f.started)
	}
}

// TestWhereByMaskedValue: a CEL filter or selection that reads a masked
// value is refused to someone who may not unmask (its matches would
// confirm a guess), allowed where it reads only what is shown, and
// allowed to the unmask role — whose expression, holding the clear value,
// is then hidden from the others in the job.
func TestWhereByMaskedValue(t *testing.T) {
	s, f := maskedServer(t, nil)
	alice := newClient(t, s, basic("alice", "wonderland"))
	guess := `value.card.number == "` + clearCard + `"`
	for _, where := range []string{
		guess,
		`value.card.exists(k, k == "number")`, // the table holding it
		`value.exists(k, k == "x")`,           // the whole value
		`body.contains("4111")`,               // the body
		`headers["wrap"].contains("4111")`,    // any header, where one is masked
		`has(value.customer) && value.customer.email.startsWith("ann")`, // $..email
		`value.order == 7`, // $..email may be anywhere below
	} {
		rec := alice.do(http.MethodGet, apiDLQ(testDLQ)+"/messages?where="+url.QueryEscape(where), "")
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "masked") {
			t.Errorf("filter %s = %d %s, want 400 (masked)", where, rec.Code, rec.Body)
		}
		sel := `{"action":"replay","selection":{"where":` + strconv.Quote(where) + `}}`
		if rec := alice.do(http.MethodPost, apiDLQ(testDLQ)+"/preview", sel); rec.Code != http.StatusBadRequest {
			t.Errorf("preview %s = %d %s, want 400", where, rec.Code, rec.Body)
		}
	}
	rec := alice.do(http.MethodGet, apiDLQ(testDLQ)+"/messages?where="+url.QueryEscape(`id == "m-card" && age > duration("0s")`), "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"id":"m-card"`) {
		t.Fatalf("a filter on shown values = %d %s", rec.Code, rec.Body)
	}
	noSecret(t, "filtered page", rec.Body.Bytes())
	if len(f.started) != 0 {
		t.Fatalf("a job started: %+v", f.started)
	}

	admin := newClient(t, s, bearerTok(apiToken))
	rec = admin.do(http.MethodGet, apiDLQ(testDLQ)+"/messages?where="+url.QueryEscape(guess), "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"id":"m-card"`) {
		t.Fatalf("the unmask role's filter = %d %s", rec.Code, rec.Body)
	}
	sel := `{"action":"replay","dry_run":true,"selection":{"where":` + strconv.Quote(guess) + `}}`
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
	if rec := admin.do(http.MethodGet, "/api/v1/replays/job-1", ""); !strings.Contains(rec.Body.String(), clearCard) {
		t.Errorf("the unmask role does not see its own selection: %s", rec.Body)
	}
}
