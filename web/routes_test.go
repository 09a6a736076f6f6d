package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// TestEveryRouteDeclaresItsNeed walks what echo serves: every route is a
// line of the route table, declares a need, and a path that names an
// object (a DLQ, a job, a reader) declares that object, so that no handler
// is reached for another team's object without the check.
func TestEveryRouteDeclaresItsNeed(t *testing.T) {
	s, _ := scopedServer(t)
	readerParams := []string{":group", ":consumer", ":queue"}
	for _, r := range s.e.Routes() {
		n, ok := s.needs[r.Method+" "+r.Path]
		if !ok {
			t.Errorf("%s %s is served but not in the route table", r.Method, r.Path)
			continue
		}
		if n.public {
			continue
		}
		switch {
		case strings.Contains(r.Path, ":id"):
			if n.object.kind != dlqObject {
				t.Errorf("%s %s names a DLQ but its need checks object %d", r.Method, r.Path, n.object.kind)
			}
		case strings.Contains(r.Path, ":job"):
			if n.object.kind != jobObject {
				t.Errorf("%s %s names a job but its need checks object %d", r.Method, r.Path, n.object.kind)
			}
		case slices.ContainsFunc(readerParams, func(p string) bool { return strings.Contains(r.Path, p) }):
			// The need reads the reader from every parameter its kind's
			// path has, and the route has them all (a RabbitMQ queue is
			// named with its vhost).
			if n.object.kind != readerObject {
				t.Errorf("%s %s names a reader but its need checks object %d", r.Method, r.Path, n.object.kind)
				continue
			}
			var params []string
			for _, seg := range strings.Split(r.Path, "/") {
				if strings.HasPrefix(seg, ":") {
					params = append(params, seg[1:])
				}
			}
			if !slices.Equal(params[:min(len(params), len(n.object.reader.Params))], n.object.reader.Params) {
				t.Errorf("%s %s: its need reads the reader from %q", r.Method, r.Path, n.object.reader.Params)
			}
		}
	}
	for _, r := range s.routes() {
		n := s.needs[r.method+" "+r.path]
		if n.public != r.need.public || n.role != r.need.role || n.object.kind != r.need.object.kind || !slices.Equal(n.object.reader.Params, r.need.object.reader.Params) {
			t.Errorf("%s %s: need %+v registered, %+v declared", r.method, r.path, n, r.need)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a route without a need was accepted")
		}
	}()
	mustNeed(route{method: "GET", path: "/new", handler: func(echo.Context) error { return nil }})
}

// teamPath fills a route's parameters with team's objects (every reader
// kind and DLQ of scopedServer).
func teamPath(path, team string) string {
	dlq := dlqA
	if team == "b" {
		dlq = dlqB
	}
	cluster := "prod"
	switch {
	case path == "/search", path == "/api/v1/search":
		return path + "?mode=cel&q=true" // every message of every DLQ the principal may read
	case strings.HasPrefix(path, "/nats/"), strings.HasPrefix(path, "/api/v1/nats/"):
		cluster = "nm"
	case strings.HasPrefix(path, "/sqs/"), strings.HasPrefix(path, "/api/v1/sqs/"):
		cluster = "aws"
	case strings.HasPrefix(path, "/rabbitmq/"), strings.HasPrefix(path, "/api/v1/rabbitmq/"):
		return strings.NewReplacer(":cluster", "main", ":vhost", "%2F", ":queue", "team-"+team+".orders").Replace(path)
	}
	group := "team-" + team + "-billing"
	if strings.Contains(path, "share-groups") {
		group = "team-" + team + "-share"
	}
	return strings.NewReplacer(
		":cluster", cluster, ":group", group, ":stream", "ORDERS", ":consumer", "team-"+team+"-shipper",
		":queue", "team-"+team+"-q", ":id", url.PathEscape(dlq), ":job", "job-"+team, ":msg", "m-1",
		":source", "ob", "*", "app.js", ":name", "big-orders",
	).Replace(path)
}

// TestScopeOnEveryRoute is the scope test generated from the route table:
// for every route, team A's principal gets nothing naming team B — a
// route on team B's object (group, share group, JetStream consumer, SQS
// queue, DLQ, job) answers 404 naming nothing, and every list, page and
// history it may read leaves team B's objects out. Team B's principal
// (a token) is held the same way on team A's.
func TestScopeOnEveryRoute(t *testing.T) {
	s, f := scopedServer(t)
	for _, who := range []struct {
		name, own, other string
		c                *client
	}{
		{"ana", "a", "b", newClient(t, s, basic("ana", "a"))},
		{"team-b-bot", "b", "a", newClient(t, s, bearerTok("team-b-bot-token"))},
	} {
		for _, r := range s.routes() {
			if r.need.public {
				continue
			}
			target := teamPath(r.path, who.other)
			rec := who.c.do(r.method, target, `{"to":"latest","action":"replay","dry_run":true,"selection":{"all":true}}`)
			body := rec.Body.String()
			if strings.Contains(body, "team-"+who.other) {
				t.Errorf("%s: %s %s answers %d naming team %s's objects: %.300s", who.name, r.method, target, rec.Code, who.other, body)
			}
			if r.need.object.kind != anyObject && rec.Code != http.StatusNotFound {
				t.Errorf("%s: %s %s on team %s's object = %d, want 404", who.name, r.method, target, who.other, rec.Code)
			}
		}
	}
	if len(f.started) != 0 {
		t.Errorf("a job started on another team's DLQ: %+v", f.started)
	}
}
