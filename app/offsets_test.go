package app

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
)

// TestServeOffsetResets plans and applies a reset through serve's API: the
// apply is recorded in data_dir's audit store (the one replays use) and
// counted on /metrics.
func TestServeOffsetResets(t *testing.T) {
	c := seededCluster(t, testenv.FreePorts(t, 1), t.TempDir())
	defer c.Close()
	cfg := testConfig(t, config.Kafka{Name: "prod", Brokers: c.ListenAddrs()})
	r := start(t, cfg)
	eventually(t, "readyz", func() bool { code, _ := r.get(t, "/readyz"); return code == 200 })

	var plan offsets.Plan
	post(t, r.base+"/api/v1/groups/prod/billing/offsets/plan", `{"to":"earliest","topics":["orders"]}`, http.StatusOK, &plan)
	if plan.Totals.Reprocess != 14 || plan.ApplyRefused != "" {
		t.Fatalf("plan: reprocess %d (want 4+10), refused %q", plan.Totals.Reprocess, plan.ApplyRefused)
	}
	var rec offsets.Receipt
	post(t, r.base+"/api/v1/groups/prod/billing/offsets/apply", `{"plan_id":"`+plan.ID+`"}`, http.StatusOK, &rec)
	if rec.Result != offsets.ResultOK || len(rec.Partitions) != 2 {
		t.Fatalf("receipt %+v", rec)
	}

	_, metrics := r.get(t, "/metrics")
	if want := `queuewatch_offset_resets_total{cluster="prod",group="billing",result="ok"} 1`; !strings.Contains(metrics, want) {
		t.Errorf("/metrics lacks %s", want)
	}
	logged, err := OffsetResets(context.Background(), cfg, "prod", "billing", 10)
	if err != nil || len(logged) != 1 || logged[0].PlanID != plan.ID || logged[0].Result != "ok" || logged[0].Who != "anonymous" {
		t.Errorf("audit store in data_dir: %+v %v", logged, err)
	}
	var list struct{ Resets []json.RawMessage }
	if code, body := r.get(t, "/api/v1/groups/prod/billing/offsets/resets"); code != 200 || json.Unmarshal([]byte(body), &list) != nil || len(list.Resets) != 1 {
		t.Errorf("resets: %d %s", code, body)
	}
}

func post(t *testing.T, url, body string, status int, v any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("POST %s: %d, want %d", url, resp.StatusCode, status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
