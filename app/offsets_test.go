package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/store"
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

// TestOffsetApplyLeaseAcrossProcesses: serve and a second process (the
// CLI, here its audit Store opened on the same data_dir) apply resets of
// one group one at a time: while the other holds the group's lease, serve
// refuses the apply with 409, commits nothing and records the refusal;
// once released, the same plan applies.
func TestOffsetApplyLeaseAcrossProcesses(t *testing.T) {
	c := seededCluster(t, testenv.FreePorts(t, 1), t.TempDir())
	defer c.Close()
	cfg := testConfig(t, config.Kafka{Name: "prod", Brokers: c.ListenAddrs()})
	r := start(t, cfg)
	eventually(t, "readyz", func() bool { code, _ := r.get(t, "/readyz"); return code == 200 })
	ctx := context.Background()
	cli, err := store.Open(ctx, cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cli.Close() }()
	if err := cli.LeaseOffsetReset(ctx, "prod", "billing", "cli on host-b", time.Now(), time.Minute); err != nil {
		t.Fatal(err)
	}

	var plan offsets.Plan
	post(t, r.base+"/api/v1/groups/prod/billing/offsets/plan", `{"to":"earliest","topics":["orders"]}`, http.StatusOK, &plan)
	var refused struct{ Error string }
	post(t, r.base+"/api/v1/groups/prod/billing/offsets/apply", `{"plan_id":"`+plan.ID+`"}`, http.StatusConflict, &refused)
	if !strings.Contains(refused.Error, "cli on host-b") {
		t.Errorf("409 message %q does not name the holder", refused.Error)
	}
	if got := committed(t, c.ListenAddrs(), "billing"); got != "orders[0]=4 orders[1]=10" {
		t.Errorf("committed while the other process held the lease: %s", got)
	}
	logged, err := cli.OffsetResets(ctx, "prod", "billing", 10)
	if err != nil || len(logged) != 1 || logged[0].Result != string(offsets.ResultRefused) || !strings.Contains(string(logged[0].Entry), "under way") {
		t.Fatalf("audit after the refusal: %+v %v", logged, err)
	}

	if err := cli.ReleaseOffsetReset(ctx, "prod", "billing", "cli on host-b"); err != nil {
		t.Fatal(err)
	}
	var rec offsets.Receipt
	post(t, r.base+"/api/v1/groups/prod/billing/offsets/apply", `{"plan_id":"`+plan.ID+`"}`, http.StatusOK, &rec)
	if rec.Result != offsets.ResultOK {
		t.Fatalf("receipt after the release %+v", rec)
	}
	if got := committed(t, c.ListenAddrs(), "billing"); got != "orders[0]=0 orders[1]=0" {
		t.Errorf("committed after the release: %s", got)
	}
	// serve released its own lease: the CLI can take the group now.
	if err := cli.LeaseOffsetReset(ctx, "prod", "billing", "cli on host-b", time.Now(), time.Minute); err != nil {
		t.Errorf("serve kept its lease after the apply: %v", err)
	}
}

// committed is the group's commits as "topic[p]=offset …".
func committed(t *testing.T, brokers []string, group string) string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got, err := kadm.NewClient(cl).FetchOffsets(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range got.Sorted() {
		out = append(out, fmt.Sprintf("%s[%d]=%d", o.Topic, o.Partition, o.At))
	}
	return strings.Join(out, " ")
}
