package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
	"github.com/queuewatch/queuewatch/web/api"
	"github.com/queuewatch/queuewatch/web/auth"
)

// Two teams share one queuewatch: team A's and team B's consumer groups
// on one Kafka cluster, their DLQs on one RabbitMQ cluster.
var (
	dlqA = dlqreplay.Ref{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "team-a.orders.dlq"}.ID()
	dlqB = dlqreplay.Ref{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "team-b.orders.dlq"}.ID()
)

// fakeResets is an OffsetResets that refuses every plan (the scope check
// comes first; what it refuses with does not matter) and lists a reset of
// each team's group.
type fakeResets struct{}

var errFakePlan = errors.New("fake: no plans here")

func (fakeResets) Plan(context.Context, string, offsets.Request) (offsets.Plan, error) {
	return offsets.Plan{}, errFakePlan
}

func (fakeResets) Apply(context.Context, offsets.Plan, string) (offsets.Receipt, error) {
	return offsets.Receipt{}, errFakePlan
}

func (fakeResets) KeepPlan(context.Context, offsets.Plan) error { return errFakePlan }

func (fakeResets) IssuedPlan(context.Context, string, string, string) (offsets.Plan, error) {
	return offsets.Plan{}, offsets.ErrUnknownPlan
}

func (fakeResets) DropPlan(context.Context, string) error { return nil }

// Resets filters as the store does: by group and Visible, before any limit.
func (fakeResets) Resets(_ context.Context, q store.ResetQuery) ([]store.OffsetReset, error) {
	group := q.Group
	var out []store.OffsetReset
	for _, g := range []string{"team-a-billing", "team-b-billing"} {
		if group == "" || group == g {
			out = append(out, store.OffsetReset{ID: 1, At: time.Now(), Who: "someone", Broker: "kafka", Cluster: "prod", Group: g, PlanID: "p-" + g, Result: "ok", Entry: json.RawMessage(`{}`)})
		}
	}
	if group == "" {
		for _, c := range []string{"team-a-shipper", "team-b-shipper"} {
			out = append(out, store.OffsetReset{ID: 2, At: time.Now(), Who: "pat", Broker: "nats", Cluster: "nm", Group: "ORDERS/" + c, Result: "paused", Entry: json.RawMessage(`{"action":"pause"}`)})
		}
	}
	if q.Visible != nil {
		out = slices.DeleteFunc(out, func(r store.OffsetReset) bool { return !q.Visible(r.Broker, r.Cluster, r.Group) })
	}
	return out, nil
}

func scopedServer(t *testing.T) (*Server, *fakeDLQ) {
	t.Helper()
	hash := func(pw string) string {
		h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		return string(h)
	}
	team := func(x string) config.Grant {
		return config.Grant{Role: config.RoleOperator, Scope: &config.Scope{
			DLQs: []string{`rabbitmq:main:/:team-` + x + `\..*`, `kafka:prod::team-` + x + `-.*`},
			Readers: []string{
				`kafka:prod::team-` + x + `-.*`, `kafka:prod:main:team-` + x + `-.*`, `nats:nm:ORDERS:team-` + x + `-.*`, `sqs:aws::team-` + x + `-.*`,
				`rabbitmq:main:/:team-` + x + `\..*`, `outbox:ob::team-` + x + `-.*`,
			},
		}}
	}
	cfg := config.Default()
	cfg.Auth.Mode = config.AuthBasic
	cfg.Auth.Users = []config.User{
		{Name: "ana", PasswordHash: hash("a"), Grants: []config.Grant{team("a")}},
		{Name: "ben", PasswordHash: hash("b"), Grants: []config.Grant{team("b")}},
		// Grants add up: a viewer of everything who operates team A's.
		{Name: "vic", PasswordHash: hash("v"), Role: config.RoleViewer, Grants: []config.Grant{team("a")}},
	}
	sum := sha256.Sum256([]byte("team-b-bot-token"))
	cfg.Auth.Tokens = []config.Token{{Name: "team-b-bot", TokenHash: "sha256:" + hex.EncodeToString(sum[:]), Grants: []config.Grant{team("b")}}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	partialErrs := []string{"describe group team-b-ledger: GROUP_AUTHORIZATION_FAILED"}
	kafka := &queue.Snapshot{Broker: queue.Kafka, Cluster: "prod", Time: now, Partial: partialErrs, Groups: []queue.ConsumerGroup{
		{Cluster: "prod", Name: "team-a-billing", State: "Stable", Partitions: []queue.PartitionLag{{Topic: "a-orders", Partition: 0, Lag: 3}, {Topic: "shared-events"}}},
		{Cluster: "prod", Name: "team-b-billing", State: "Stable", Partitions: []queue.PartitionLag{{Topic: "b-orders", Partition: 0, Lag: 9}, {Topic: "shared-events"}}},
	}, DLQs: []queue.DLQ{
		// Both teams read shared-events, and each dead-letters its
		// failures of it into a DLQ of its own.
		{Broker: queue.Kafka, Cluster: "prod", Name: "team-a-shared.DLT", Sources: []string{"shared-events"}, Messages: 1},
		{Broker: queue.Kafka, Cluster: "prod", Name: "team-b-shared.DLT", Sources: []string{"shared-events"}, Messages: 4},
	}, ShareGroups: []queue.ShareGroup{
		{Cluster: "prod", Name: "team-a-share", State: "Stable", Partitions: []queue.SharePartition{{Topic: "a-orders", Partition: 0}}},
		{Cluster: "prod", Name: "team-b-share", State: "Stable", Partitions: []queue.SharePartition{{Topic: "b-orders", Partition: 0}}},
	}, Connectors: []queue.Connector{
		{Cluster: "prod", Connect: "main", Name: "team-a-sink", Type: "sink", State: queue.ConnectRunning},
		{Cluster: "prod", Connect: "main", Name: "team-b-sink", Type: "sink", State: queue.ConnectFailed, Trace: "team B's secret trace"},
	}}
	nats := &queue.Snapshot{
		Broker: queue.NATS, Cluster: "nm", Time: now,
		Streams: []queue.Stream{{Cluster: "nm", Name: "ORDERS"}},
		Consumers: []queue.StreamConsumer{
			{Cluster: "nm", Stream: "ORDERS", Name: "team-a-shipper"},
			{Cluster: "nm", Stream: "ORDERS", Name: "team-b-shipper"},
		},
	}
	sqs := &queue.Snapshot{Broker: queue.SQS, Cluster: "aws", Time: now, SQSQueues: []queue.SQSQueue{
		{Cluster: "aws", Name: "team-a-q"}, {Cluster: "aws", Name: "team-b-q"},
	}}
	outbox := &queue.Snapshot{
		Broker: queue.Outbox, Cluster: "ob", Time: now,
		OutboxTables: []queue.OutboxTable{{Source: "ob", Table: "team-a-outbox"}, {Source: "ob", Table: "team-b-outbox"}},
		Slots:        []queue.ReplicationSlot{{Source: "ob", Slot: "team-a-slot"}, {Source: "ob", Slot: "team-b-slot"}},
	}
	rabbit := &queue.Snapshot{Broker: queue.RabbitMQ, Cluster: "main", Time: now, Queues: []queue.Queue{
		{Cluster: "main", VHost: "/", Name: "team-a.orders"}, {Cluster: "main", VHost: "/", Name: "team-b.orders"},
	}, DLQs: []queue.DLQ{
		{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "team-a.orders.dlq", Sources: []string{"team-a.orders"}, Messages: 2},
		{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "team-b.orders.dlq", Sources: []string{"team-b.orders"}, Messages: 5},
	}}
	f := newFakeDLQ()
	f.clusters = []string{"prod"}
	f.add(dlqreplay.Receipt{Job: dlqreplay.Job{ID: "job-a", DLQ: dlqA, Action: dlqreplay.ActionReplay, Who: "ana", State: dlqreplay.StateSucceeded, Created: now}})
	f.add(dlqreplay.Receipt{Job: dlqreplay.Job{ID: "job-b", DLQ: dlqB, Action: dlqreplay.ActionReplay, Who: "ben", State: dlqreplay.StateRunning, Created: now}})
	f.archived = []dlqreplay.Archived{
		{ID: 1, DLQ: dlqA, MessageID: "arch-a", JobID: "job-a", ArchivedAt: now, Body: []byte(`{"team":"a"}`)},
		{ID: 2, DLQ: dlqB, MessageID: "arch-b", JobID: "job-b", ArchivedAt: now, Body: []byte(`{"team":"b"}`)},
	}
	s := New(Options{
		Metrics: http.NotFoundHandler(), DLQs: f, Auth: cfg.Auth, Offsets: fakeResets{},
		Monitor: historyMonitor{staticMonitor{ready: true, snaps: []*queue.Snapshot{kafka, rabbit, nats, sqs, outbox}, statuses: []queue.SourceStatus{
			{Broker: queue.Kafka, Cluster: "prod", Up: true, Polled: true, LastPoll: now, Partial: partialErrs},
			{Broker: queue.RabbitMQ, Cluster: "main", Up: true, Polled: true, LastPoll: now},
		}}},
	})
	return s, f
}

// TestScopesOnEverySurface: a user of team A sees and acts on team A's
// groups and DLQs only — lists, pages, the API, crafted URLs, replays,
// resets, jobs, the archive and the audit — and gets 403 with the reason
// for team B's; grants add up.
func TestScopesOnEverySurface(t *testing.T) {
	s, f := scopedServer(t)
	ana := newClient(t, s, basic("ana", "a"))
	get := func(target string) (int, string) {
		rec := ana.do(http.MethodGet, target, "")
		return rec.Code, rec.Body.String()
	}

	// Lists: the overview, the API lists, the replays page.
	for _, target := range []string{"/", "/?tab=dlqs", "/api/v1/groups", "/api/v1/dlqs", "/api/v1/sources", "/api/v1/audit", "/api/v1/archive", "/replays"} {
		code, body := get(target)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", target, code, body)
		}
		if strings.Contains(body, "team-b") || strings.Contains(body, "job-b") || strings.Contains(body, "arch-b") {
			t.Errorf("GET %s shows team B's objects", target)
		}
	}
	for _, want := range []struct{ target, what string }{
		{"/api/v1/groups", "team-a-billing"},
		{"/api/v1/sources", "1 part(s) of this source could not be read"},
		{"/api/v1/dlqs", "team-a.orders.dlq"},
		{"/api/v1/audit", "job-a"},
		{"/api/v1/archive", "arch-a"},
		{"/replays", "p-team-a-billing"},
	} {
		if _, body := get(want.target); !strings.Contains(body, want.what) {
			t.Errorf("GET %s lacks team A's %s", want.target, want.what)
		}
	}

	// Pages and reads by crafted URLs: team A's open; team B's answer 404,
	// as if they were not there, and name nothing of team B's.
	for _, target := range []string{
		"/kafka/prod/groups/team-a-billing", "/api/v1/groups/prod/team-a-billing", "/dlq/" + url.PathEscape(dlqA),
		"/api/v1/dlqs/" + url.PathEscape(dlqA) + "/messages", "/api/v1/replays/job-a",
	} {
		if code, body := get(target); code != http.StatusOK {
			t.Errorf("team A's GET %s = %d %s", target, code, body)
		}
	}
	for _, target := range []string{
		"/dlq/" + url.PathEscape(dlqB),
		"/api/v1/dlqs/" + url.PathEscape(dlqB) + "/messages",
		"/api/v1/dlqs/" + url.PathEscape(dlqB) + "/messages/m-1",
		"/api/v1/dlqs/" + url.PathEscape(dlqB) + "/messages/m-1/body",
		"/api/v1/replays/job-b",
		"/api/v1/groups/prod/team-b-billing/offsets/resets",
		"/replays?job=job-b",
	} {
		code, body := get(target)
		if target == "/replays?job=job-b" {
			if code != http.StatusOK || !strings.Contains(body, "No receipt for job job-b: job job-b: job not found") || strings.Contains(body, "team-b") {
				t.Errorf("team B's receipt on the replays page: %d", code)
			}
			continue
		}
		if code != http.StatusNotFound || strings.Contains(body, "team-b") {
			t.Errorf("team B's GET %s = %d %s, want a 404 that names nothing", target, code, body)
		}
	}
	_, other := get("/api/v1/replays/job-b")
	_, missing := get("/api/v1/replays/job-nope")
	if strings.ReplaceAll(other, "job-b", "X") != strings.ReplaceAll(missing, "job-nope", "X") {
		t.Errorf("team B's job answers %s, a missing job %s: the refusal tells them apart", other, missing)
	}
	for _, target := range []string{"/kafka/prod/groups/team-b-billing", "/api/v1/groups/prod/team-b-billing"} {
		if code, _ := get(target); code != http.StatusNotFound {
			t.Errorf("team B's group %s = %d, want 404: it is not there for her", target, code)
		}
	}

	// Actions.
	replay := `{"action":"replay","dry_run":true,"selection":{"all":true}}`
	if rec := ana.do(http.MethodPost, "/api/v1/dlqs/"+url.PathEscape(dlqA)+"/replay", replay); rec.Code != http.StatusOK {
		t.Errorf("team A's replay = %d %s", rec.Code, rec.Body)
	}
	for _, tc := range []struct{ method, target, body string }{
		{http.MethodPost, "/api/v1/dlqs/" + url.PathEscape(dlqB) + "/replay", replay},
		{http.MethodPost, "/api/v1/dlqs/" + url.PathEscape(dlqA) + "/replay", `{"action":"move","target":{"kind":"queue","name":"team-b.orders"},"selection":{"all":true}}`},
		{http.MethodPost, "/api/v1/dlqs/" + url.PathEscape(dlqA) + "/replay", `{"action":"move","target":{"name":"team-b.orders"},"selection":{"all":true}}`},
		{http.MethodPost, "/api/v1/dlqs/" + url.PathEscape(dlqA) + "/replay", `{"action":"replay","mode":"native","selection":{"all":true}}`},
		{http.MethodDelete, "/api/v1/replays/job-b", ""},
		{http.MethodPost, "/api/v1/groups/prod/team-b-billing/offsets/plan", `{"to":"latest"}`},
		{http.MethodPost, "/api/v1/archive/restore", `{"archive_ids":[1],"target":"` + dlqA + `"}`}, // admin only
	} {
		// 403 for what she sees (her DLQ, a target she named), 404 for
		// what she does not.
		if rec := ana.do(tc.method, tc.target, tc.body); rec.Code != http.StatusForbidden && rec.Code != http.StatusNotFound {
			t.Errorf("%s %s = %d %s", tc.method, tc.target, rec.Code, rec.Body)
		} else if rec.Code == http.StatusNotFound && strings.Contains(rec.Body.String(), "team-b") {
			t.Errorf("%s %s: the 404 names team B's object: %s", tc.method, tc.target, rec.Body)
		}
	}
	if rec := ana.do(http.MethodPost, "/api/v1/groups/prod/team-a-billing/offsets/plan", `{"to":"latest"}`); rec.Code == http.StatusForbidden {
		t.Errorf("team A's reset plan = 403 %s", rec.Body)
	}
	// What a plan names in its body is held to her scope too, and answers
	// as a name that is not there: a plan is no oracle of team B's names.
	plan := func(body string) (int, string) {
		rec := ana.do(http.MethodPost, "/api/v1/groups/prod/team-a-billing/offsets/plan", body)
		return rec.Code, strings.NewReplacer("team-b-billing", "X", "no-such-group", "X", "b-orders", "X", "no-such-topic", "X").Replace(rec.Body.String())
	}
	for _, pair := range [][2]string{
		{`{"to":"group:team-b-billing"}`, `{"to":"group:no-such-group"}`},
		{`{"to":"latest","topics":["b-orders"]}`, `{"to":"latest","topics":["no-such-topic"]}`},
	} {
		code, body := plan(pair[0])
		code2, body2 := plan(pair[1])
		if code != http.StatusBadRequest || code != code2 || body != body2 {
			t.Errorf("plan %s = %d %s; plan %s = %d %s: want one 400 for both", pair[0], code, body, pair[1], code2, body2)
		}
	}
	if code, body := plan(`{"to":"latest","topics":["a-orders"]}`); code == http.StatusBadRequest {
		t.Errorf("team A's plan on its own topic = %d %s", code, body)
	}
	if len(f.started) != 1 || f.started[0].DLQ != dlqA {
		t.Fatalf("jobs started: %+v", f.started)
	}
	// Team A's replay to the original queue goes where each message's
	// headers say: the job holds it to team A's destinations.
	may := f.started[0].MayRoute
	if may == nil || may("team-a.orders") != nil || may("/team-a.orders") != nil || may("team-b.orders") == nil || may("amq.topic/team-b.x") == nil {
		t.Error("the replay's destinations are not held to team A's grants")
	}

	// The buttons follow the scope.
	if _, body := get("/dlq/" + url.PathEscape(dlqA)); !strings.Contains(body, `data-action="replay"`) {
		t.Error("team A's DLQ page offers no replay")
	}
	vic := newClient(t, s, basic("vic", "v"))
	if rec := vic.do(http.MethodGet, "/dlq/"+url.PathEscape(dlqB), ""); rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `data-action="replay"`) {
		t.Errorf("vic (viewer everywhere) on team B's DLQ: %d, replay offered", rec.Code)
	}
	if rec := vic.do(http.MethodGet, "/dlq/"+url.PathEscape(dlqA), ""); !strings.Contains(rec.Body.String(), `data-action="replay"`) {
		t.Error("vic's team A grant adds replay on team A's DLQ")
	}
	if rec := vic.do(http.MethodPost, "/api/v1/dlqs/"+url.PathEscape(dlqB)+"/replay", replay); rec.Code != http.StatusForbidden {
		t.Errorf("vic replaying team B's DLQ = %d", rec.Code)
	}
	if rec := vic.do(http.MethodGet, "/api/v1/sources", ""); !strings.Contains(rec.Body.String(), "team-b-ledger") {
		t.Errorf("vic, a viewer everywhere, does not read which part failed: %s", rec.Body)
	}
	if rec := vic.do(http.MethodGet, "/api/v1/dlqs", ""); !strings.Contains(rec.Body.String(), "team-b.orders.dlq") {
		t.Error("vic, a viewer everywhere, does not see team B's DLQ")
	}

	// A token is scoped the same way: team B's bot sees team B's only.
	bot := newClient(t, s, bearerTok("team-b-bot-token"))
	if rec := bot.do(http.MethodGet, "/api/v1/dlqs", ""); !strings.Contains(rec.Body.String(), "team-b.orders.dlq") || strings.Contains(rec.Body.String(), "team-a") {
		t.Errorf("team B's token lists %s", rec.Body)
	}
	if rec := bot.do(http.MethodPost, "/api/v1/dlqs/"+url.PathEscape(dlqA)+"/replay", replay); rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "team-a") {
		t.Errorf("team B's token replaying team A's DLQ = %d %s", rec.Code, rec.Body)
	}
}

// TestScopedLinks: the links between a group and the DLQs of its topics
// go through the viewer's scope. Team A and team B both read
// shared-events and each dead-letters into a DLQ of its own: ana's group
// page links to team A's DLQ only, and team A's DLQ page names team A's
// group as a reader but never team B's; vic, a viewer everywhere, sees
// both readers.
func TestScopedLinks(t *testing.T) {
	s, _ := scopedServer(t)
	opts := s.opts
	opts.GrafanaURL = "https://grafana.example.com/"
	s = New(opts)
	ana, vic := newClient(t, s, basic("ana", "a")), newClient(t, s, basic("vic", "v"))
	dlqOfA := "/dlq/" + url.PathEscape(queue.DLQRef{Broker: queue.Kafka, Cluster: "prod", Name: "team-a-shared.DLT"}.ID())

	rec := ana.do(http.MethodGet, "/kafka/prod/groups/team-a-billing", "")
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `href="`+dlqOfA+`"`) {
		t.Errorf("ana's group page = %d, no link to team A's DLQ of shared-events", rec.Code)
	}
	if strings.Contains(body, "team-b") {
		t.Error("ana's group page names team B's DLQ of the topic both teams read")
	}
	if want := `https://grafana.example.com/d/queuewatch-consumer-lag?var-cluster=prod&amp;var-group=team-a-billing`; !strings.Contains(body, want) {
		t.Errorf("ana's group page has no Grafana link %s", want)
	}

	readers := `read by`
	rec = ana.do(http.MethodGet, dlqOfA, "")
	body = rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, readers) || !strings.Contains(body, `href="/kafka/prod/groups/team-a-billing"`) {
		t.Errorf("team A's DLQ page for ana = %d, does not link its reader team-a-billing", rec.Code)
	}
	if strings.Contains(body, "team-b") {
		t.Error("team A's DLQ page names team B's reader of shared-events to ana")
	}
	if want := `https://grafana.example.com/d/queuewatch-dlq?var-broker=kafka&amp;var-cluster=prod&amp;var-dlq=team-a-shared.DLT`; !strings.Contains(body, want) {
		t.Errorf("team A's DLQ page has no Grafana link %s", want)
	}

	body = vic.do(http.MethodGet, dlqOfA, "").Body.String()
	for _, g := range []string{"team-a-billing", "team-b-billing"} {
		if !strings.Contains(body, `href="/kafka/prod/groups/`+g+`"`) {
			t.Errorf("vic, a viewer everywhere, is not led from team A's DLQ to %s", g)
		}
	}
	body = vic.do(http.MethodGet, "/kafka/prod/groups/team-b-billing", "").Body.String()
	if !strings.Contains(body, "team-a-shared.DLT") || !strings.Contains(body, "team-b-shared.DLT") {
		t.Error("vic's page of team B's group does not list both DLQs of shared-events")
	}
}

// TestReaderScopeEscapesVHosts: team A's pattern for its queues in vhost
// "qwp" does not match team B's queue in a vhost named to look like it.
func TestReaderScopeEscapesVHosts(t *testing.T) {
	cfg := config.Default()
	cfg.Auth.Mode = config.AuthBasic
	g := config.Grant{Role: config.RoleViewer, Scope: &config.Scope{Readers: []string{`rabbitmq:rmq:qwp:team-a.*`}}}
	hash, err := bcrypt.GenerateFromPassword([]byte("a"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Auth.Users = []config.User{{Name: "ana", PasswordHash: string(hash), Grants: []config.Grant{g}}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p := auth.NewPrincipal("ana", auth.MethodBasic, cfg.Auth.Users[0].Grants)
	own := queue.Reader{Broker: queue.RabbitMQ, Cluster: "rmq", Scope: "qwp", Name: "team-a.orders"}
	evil := queue.Reader{Broker: queue.RabbitMQ, Cluster: "rmq", Scope: "qwp:team-a.evil", Name: "orders"}
	if !p.MayReader(config.RoleViewer, own) || p.MayReader(config.RoleViewer, evil) {
		t.Errorf("team A sees its queue: %v, team B's queue in vhost %q: %v", p.MayReader(config.RoleViewer, own), evil.Scope, p.MayReader(config.RoleViewer, evil))
	}
}

// TestAuditFeed: /api/v1/audit's events are one feed of every action —
// jobs, resets, pauses — that the viewer may read, filterable by who,
// object and action.
func TestAuditFeed(t *testing.T) {
	s, _ := scopedServer(t)
	type feed struct {
		Events []api.AuditEvent `json:"events"`
	}
	events := func(c *client, query string) []api.AuditEvent {
		rec := c.do(http.MethodGet, "/api/v1/audit"+query, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /api/v1/audit%s = %d %s", query, rec.Code, rec.Body)
		}
		return decode[feed](t, rec).Events
	}
	ana, vic := newClient(t, s, basic("ana", "a")), newClient(t, s, basic("vic", "v"))
	got := map[string]string{}
	for _, e := range events(ana, "") {
		got[e.Action+" "+e.Object] = e.Who
		if strings.Contains(e.Object, "team-b") {
			t.Errorf("ana's feed holds team B's %+v", e)
		}
	}
	for _, want := range []string{"replay " + dlqA, "reset kafka:prod::team-a-billing", "pause nats:nm:ORDERS:team-a-shipper"} {
		if _, ok := got[want]; !ok {
			t.Errorf("ana's feed lacks %q: %v", want, got)
		}
	}
	if all := events(vic, ""); len(all) != 7 {
		t.Errorf("vic, a viewer everywhere, reads %d events, want 7 (both teams and an older job): %+v", len(all), all)
	}
	for query, want := range map[string]int{
		"?action=pause": 2, "?who=ben": 1, "?object=team-b": 3, "?dlq=" + url.QueryEscape(dlqA): 1, "?action=pause&object=team-a": 1, "?limit=2": 2,
	} {
		if n := len(events(vic, query)); n != want {
			t.Errorf("vic's feed %s: %d events, want %d", query, n, want)
		}
	}
}
