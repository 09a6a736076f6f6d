package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/store"
)

// withFilters is s's options with a real store keeping saved filters.
func withFilters(t *testing.T, s *Server) *Server {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	opts := s.opts
	opts.Filters = st
	return New(opts)
}

// TestSavedFilters: an operator saves a CEL filter on a DLQ; everyone who
// reads the DLQ lists it and finds it on the DLQ page, linked to the
// filtered page; a viewer may not save or delete one; a bad expression
// or name is a 400; a delete removes it once.
func TestSavedFilters(t *testing.T) {
	s := withFilters(t, dlqServer(t, config.AuthBasic, newFakeDLQ()))
	alice, victor := newClient(t, s, basic("alice", "wonderland")), newClient(t, s, basic("victor", "viewer-pw"))
	filters := apiDLQ(testDLQ) + "/filters"
	big := filters + "/" + url.PathEscape("big orders")
	if rec := alice.do(http.MethodPut, big, `{"where":"value.total > 10.0"}`); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"who":"alice"`) {
		t.Fatalf("save = %d %s", rec.Code, rec.Body)
	}
	rec := victor.do(http.MethodGet, filters, "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"name":"big orders","where":"value.total \u003e 10.0"`) {
		t.Errorf("the viewer's list = %d %s", rec.Code, rec.Body)
	}
	page := victor.do(http.MethodGet, "/dlq/"+url.PathEscape(testDLQ), "").Body.String()
	if !strings.Contains(page, `href="/dlq/rabbitmq:main:%2F:orders.dlq?where=value.total&#43;%3E&#43;10.0"`) &&
		!strings.Contains(page, `href="/dlq/rabbitmq:main:%2F:orders.dlq?where=value.total+%3E+10.0"`) {
		t.Errorf("the DLQ page does not link the saved filter: %s", page[strings.Index(page, `id="where"`):][:600])
	}
	if strings.Contains(page, `id="save-filter"`) || strings.Contains(page, "drop-filter") {
		t.Error("a viewer is offered to save or delete filters")
	}
	if !strings.Contains(alice.do(http.MethodGet, "/dlq/"+url.PathEscape(testDLQ)+"?where="+url.QueryEscape("value.total > 10.0"), "").Body.String(), `id="save-filter"`) {
		t.Error("the operator's filtered page offers no save")
	}
	for _, tc := range []struct {
		c      *client
		method string
		target string
		body   string
		code   int
		want   string
	}{
		{victor, http.MethodPut, big, `{"where":"true"}`, http.StatusForbidden, "operator"},
		{victor, http.MethodDelete, big, ``, http.StatusForbidden, "operator"},
		{alice, http.MethodPut, big, `{"where":"value.total >"}`, http.StatusBadRequest, "line 1, column"},
		{alice, http.MethodPut, big, `{"where":""}`, http.StatusBadRequest, "where is required"},
		{alice, http.MethodPut, filters + "/" + url.PathEscape(" padded"), `{"where":"true"}`, http.StatusBadRequest, "filter name"},
		{alice, http.MethodPut, filters + "/" + strings.Repeat("n", 65), `{"where":"true"}`, http.StatusBadRequest, "filter name"},
		{alice, http.MethodDelete, filters + "/nope", ``, http.StatusNotFound, "no filter"},
		{alice, http.MethodDelete, big, ``, http.StatusNoContent, ""},
		{alice, http.MethodDelete, big, ``, http.StatusNotFound, "no filter"},
	} {
		if rec := tc.c.do(tc.method, tc.target, tc.body); rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s %s %s = %d %s, want %d with %q", tc.method, tc.target, tc.body, rec.Code, rec.Body, tc.code, tc.want)
		}
	}
	if rec := victor.do(http.MethodGet, filters, ""); !strings.Contains(rec.Body.String(), `"filters":[]`) {
		t.Errorf("after the delete: %s", rec.Body)
	}
	if rec := newClient(t, dlqServer(t, config.AuthNone, newFakeDLQ())).do(http.MethodGet, filters, ""); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("without a store = %d", rec.Code)
	}
}

// TestSavedFilterByMaskedValue: a filter reading a masked value is saved
// only by someone who may unmask, and reads [masked] to everyone else.
func TestSavedFilterByMaskedValue(t *testing.T) {
	masked, _ := maskedServer(t, nil)
	s := withFilters(t, masked)
	alice, admin := newClient(t, s, basic("alice", "wonderland")), newClient(t, s, bearerTok(apiToken))
	guess := `{"where":` + strconv.Quote(`value.card.number == "`+clearCard+`"`) + `}`
	target := apiDLQ(testDLQ) + "/filters/card"
	if rec := alice.do(http.MethodPut, target, guess); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "masked") {
		t.Errorf("alice saving a masked guess = %d %s", rec.Code, rec.Body)
	}
	if rec := admin.do(http.MethodPut, target, guess); rec.Code != http.StatusOK {
		t.Fatalf("the unmask role's save = %d %s", rec.Code, rec.Body)
	}
	for _, where := range []string{apiDLQ(testDLQ) + "/filters", "/dlq/" + url.PathEscape(testDLQ)} {
		rec := alice.do(http.MethodGet, where, "")
		noSecret(t, where, rec.Body.Bytes())
		if !strings.Contains(rec.Body.String(), "masked") {
			t.Errorf("%s does not show the filter as masked", where)
		}
	}
	if rec := admin.do(http.MethodGet, apiDLQ(testDLQ)+"/filters", ""); !strings.Contains(rec.Body.String(), clearCard) {
		t.Errorf("the unmask role does not read its filter: %s", rec.Body)
	}
}
