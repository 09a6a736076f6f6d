package web

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/api"
	"github.com/queuewatch/queuewatch/web/components"
)

// hostileNames are group, queue and topic names that break naive URL
// handling: escapes that decode twice, separators of paths, queries and
// fragments, markup and non-ASCII. "aA-0" is what "a%41-0" decodes to
// twice, so a double decode lands on the wrong page instead of a 404.
var hostileNames = []string{
	"a%41-0", "aA-0", "%", "%2F", "100%", "a/b", "/lead", "trail/", "x:y:z", "two words", "q?x=1&y=2",
	"h#frag", `<b>x</b>&'"`, "名前-ü", "a+b", `back\slash`, "semi;colon=1", "~tilde@at,comma",
}

// hostileVHosts are RabbitMQ vhosts, the default one and one that needs
// escaping both inside a DLQ ID (':' and '%') and in a URL.
var hostileVHosts = []string{"/", `v:h%41/<b>&'" ü`}

// hostileMessageID is a message whose ID has to survive the body URL.
const hostileMessageID = "m/%41?#<b>é"

// namesServer serves Kafka groups and DLQs and RabbitMQ queues and DLQs
// named with every hostile name, through a real HTTP server so requests
// are parsed the way a browser's are.
func namesServer(t *testing.T) (base string, f *fakeDLQ) {
	t.Helper()
	now := time.Now()
	kafkaSnap := &queue.Snapshot{Broker: queue.Kafka, Cluster: "main", Time: now}
	rabbitSnap := &queue.Snapshot{Broker: queue.RabbitMQ, Cluster: "main", Time: now}
	for _, n := range hostileNames {
		kafkaSnap.Groups = append(kafkaSnap.Groups, queue.ConsumerGroup{
			Cluster: "main", Name: n, State: "Stable", Members: 1,
			Status: queue.StatusOK, Partitions: []queue.PartitionLag{{Topic: n, Partition: 0, Committed: 1, HasCommit: true, End: 2, Lag: 1}},
		})
		kafkaSnap.DLQs = append(kafkaSnap.DLQs, queue.DLQ{Broker: queue.Kafka, Cluster: "main", Name: n, Sources: []string{n}, Messages: 1})
		for _, vh := range hostileVHosts {
			rabbitSnap.Queues = append(rabbitSnap.Queues, queue.Queue{Cluster: "main", VHost: vh, Name: n, Ready: 1})
			rabbitSnap.DLQs = append(rabbitSnap.DLQs, queue.DLQ{
				Broker: queue.RabbitMQ, Cluster: "main", VHost: vh, Name: n,
				Sources: []string{n}, Messages: 1,
			})
		}
	}
	f = newFakeDLQ()
	f.msgs = append(f.msgs, queue.Message{ID: hostileMessageID, Position: 3, Body: []byte("found me")})
	s := New(Options{
		Metrics: http.NotFoundHandler(), DLQs: f, Auth: config.Auth{Mode: config.AuthNone}, ReplayRate: 200,
		Monitor: historyMonitor{staticMonitor{
			ready: true, snaps: []*queue.Snapshot{kafkaSnap, rabbitSnap},
			statuses: []queue.SourceStatus{{Broker: queue.Kafka, Cluster: "main", Up: true, Polled: true, LastPoll: now}},
		}},
	})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts.URL, f
}

// get fetches base+path and returns the status and body.
func get(t *testing.T, base, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// linkAttr finds the attributes a page navigates or fetches with.
var linkAttr = regexp.MustCompile(`(?:href|data-url|action|hx-get)="(/[^"]*)"`)

// links returns the same-site links of a page, unescaped from HTML, the
// way the browser reads them (static assets left out).
func links(body string) []string {
	var out []string
	for _, m := range linkAttr.FindAllStringSubmatch(body, -1) {
		u := html.UnescapeString(m[1])
		if !strings.HasPrefix(u, "/static/") && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

// followLinks fetches every link of a page not seen before and wants each
// to answer 200.
func followLinks(t *testing.T, seen map[string]bool, base, page, body string) {
	t.Helper()
	for _, l := range links(body) {
		if seen[l] {
			continue
		}
		seen[l] = true
		if code, b := get(t, base, l); code != http.StatusOK {
			t.Errorf("link %q on %s answers %d: %.200s", l, page, code, b)
		}
	}
}

// title is how a page's <title> shows a name: escaped as text.
func title(name string) string {
	return "<title>" + templ.EscapeString(name) + " · queuewatch</title>"
}

func TestHostileNamesGroups(t *testing.T) {
	base, _ := namesServer(t)
	seen := map[string]bool{}
	_, overview := get(t, base, "/")
	var list struct{ Groups []api.GroupJSON }
	_, raw := get(t, base, "/api/v1/groups")
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatal(err)
	}
	for _, name := range hostileNames {
		t.Run(name, func(t *testing.T) {
			link := components.GroupURL("main", name)
			if !strings.Contains(overview, `href="`+html.EscapeString(link)+`"`) {
				t.Fatalf("overview has no link %q", link)
			}
			code, page := get(t, base, link)
			if code != http.StatusOK || !strings.Contains(page, title(name)) {
				t.Fatalf("GET %s = %d, want the page of %q: %.300s", link, code, name, page)
			}
			followLinks(t, seen, base, link, page)

			var g api.GroupJSON
			code, body := get(t, base, "/api/v1/groups/main/"+url.PathEscape(name))
			if err := json.Unmarshal([]byte(body), &g); err != nil || code != 200 || g.Group != name || g.Cluster != "main" {
				t.Errorf("API group = %d %q (%v), want %q", code, g.Group, err, name)
			}
			var h struct{ Group string }
			code, body = get(t, base, "/api/v1/groups/main/"+url.PathEscape(name)+"/history")
			if err := json.Unmarshal([]byte(body), &h); err != nil || code != 200 || h.Group != name {
				t.Errorf("API history = %d %q (%v), want %q", code, h.Group, err, name)
			}
			if !slices.ContainsFunc(list.Groups, func(g api.GroupJSON) bool { return g.Group == name }) {
				t.Errorf("/api/v1/groups does not list %q", name)
			}
		})
	}
}

func hostileDLQRefs() []queue.DLQRef {
	var refs []queue.DLQRef
	for _, n := range hostileNames {
		refs = append(refs, queue.DLQRef{Broker: queue.Kafka, Cluster: "main", Name: n})
		for _, vh := range hostileVHosts {
			refs = append(refs, queue.DLQRef{Broker: queue.RabbitMQ, Cluster: "main", VHost: vh, Name: n})
		}
	}
	return refs
}

var dataAPI = regexp.MustCompile(`data-api="([^"]*)"`)

func TestHostileNamesDLQs(t *testing.T) {
	base, f := namesServer(t)
	seen := map[string]bool{}
	_, dlqTab := get(t, base, "/?tab=dlqs")
	_, queueTab := get(t, base, "/?tab=queues")
	// Only the queue table: the attention list above it links DLQs too.
	queueTab = queueTab[strings.Index(queueTab, `id="queues"`):]
	var list struct{ DLQs []api.DLQJSON }
	_, raw := get(t, base, "/api/v1/dlqs")
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatal(err)
	}
	for _, ref := range hostileDLQRefs() {
		id := ref.ID()
		t.Run(id, func(t *testing.T) {
			link := components.DLQURL(id)
			if !strings.Contains(dlqTab, `href="`+html.EscapeString(link)+`"`) {
				t.Fatalf("DLQ tab has no link %q", link)
			}
			if ref.Broker == queue.RabbitMQ && !strings.Contains(queueTab, `href="`+html.EscapeString(link)+`"`) {
				t.Errorf("queues tab does not mark %q in vhost %q as a DLQ linking to its page", ref.Name, ref.VHost)
			}
			code, page := get(t, base, link)
			if code != http.StatusOK || !strings.Contains(page, title(ref.Name)) || !strings.Contains(page, `data-dlq="`+templ.EscapeString(id)+`"`) {
				t.Fatalf("GET %s = %d, want the page of %q: %.300s", link, code, id, page)
			}
			followLinks(t, seen, base, link, page)

			var msgs struct {
				DLQ      string
				Messages []api.MessageJSON
			}
			code, body := get(t, base, "/api/v1/dlqs/"+url.PathEscape(id)+"/messages")
			if err := json.Unmarshal([]byte(body), &msgs); err != nil || code != 200 || msgs.DLQ != id {
				t.Fatalf("API messages = %d %q (%v), want %q", code, msgs.DLQ, err, id)
			}
			for _, m := range msgs.Messages {
				if code, b := get(t, base, m.BodyURL); code != 200 || (m.ID == hostileMessageID && b != "found me") {
					t.Errorf("body of %q at %s = %d %.100q", m.ID, m.BodyURL, code, b)
				}
			}

			// The page's own replay endpoint, called as a script would.
			pageAPI := dataAPI.FindStringSubmatch(page)
			if pageAPI == nil {
				t.Fatal("no data-api on the DLQ page")
			}
			resp, err := http.Post(base+html.UnescapeString(pageAPI[1]), "application/json", strings.NewReader(`{"selection":{"all":true},"dry_run":true}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			started := ""
			f.mu.Lock()
			if len(f.started) > 0 {
				started = f.started[len(f.started)-1].DLQ
			}
			f.mu.Unlock()
			if resp.StatusCode != 200 || started != id {
				t.Errorf("dry run via %s = %d for DLQ %q, want 200 for %q", pageAPI[1], resp.StatusCode, started, id)
			}
			// Names inside JSON bodies: a move to a queue named like the
			// DLQ, and a restore into the DLQ by its ID.
			move, _ := json.Marshal(map[string]any{
				"action": "move", "selection": map[string]any{"all": true},
				"target": map[string]string{"kind": "queue", "name": ref.Name}, "dry_run": true,
			})
			resp, err = http.Post(base+html.UnescapeString(pageAPI[1]), "application/json", strings.NewReader(string(move)))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			restore, _ := json.Marshal(map[string]any{"archive_ids": []int64{7}, "target": id})
			resp, err = http.Post(base+"/api/v1/archive/restore", "application/json", strings.NewReader(string(restore)))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			f.mu.Lock()
			moved, restored := f.started[len(f.started)-1].Target.Name, f.restores[len(f.restores)-1].Target
			f.mu.Unlock()
			if moved != ref.Name || restored != id {
				t.Errorf("move target %q and restore target %q, want %q and %q", moved, restored, ref.Name, id)
			}

			var audit struct{ Jobs []struct{ DLQ string } }
			_, body = get(t, base, "/api/v1/audit?dlq="+url.QueryEscape(id))
			if err := json.Unmarshal([]byte(body), &audit); err != nil || len(audit.Jobs) == 0 || audit.Jobs[0].DLQ != id {
				t.Errorf("audit of %q = %s", id, body)
			}
			if !slices.ContainsFunc(list.DLQs, func(d api.DLQJSON) bool {
				return d.ID == id && d.Name == ref.Name && d.VHost == ref.VHost
			}) {
				t.Errorf("/api/v1/dlqs does not list %q", id)
			}
		})
	}
	// The replays page links every job's DLQ.
	_, replays := get(t, base, "/replays")
	followLinks(t, seen, base, "/replays", replays)
}
