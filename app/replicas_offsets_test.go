package app

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/store"
)

// TestReplicasShareResetPlansAndPauses runs two replicas on one PostgreSQL
// audit store, as the Helm chart does behind a Service without session
// affinity: a plan reviewed through one replica applies through the other
// (the group's committed offsets move), is spent there, and an unknown or
// expired plan_id is answered as such by the other; a JetStream consumer
// paused through one replica shows paused on the other's page before any
// poll has seen it, and a resume through the other shows on the first.
func TestReplicasShareResetPlansAndPauses(t *testing.T) {
	c := seededCluster(t, testenv.FreePorts(t, 1), t.TempDir())
	defer c.Close()
	js := shardedNATS(t, 1)[0] // n0: stream ORDERS, consumer worker
	dsn := testenv.Postgres(t).DSN
	newConfig := func() *config.Config {
		cfg := testConfig(t, config.Kafka{Name: "prod", Brokers: c.ListenAddrs()})
		cfg.NATS = []config.NATS{js}
		cfg.Audit.Driver, cfg.Audit.DSN = config.AuditPostgres, dsn
		// One poll at the start and none during the test: a pause can only
		// reach the other replica's page through the store.
		cfg.PollInterval, cfg.History = 10*time.Minute, time.Hour
		return cfg
	}
	a := start(t, newConfig())
	eventually(t, "replica a ready", func() bool { code, _ := a.get(t, "/readyz"); return code == 200 })
	b := start(t, newConfig())
	eventually(t, "replica b ready", func() bool { code, _ := b.get(t, "/readyz"); return code == 200 })

	// Plan through a, apply through b.
	var plan offsets.Plan
	post(t, a.base+"/api/v1/groups/prod/billing/offsets/plan", `{"to":"earliest","topics":["orders"]}`, http.StatusOK, &plan)
	if plan.Totals.Reprocess != 14 || plan.ApplyRefused != "" {
		t.Fatalf("plan: reprocess %d (want 4+10), refused %q", plan.Totals.Reprocess, plan.ApplyRefused)
	}
	apply := `{"plan_id":"` + plan.ID + `"}`
	if code, body := b.send(t, "/api/v1/groups/prod/mailer/offsets/apply", apply); code != http.StatusNotFound {
		t.Errorf("billing's plan applied through b as mailer's: %d %s", code, body)
	}
	var rec offsets.Receipt
	post(t, b.base+"/api/v1/groups/prod/billing/offsets/apply", apply, http.StatusOK, &rec)
	if rec.Result != offsets.ResultOK || len(rec.Partitions) != 2 {
		t.Fatalf("receipt %+v", rec)
	}
	if got := committed(t, c.ListenAddrs(), "billing"); got != "orders[0]=0 orders[1]=0" {
		t.Fatalf("committed after the apply through b: %s, want both partitions at 0", got)
	}
	// Spent: neither replica applies it again.
	for name, r := range map[string]*running{"a": a, "b": b} {
		if code, body := r.send(t, "/api/v1/groups/prod/billing/offsets/apply", apply); code != http.StatusNotFound || !strings.Contains(body, "re-plan") {
			t.Errorf("the applied plan again through %s: %d %s", name, code, body)
		}
	}
	if code, body := b.send(t, "/api/v1/groups/prod/billing/offsets/apply", `{"plan_id":"0123456789abcdef01234567"}`); code != http.StatusNotFound {
		t.Errorf("an unknown plan_id through b: %d %s", code, body)
	}

	// A plan made through a 15 minutes ago has expired through b.
	post(t, a.base+"/api/v1/groups/prod/billing/offsets/plan", `{"to":"latest","topics":["orders"]}`, http.StatusOK, &plan)
	age(t, dsn, plan.ID, offsets.PlanTTL+time.Second)
	apply = `{"plan_id":"` + plan.ID + `"}`
	if code, body := b.send(t, "/api/v1/groups/prod/billing/offsets/apply", apply); code != http.StatusGone || !strings.Contains(body, "expired") {
		t.Errorf("an expired plan through b: %d %s", code, body)
	}
	if got := committed(t, c.ListenAddrs(), "billing"); got != "orders[0]=0 orders[1]=0" {
		t.Errorf("an expired plan committed: %s", got)
	}

	// Pause through a: b's page shows it, though b's snapshot (polled
	// before it) does not.
	page := "/nats/n0/streams/ORDERS/consumers/worker"
	if _, body := b.get(t, page); strings.Contains(body, `id="pause-until"`) {
		t.Fatal("worker shows paused before any pause")
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	var st offsets.PauseState
	post(t, a.base+"/api/v1/nats/consumers/n0/ORDERS/worker/pause", `{"pause_until":"`+until.Format(time.RFC3339)+`"}`, http.StatusOK, &st)
	if !st.Paused || !st.Until.Equal(until) {
		t.Fatalf("pause through a: %+v", st)
	}
	if _, body := b.get(t, page); !strings.Contains(body, `id="pause-until"`) || !strings.Contains(body, until.Format(time.RFC3339)) {
		t.Error("b's page of worker does not show the pause made through a")
	}
	if _, body := b.get(t, "/api/v1/nats/consumers/n0/ORDERS/worker/offsets/resets"); !strings.Contains(body, `"result":"paused"`) {
		t.Errorf("b's log of worker lacks the pause made through a: %s", body)
	}
	// Resume through b: a's page shows it resumed.
	post(t, b.base+"/api/v1/nats/consumers/n0/ORDERS/worker/resume", ``, http.StatusOK, &st)
	if _, body := a.get(t, page); strings.Contains(body, `id="pause-until"`) {
		t.Error("a's page of worker still shows the pause after the resume through b")
	}
}

// send POSTs body to r's path and returns the answer's status and body.
func (r *running) send(t *testing.T, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(r.base+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// age makes the plan id kept in the PostgreSQL store at dsn as old as by:
// it is kept again with its creation that long ago.
func age(t *testing.T, dsn, id string, by time.Duration) {
	t.Helper()
	ctx := context.Background()
	auditStore, err := store.OpenPostgres(ctx, dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = auditStore.Close() }()
	kept, err := auditStore.OffsetPlan(ctx, id, "prod", "billing", time.Now(), offsets.PlanTTL)
	if err != nil {
		t.Fatalf("plan %s is not in the shared store: %v", id, err)
	}
	kept.Created = time.Now().Add(-by)
	if err := auditStore.PutOffsetPlan(ctx, kept, offsets.PlanTTL, offsets.MaxPlans); err != nil {
		t.Fatal(err)
	}
}
