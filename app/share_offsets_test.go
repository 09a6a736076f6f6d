package app

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
)

// TestServeShareGroupResets plans and applies a share group's reset
// through serve's API, beside the consumer groups' resets of the same
// cluster: the plan is a share group's, a consumer group's plan of the
// same cluster still works, and the apply is audited and counted.
func TestServeShareGroupResets(t *testing.T) {
	c := seededCluster(t, testenv.FreePorts(t, 1), t.TempDir())
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	at := kadm.Offsets{}
	at.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 6})
	at.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 9})
	if resp, err := adm.AlterShareGroupOffsets(context.Background(), "workers", at); err != nil || resp.Error() != nil {
		t.Fatal(err, resp.Error())
	}
	cfg := testConfig(t, config.Kafka{Name: "prod", Brokers: c.ListenAddrs()})
	r := start(t, cfg)
	eventually(t, "readyz", func() bool { code, _ := r.get(t, "/readyz"); return code == 200 })

	var plan offsets.Plan
	post(t, r.base+"/api/v1/kafka/share-groups/prod/workers/offsets/plan", `{"to":"latest"}`, http.StatusOK, &plan)
	if plan.Kind != offsets.KindShare || plan.Totals.Skip != 5 || plan.ApplyRefused != "" {
		t.Fatalf("plan: kind %q skip %d (want 4+1), refused %q", plan.Kind, plan.Totals.Skip, plan.ApplyRefused)
	}
	var consumer offsets.Plan
	post(t, r.base+"/api/v1/groups/prod/billing/offsets/plan", `{"to":"earliest","topics":["orders"]}`, http.StatusOK, &consumer)
	if consumer.Kind != "" || consumer.Totals.Reprocess != 14 {
		t.Errorf("consumer group plan beside share resets: %+v", consumer)
	}
	var rec offsets.Receipt
	post(t, r.base+"/api/v1/kafka/share-groups/prod/workers/offsets/apply", `{"plan_id":"`+plan.ID+`"}`, http.StatusOK, &rec)
	if rec.Result != offsets.ResultOK || len(rec.Partitions) != 2 {
		t.Fatalf("receipt %+v", rec)
	}
	starts, err := adm.DescribeShareGroupOffsets(context.Background(), "workers")
	if err != nil || starts["workers"].Offsets["orders"][0].StartOffset != 10 || starts["workers"].Offsets["orders"][1].StartOffset != 10 {
		t.Errorf("start offsets after apply: %+v %v", starts, err)
	}
	_, metrics := r.get(t, "/metrics")
	if want := `queuewatch_offset_resets_total{cluster="prod",group="workers",result="ok"} 1`; !strings.Contains(metrics, want) {
		t.Errorf("/metrics lacks %s", want)
	}
	logged, err := OffsetResets(context.Background(), cfg, "prod", "workers", 10)
	if err != nil || len(logged) != 1 || logged[0].Result != "ok" || !strings.Contains(string(logged[0].Entry), `"kind":"share"`) {
		t.Errorf("audit store in data_dir: %+v %v", logged, err)
	}
}
