package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
	offsetskafka "github.com/queuewatch/queuewatch/offsets/kafka"
	"github.com/queuewatch/queuewatch/store"
)

// kindResets is kafkaResets with the cluster's share-group resets beside
// its consumer-group ones, picked by kind as app's reset service does.
type kindResets struct {
	*kafkaResets
	share *offsetskafka.ShareResets
}

func (k *kindResets) broker(kind string) offsets.Broker {
	if kind == offsets.KindShare {
		return k.share
	}
	return k.b
}

func (k *kindResets) Plan(ctx context.Context, cluster string, req offsets.Request) (offsets.Plan, error) {
	if cluster != k.b.Cluster() {
		return offsets.Plan{}, offsets.ErrScope
	}
	return offsets.MakePlan(ctx, k.broker(req.Kind), req, time.Now())
}

func (k *kindResets) Apply(ctx context.Context, plan offsets.Plan, who string) (offsets.Receipt, error) {
	return offsets.Apply(ctx, k.broker(plan.Kind), plan, offsets.ApplyOptions{Who: who, Audit: k.kafkaResets, Metrics: k.metrics})
}

// shareResetEnv is resetEnv with share group workers at start offsets 3
// and 8 on orders, and a server whose resets cover share groups too.
type shareResetEnv struct {
	*resetEnv
	resets *kindResets
}

func newShareResetEnv(t *testing.T) *shareResetEnv {
	t.Helper()
	e := newResetEnv(t)
	share, err := offsetskafka.NewShare(testenv.KafkaCluster(t, "prod", e.c.ListenAddrs()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(share.Close)
	se := &shareResetEnv{resetEnv: e, resets: &kindResets{kafkaResets: e.resets, share: share}}
	at := kadm.Offsets{}
	at.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 3})
	at.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 8})
	if resp, err := e.adm.AlterShareGroupOffsets(context.Background(), "workers", at); err != nil || resp.Error() != nil {
		t.Fatal(err, resp.Error())
	}
	e.s = New(Options{Monitor: testServer(true).opts.Monitor, Auth: authConfig(t, config.AuthBasic), Offsets: se.resets})
	return se
}

// starts is workers' start offsets on orders 0 and 1.
func (e *shareResetEnv) starts() [2]int64 {
	e.t.Helper()
	resp, err := e.adm.DescribeShareGroupOffsets(context.Background(), "workers")
	if err != nil {
		e.t.Fatal(err)
	}
	os := resp["workers"].Offsets["orders"]
	return [2]int64{os[0].StartOffset, os[1].StartOffset}
}

// TestShareOffsetsAPI plans and applies a share group's reset under its own
// URLs: the plan is a share group's, its ID does not apply as a consumer
// group's, the apply moves the start offsets, is audited and counted, and
// the log lists it. Viewers may not plan; specs a share group has no
// meaning for are a 400.
func TestShareOffsetsAPI(t *testing.T) {
	e := newShareResetEnv(t)
	alice := newClient(t, e.s, basic("alice", alicePW))
	const base = "/api/v1/kafka/share-groups/prod/workers/offsets"
	rec := alice.do("POST", base+"/plan", `{"to":"earliest"}`)
	var p offsets.Plan
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &p) != nil {
		t.Fatalf("plan: %d %s", rec.Code, rec.Body.String())
	}
	if p.Kind != offsets.KindShare || p.GroupState != "Empty" || p.Totals.Reprocess != 11 || p.ApplyRefused != "" {
		t.Fatalf("plan %+v", p)
	}
	if rec := alice.do("POST", "/api/v1/groups/prod/workers/offsets/apply", `{"plan_id":"`+p.ID+`"}`); rec.Code != http.StatusNotFound {
		t.Errorf("a share group's plan applied as a consumer group's: %d %s", rec.Code, rec.Body.String())
	}
	rec = alice.do("POST", base+"/apply", `{"plan_id":"`+p.ID+`"}`)
	var r offsets.Receipt
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &r) != nil || r.Result != offsets.ResultOK || len(r.Partitions) != 2 {
		t.Fatalf("apply: %d %s", rec.Code, rec.Body.String())
	}
	if got := e.starts(); got != [2]int64{0, 0} {
		t.Errorf("start offsets after apply %v, want [0 0]", got)
	}
	if l := e.logged("workers"); len(l) != 1 || l[0].Result != "ok" || !strings.Contains(string(l[0].Entry), `"kind":"share"`) {
		t.Errorf("audit: %+v", l)
	}
	if n := testutil.ToFloat64(e.resets.metrics.Resets("prod", "workers", offsets.ResultOK)); n != 1 {
		t.Errorf("counted %v ok applies", n)
	}
	rec = newClient(t, e.s, basic("victor", victorPW)).do("GET", base+"/resets", "")
	var list struct{ Resets []store.OffsetReset }
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &list) != nil || len(list.Resets) != 1 {
		t.Errorf("resets: %d %s", rec.Code, rec.Body.String())
	}

	for _, tc := range []struct {
		who, pw, body string
		code          int
		says          string
	}{
		{"victor", victorPW, `{"to":"earliest"}`, http.StatusForbidden, ""},
		{"alice", alicePW, `{"to":"shift:-2"}`, http.StatusBadRequest, "a share group can be reset to earliest"},
		{"alice", alicePW, `{"to":"group:billing"}`, http.StatusBadRequest, "not group"},
		{"alice", alicePW, `{"to":"earliest","topics":["nope"]}`, http.StatusBadRequest, "topic nope"},
	} {
		rec := newClient(t, e.s, basic(tc.who, tc.pw)).do("POST", base+"/plan", tc.body)
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.says) {
			t.Errorf("%s %s: %d %s; want %d %q", tc.who, tc.body, rec.Code, rec.Body.String(), tc.code, tc.says)
		}
	}
}

// checkShareResetsAPI answers each share-group reset endpoint with
// successes and errors, for TestAPIMatchesOpenAPI.
func checkShareResetsAPI(t *testing.T, a *apiChecker) {
	t.Helper()
	e := newShareResetEnv(t)
	alice, victor := basic("alice", alicePW), basic("victor", victorPW)
	op, oa, ol := "/kafka/share-groups/{cluster}/{group}/offsets/plan", "/kafka/share-groups/{cluster}/{group}/offsets/apply", "/kafka/share-groups/{cluster}/{group}/offsets/resets"
	workers := "/api/v1/kafka/share-groups/prod/workers/offsets"
	a.check(e.s, "POST", op, workers+"/plan", `{"to":"earliest","topics":["orders:0"]}`, alice)
	a.check(e.s, "POST", op, workers+"/plan", `{"to":"shift:-1"}`, alice)
	a.check(e.s, "POST", op, workers+"/plan", `{"to":"earliest"}`, victor)
	rec := a.check(e.s, "POST", op, workers+"/plan", `{"to":"latest"}`, alice)
	var p offsets.Plan
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	a.check(e.s, "POST", oa, workers+"/apply", `{"plan_id":"nope"}`, alice)
	a.check(e.s, "POST", oa, workers+"/apply", `{"plan_id":"`+p.ID+`"}`, alice)
	a.check(e.s, "GET", ol, workers+"/resets", "", victor)
	a.check(e.s, "GET", ol, workers+"/resets", "")
}

// TestShareResetButtonForOperatorsOnly: an operator finds "Reset start
// offsets…" on a share group's page, offering the share specs only; a
// viewer does not, nor anyone on a server without resets.
func TestShareResetButtonForOperatorsOnly(t *testing.T) {
	e := newShareResetEnv(t)
	s := New(Options{Monitor: shareServer().opts.Monitor, Auth: authConfig(t, config.AuthBasic), Offsets: e.resets})
	page := "/kafka/prod/share-groups/workers"
	for _, tc := range []struct {
		name string
		s    *Server
		opts []reqOpt
		want bool
	}{
		{"operator", s, []reqOpt{basic("alice", alicePW)}, true},
		{"viewer", s, []reqOpt{basic("victor", victorPW)}, false},
		{"no resets", shareServer(), nil, false},
	} {
		rec := send(tc.s, "GET", page, tc.opts...)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d", tc.name, rec.Code)
		}
		body := rec.Body.String()
		if got := strings.Contains(body, "Reset start offsets…") && strings.Contains(body, `id="reset"`); got != tc.want {
			t.Errorf("%s: reset button %v, want %v", tc.name, got, tc.want)
		}
		if tc.want && (!strings.Contains(body, `data-api="/api/v1/kafka/share-groups/prod/workers/offsets"`) || strings.Contains(body, `value="shift"`) || strings.Contains(body, `value="group"`)) {
			t.Errorf("%s: the dialog is not a share group's", tc.name)
		}
	}
}
