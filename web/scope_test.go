package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/audit"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
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

func (fakeResets) Resets(_ context.Context, cluster, group string, _ int) ([]audit.OffsetReset, error) {
	var out []audit.OffsetReset
	for _, g := range []string{"team-a-billing", "team-b-billing"} {
		if group == "" || group == g {
			out = append(out, audit.OffsetReset{ID: 1, At: time.Now(), Who: "someone", Broker: "kafka", Cluster: "prod", Group: g, PlanID: "p-" + g, Result: "ok", Entry: json.RawMessage(`{}`)})
		}
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
			DLQs:    []string{`rabbitmq:main:/:team-` + x + `\..*`},
			Readers: []string{`kafka:prod::team-` + x + `-.*`},
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
	kafka := &queue.Snapshot{Broker: queue.Kafka, Cluster: "prod", Time: now, Groups: []queue.ConsumerGroup{
		{Cluster: "prod", Name: "team-a-billing", State: "Stable", Partitions: []queue.PartitionLag{{Topic: "a-orders", Partition: 0, Lag: 3}}},
		{Cluster: "prod", Name: "team-b-billing", State: "Stable", Partitions: []queue.PartitionLag{{Topic: "b-orders", Partition: 0, Lag: 9}}},
	}}
	rabbit := &queue.Snapshot{Broker: queue.RabbitMQ, Cluster: "main", Time: now, DLQs: []queue.DLQ{
		{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "team-a.orders.dlq", Sources: []string{"team-a.orders"}, Messages: 2},
		{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "team-b.orders.dlq", Sources: []string{"team-b.orders"}, Messages: 5},
	}}
	f := newFakeDLQ()
	f.add(dlqreplay.Receipt{Job: dlqreplay.Job{ID: "job-a", DLQ: dlqA, Action: dlqreplay.ActionReplay, Who: "ana", State: dlqreplay.StateSucceeded, Created: now}})
	f.add(dlqreplay.Receipt{Job: dlqreplay.Job{ID: "job-b", DLQ: dlqB, Action: dlqreplay.ActionReplay, Who: "ben", State: dlqreplay.StateRunning, Created: now}})
	f.archived = []dlqreplay.Archived{
		{ID: 1, DLQ: dlqA, MessageID: "arch-a", JobID: "job-a", ArchivedAt: now, Body: []byte(`{"team":"a"}`)},
		{ID: 2, DLQ: dlqB, MessageID: "arch-b", JobID: "job-b", ArchivedAt: now, Body: []byte(`{"team":"b"}`)},
	}
	s := New(Options{
		Metrics: http.NotFoundHandler(), DLQs: f, Auth: cfg.Auth, Offsets: fakeResets{},
		Monitor: historyMonitor{staticMonitor{ready: true, snaps: []*queue.Snapshot{kafka, rabbit}, statuses: []queue.SourceStatus{
			{Broker: queue.Kafka, Cluster: "prod", Up: true, Polled: true, LastPoll: now},
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
	for _, target := range []string{"/", "/?tab=dlqs", "/api/v1/groups", "/api/v1/dlqs", "/api/v1/audit", "/api/v1/archive", "/replays"} {
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
		{"/api/v1/dlqs", "team-a.orders.dlq"},
		{"/api/v1/audit", "job-a"},
		{"/api/v1/archive", "arch-a"},
		{"/replays", "p-team-a-billing"},
	} {
		if _, body := get(want.target); !strings.Contains(body, want.what) {
			t.Errorf("GET %s lacks team A's %s", want.target, want.what)
		}
	}

	// Pages and reads by crafted URLs: team A's open, team B's answer 403 (or 404 where the object is simply not there for her).
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
			if code != http.StatusOK || !strings.Contains(body, "may not read DLQ") || strings.Contains(body, "c-receipt") && strings.Contains(body, "job-b") && !strings.Contains(body, "No receipt for job job-b") {
				t.Errorf("team B's receipt on the replays page: %d", code)
			}
			continue
		}
		if code != http.StatusForbidden || !strings.Contains(body, "ana may not read") {
			t.Errorf("team B's GET %s = %d %s", target, code, body)
		}
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
		if rec := ana.do(tc.method, tc.target, tc.body); rec.Code != http.StatusForbidden {
			t.Errorf("%s %s = %d %s", tc.method, tc.target, rec.Code, rec.Body)
		}
	}
	if rec := ana.do(http.MethodPost, "/api/v1/groups/prod/team-a-billing/offsets/plan", `{"to":"latest"}`); rec.Code == http.StatusForbidden {
		t.Errorf("team A's reset plan = 403 %s", rec.Body)
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
	if rec := vic.do(http.MethodGet, "/api/v1/dlqs", ""); !strings.Contains(rec.Body.String(), "team-b.orders.dlq") {
		t.Error("vic, a viewer everywhere, does not see team B's DLQ")
	}

	// A token is scoped the same way: team B's bot sees team B's only.
	bot := newClient(t, s, bearerTok("team-b-bot-token"))
	if rec := bot.do(http.MethodGet, "/api/v1/dlqs", ""); !strings.Contains(rec.Body.String(), "team-b.orders.dlq") || strings.Contains(rec.Body.String(), "team-a") {
		t.Errorf("team B's token lists %s", rec.Body)
	}
	if rec := bot.do(http.MethodPost, "/api/v1/dlqs/"+url.PathEscape(dlqA)+"/replay", replay); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "team-b-bot may not read DLQ") {
		t.Errorf("team B's token replaying team A's DLQ = %d %s", rec.Code, rec.Body)
	}
}
