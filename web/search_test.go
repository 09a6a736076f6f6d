package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/store"
)

type searchAnswer struct {
	Mode      string
	Q         string
	BudgetMS  int64 `json:"budget_ms"`
	PerDLQ    int   `json:"per_dlq"`
	Limit     int
	OutOfTime bool `json:"out_of_time"`
	Truncated bool
	DLQs      []struct {
		DLQ      string
		Scanned  int
		Matches  int
		Complete bool
		Note     string
	}
	Hits []struct {
		DLQ     string
		Message struct{ ID string }
		PageURL string `json:"page_url"`
	}
}

func hitIDs(a searchAnswer) []string {
	var out []string
	for _, h := range a.Hits {
		out = append(out, h.Message.ID)
	}
	return out
}

// TestSearchModes: each mode finds what it names, in every DLQ the
// viewer may read, and the answer shows its bounds and each DLQ's line.
func TestSearchModes(t *testing.T) {
	f := newFakeDLQ()
	c := newClient(t, dlqServer(t, config.AuthNone, f))
	for _, tc := range []struct {
		mode, q string
		want    []string
	}{
		{"id", "m-1", []string{"m-1"}},
		{"auto", "m-bin", []string{"m-bin"}},
		{"header", "note=" + hostileImg, []string{"m-hostile"}},
		{"header", "x-queuewatch-replay-count", []string{"m-1"}},
		{"header", "content_type=application/json", []string{"m-1"}}, // a property
		{"text", "ALERT(1)", []string{"m-hostile"}},
		{"path", `$.order == "1"`, []string{"m-1"}}, // a number found by its text
		{"auto", `$.total == 19.5`, []string{"m-1"}},
		{"path", `$.total`, []string{"m-1"}},
		{"cel", `replays == 2 || body.startsWith("<script>")`, []string{"m-1", "m-hostile"}},
		{"key", "nothing", nil},
	} {
		rec := c.do(http.MethodGet, "/api/v1/search?"+url.Values{"mode": {tc.mode}, "q": {tc.q}}.Encode(), "")
		if rec.Code != http.StatusOK {
			t.Fatalf("%s %s = %d %s", tc.mode, tc.q, rec.Code, rec.Body)
		}
		a := decode[searchAnswer](t, rec)
		// dlqServer lists two DLQs on cluster main; the fake serves the
		// same messages for both.
		var want []string
		for _, id := range tc.want {
			want = append(want, id, id)
		}
		slices.Sort(want)
		got := hitIDs(a)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s %q found %v, want %v", tc.mode, tc.q, got, want)
		}
		if a.BudgetMS != 5000 || a.PerDLQ != 1000 || a.Limit != 100 || len(a.DLQs) != 2 || !a.DLQs[0].Complete || a.DLQs[0].Scanned != 3 {
			t.Errorf("%s %q: bounds and lines %+v", tc.mode, tc.q, a)
		}
	}
	rec := c.do(http.MethodGet, "/api/v1/search?q=m-1&per_dlq=2&limit=1&budget=2s", "")
	a := decode[searchAnswer](t, rec)
	if a.BudgetMS != 2000 || a.PerDLQ != 2 || a.DLQs[0].Scanned != 2 || a.DLQs[0].Complete || len(a.Hits) != 1 || !a.Truncated {
		t.Errorf("bounded search %+v", a)
	}
	if len(a.Hits) == 1 && a.Hits[0].PageURL != "/dlq/"+url.PathEscape(a.Hits[0].DLQ)+"?where=id+%3D%3D+%22m-1%22" {
		t.Errorf("hit links to %s", a.Hits[0].PageURL)
	}
	for q, want := range map[string]string{
		"":               "q is required",
		"q=x&mode=regex": "mode",
		"q=x&mode=":      "want one of auto",
		"q=x&budget=1h":  "budget",
		"q=x&per_dlq=0":  "per_dlq",
		"q=%24.a%5B":     "q:",
		"mode=cel&q=" + url.QueryEscape("value.a =="): "line 1, column",
	} {
		if rec := c.do(http.MethodGet, "/api/v1/search?"+q, ""); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("search ?%s = %d %s, want 400 with %q", q, rec.Code, rec.Body, want)
		}
	}
	f.running = "job-9"
	a = decode[searchAnswer](t, c.do(http.MethodGet, "/api/v1/search?q=m-1", ""))
	if len(a.Hits) != 0 || !strings.Contains(a.DLQs[0].Note, "job job-9 is running") {
		t.Errorf("a DLQ under a job: %+v", a)
	}
}

// TestSearchNeverMatchesAMaskedValue: a search matches messages as the
// viewer sees them, so a masked card number, email or header value is
// not found by its clear value in any mode — not even by an admin, as no
// search shows clear values — while what is shown is found; the hits are
// in the body-read audit.
func TestSearchNeverMatchesAMaskedValue(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s, _ := maskedServer(t, st)
	for _, c := range []*client{newClient(t, s, basic("alice", "wonderland")), newClient(t, s, bearerTok(apiToken))} {
		for _, q := range []url.Values{
			{"q": {clearCard}},
			{"q": {clearEmail}},
			{"mode": {"text"}, "q": {"4111"}},
			{"mode": {"header"}, "q": {"x-card=" + clearCard}},
			{"mode": {"path"}, "q": {`$.card.number == "` + clearCard + `"`}},
			{"mode": {"path"}, "q": {`$..email == "` + clearEmail + `"`}},
			{"mode": {"cel"}, "q": {`value.card.number == "` + clearCard + `" || body.contains("ann@")`}},
		} {
			rec := c.do(http.MethodGet, "/api/v1/search?"+q.Encode(), "")
			if a := decode[searchAnswer](t, rec); rec.Code != http.StatusOK || len(a.Hits) != 0 {
				t.Errorf("search %v = %d, found %v by a masked value", q, rec.Code, hitIDs(a))
			}
		}
		rec := c.do(http.MethodGet, "/api/v1/search?"+url.Values{"mode": {"path"}, "q": {`$.card.exp == "12/29"`}}.Encode(), "")
		if a := decode[searchAnswer](t, rec); !slices.Equal(hitIDs(a), []string{"m-card", "m-card"}) { // in both DLQs
			t.Errorf("a shown value: found %v, want m-card", hitIDs(a))
		}
		noSecret(t, "search answer", rec.Body.Bytes())
	}
	reads, err := st.BodyReads(context.Background(), store.ReadQuery{Limit: 10})
	if err != nil || len(reads) == 0 || reads[0].Surface != "search" || reads[0].Clear || !slices.Equal(reads[0].Messages, []string{"m-card"}) {
		t.Errorf("body reads %+v, %v: want the search's masked read of m-card", reads, err)
	}
}

// TestSearchPage: the header's box on every page, and the results page
// with its bounds, the hits linked to their messages and each DLQ's line.
func TestSearchPage(t *testing.T) {
	c := newClient(t, dlqServer(t, config.AuthNone, newFakeDLQ()))
	if rec := c.do(http.MethodGet, "/replays", ""); !strings.Contains(rec.Body.String(), `<form class="topsearch" method="get" action="/search"`) {
		t.Errorf("no search box in the header: %.300s", rec.Body)
	}
	rec := c.do(http.MethodGet, "/search?"+url.Values{"q": {`$.order == 1`}}.Encode(), "")
	body := rec.Body.String()
	for _, want := range []string{
		`<strong>2</strong> messages`, "in 2 of 2 DLQs", "budget 5s · at most 1,000 messages read per DLQ",
		`href="/dlq/rabbitmq:main:%2F:orders.dlq?where=id+%3D%3D+%22m-1%22"`, `id="search-dlqs"`, "all read",
		`value="$.order == 1"`,
	} {
		if rec.Code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("search page = %d, lacks %q", rec.Code, want)
		}
	}
	if rec := c.do(http.MethodGet, "/search?q=x&mode=nope", ""); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `id="search-notice"`) {
		t.Errorf("a refused query = %d", rec.Code)
	}
	if rec := c.do(http.MethodGet, "/search", ""); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `id="search-q"`) {
		t.Errorf("the empty form = %d", rec.Code)
	}
}

// rotatingFake is the fake DLQ service whose orders DLQ moves what a look
// reads, as an SQS DLQ does.
type rotatingFake struct{ *fakeDLQ }

func (rotatingFake) BrowseRotates(id string) bool { return strings.HasSuffix(id, ":orders.dlq") }

// TestSearchLeavesRotatingDLQsAlone: a DLQ whose every look moves its
// messages (SQS) is not read by a search; its line says why.
func TestSearchLeavesRotatingDLQsAlone(t *testing.T) {
	f := newFakeDLQ()
	c := newClient(t, dlqServer(t, config.AuthNone, rotatingFake{f}))
	a := decode[searchAnswer](t, c.do(http.MethodGet, "/api/v1/search?q=m-1", ""))
	for _, d := range a.DLQs {
		rotates := strings.HasSuffix(d.DLQ, ":orders.dlq")
		if rotates != (d.Scanned == 0) || rotates != strings.Contains(d.Note, "a look moves its messages") {
			t.Errorf("line %+v", d)
		}
	}
	if len(a.Hits) != 1 || strings.HasSuffix(a.Hits[0].DLQ, ":orders.dlq") {
		t.Errorf("hits %+v", a.Hits)
	}
}
