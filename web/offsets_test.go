package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
	offsetskafka "github.com/queuewatch/queuewatch/offsets/kafka"
	"github.com/queuewatch/queuewatch/store"
)

// kafkaResets is OffsetResets over one real (kfake) cluster and a real
// audit store, wired as app wires serve's.
type kafkaResets struct {
	b       *offsetskafka.Resets
	store   *store.Store
	metrics *offsets.Metrics
	// failBegin and failFinish make the audit log fail before or after
	// the commit.
	failBegin, failFinish bool
}

func (k *kafkaResets) Plan(ctx context.Context, cluster string, req offsets.Request) (offsets.Plan, error) {
	if cluster != k.b.Cluster() {
		return offsets.Plan{}, offsets.ErrScope // stands in for app's not-found
	}
	return offsets.MakePlan(ctx, k.b, req, time.Now())
}

func (k *kafkaResets) Apply(ctx context.Context, plan offsets.Plan, who string) (offsets.Receipt, error) {
	return offsets.Apply(ctx, k.b, plan, offsets.ApplyOptions{Who: who, Audit: k, Metrics: k.metrics})
}

func (k *kafkaResets) Resets(ctx context.Context, q store.ResetQuery) ([]store.OffsetReset, error) {
	return k.store.FindOffsetResets(ctx, q)
}

// KeepPlan, IssuedPlan and DropPlan keep issued plans in the store, as
// app's reset service does.
func (k *kafkaResets) KeepPlan(ctx context.Context, plan offsets.Plan) error {
	js, err := json.Marshal(plan)
	if err != nil {
		return err
	}
	return k.store.PutOffsetPlan(ctx, store.OffsetPlan{
		ID: plan.ID, Broker: plan.Broker, Cluster: plan.Cluster, Group: plan.Group, Plan: js, Created: time.Now(),
	}, offsets.PlanTTL, offsets.MaxPlans)
}

func (k *kafkaResets) IssuedPlan(ctx context.Context, id, cluster, group string) (offsets.Plan, error) {
	kept, err := k.store.OffsetPlan(ctx, id, cluster, group, time.Now(), offsets.PlanTTL)
	switch {
	case errors.Is(err, store.ErrNoPlan):
		return offsets.Plan{}, offsets.ErrUnknownPlan
	case errors.Is(err, store.ErrPlanExpired):
		return offsets.Plan{}, offsets.ErrPlanExpired
	case err != nil:
		return offsets.Plan{}, err
	}
	var plan offsets.Plan
	return plan, json.Unmarshal(kept.Plan, &plan)
}

func (k *kafkaResets) DropPlan(ctx context.Context, id string) error {
	return k.store.DropOffsetPlan(ctx, id)
}

func (k *kafkaResets) Begin(ctx context.Context, e offsets.Entry) (int64, error) {
	if k.failBegin {
		return 0, errors.New("disk full")
	}
	entry, err := json.Marshal(e)
	if err != nil {
		return 0, err
	}
	return k.store.RecordOffsetReset(ctx, store.OffsetReset{
		At: e.Receipt.At, Who: e.Receipt.Who, Broker: e.Plan.Broker, Cluster: e.Plan.Cluster, Group: e.Plan.Group,
		PlanID: e.Plan.ID, Result: string(e.Receipt.Result), Entry: entry,
	})
}

func (k *kafkaResets) Finish(ctx context.Context, id int64, e offsets.Entry) error {
	if k.failFinish {
		return errors.New("disk full")
	}
	entry, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return k.store.FinishOffsetReset(ctx, id, string(e.Receipt.Result), entry)
}

// resetEnv is a kfake cluster "prod" with topic orders (2 partitions of
// 10 records) and group billing, Empty, committed at 4 and 10; a server
// over it with basic auth.
type resetEnv struct {
	t      *testing.T
	c      *kfake.Cluster
	adm    *kadm.Client
	resets *kafkaResets
	s      *Server
}

func newResetEnv(t *testing.T) *resetEnv {
	t.Helper()
	c, err := kfake.NewCluster(kfake.Ports(testenv.FreePorts(t, 1)...), kfake.SeedTopics(2, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := offsetskafka.New(testenv.KafkaCluster(t, "prod", c.ListenAddrs()))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, err := offsets.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(); b.Close(); cl.Close(); c.Close() })
	var recs []*kgo.Record
	for p := range int32(2) {
		for range 10 {
			recs = append(recs, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("v")})
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	e := &resetEnv{t: t, c: c, adm: kadm.NewClient(cl), resets: &kafkaResets{b: b, store: st, metrics: m}}
	e.commit("billing", 4, 10)
	e.s = New(Options{Monitor: testServer(true).opts.Monitor, Auth: authConfig(t, config.AuthBasic), Offsets: e.resets})
	return e
}

func (e *resetEnv) commit(group string, at ...int64) {
	e.t.Helper()
	os := kadm.Offsets{}
	for p, o := range at {
		os.Add(kadm.Offset{Topic: "orders", Partition: int32(p), At: o, LeaderEpoch: -1})
	}
	if err := e.adm.CommitAllOffsets(context.Background(), group, os); err != nil {
		e.t.Fatal(err)
	}
}

// join makes a client a live member of group, which has read and committed
// orders, until the test ends.
func (e *resetEnv) join(t *testing.T, group string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.c.ListenAddrs()...), kgo.ConsumerGroup(group), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		if fs := cl.PollFetches(ctx); fs.NumRecords() > 0 || ctx.Err() != nil {
			break
		}
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
}

// logged is the audit store's entries of group, newest first.
func (e *resetEnv) logged(group string) []store.OffsetReset {
	e.t.Helper()
	l, err := e.resets.store.OffsetResets(context.Background(), "prod", group, 10)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

const alicePW, victorPW = "wonderland", "viewer-pw"

func (e *resetEnv) plan(group, body string) offsets.Plan {
	e.t.Helper()
	rec := newClient(e.t, e.s, basic("alice", alicePW)).do("POST", "/api/v1/groups/prod/"+group+"/offsets/plan", body)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("plan: %d %s", rec.Code, rec.Body.String())
	}
	var p offsets.Plan
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func TestOffsetsAPIPlanAndApply(t *testing.T) {
	e := newResetEnv(t)
	p := e.plan("billing", `{"to":"shift:-3","topics":["orders"]}`)
	if p.Totals.Reprocess != 6 || p.Totals.Partitions != 2 || p.ApplyRefused != "" || p.GroupState != "Empty" {
		t.Fatalf("plan %+v", p)
	}
	// Planning changes nothing.
	if got := e.logged("billing"); len(got) != 0 {
		t.Fatalf("a plan was audited: %+v", got)
	}
	rec := newClient(t, e.s, basic("alice", alicePW)).do("POST", "/api/v1/groups/prod/billing/offsets/apply", `{"plan_id":"`+p.ID+`"}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("apply: %d %s", rec.Code, rec.Body.String())
	}
	var r offsets.Receipt
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.Result != offsets.ResultOK || r.Who != "alice" || len(r.Partitions) != 2 || *r.Partitions[0].Committed != 1 || *r.Partitions[1].Committed != 7 {
		t.Fatalf("receipt %+v", r)
	}
	got, err := e.adm.FetchOffsets(context.Background(), "billing")
	if err != nil || got["orders"][0].At != 1 || got["orders"][1].At != 7 {
		t.Fatalf("committed after apply: %+v %v", got, err)
	}
	if l := e.logged("billing"); len(l) != 1 || l[0].Who != "alice" || l[0].Result != "ok" || l[0].PlanID != p.ID {
		t.Errorf("audit: %+v", l)
	}
	if n := testutil.ToFloat64(e.resets.metrics.Resets("prod", "billing", offsets.ResultOK)); n != 1 {
		t.Errorf("counted %v ok applies", n)
	}
	// The plan committed once; its ID is spent.
	if rec := newClient(t, e.s, basic("alice", alicePW)).do("POST", "/api/v1/groups/prod/billing/offsets/apply", `{"plan_id":"`+p.ID+`"}`); rec.Code != http.StatusNotFound {
		t.Errorf("second apply: %d %s", rec.Code, rec.Body.String())
	}
	// The log lists it, for a viewer too.
	rec = newClient(t, e.s, basic("victor", victorPW)).do("GET", "/api/v1/groups/prod/billing/offsets/resets", "")
	var list struct{ Resets []store.OffsetReset }
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &list) != nil || len(list.Resets) != 1 || !strings.Contains(string(list.Resets[0].Entry), `"committed"`) {
		t.Errorf("resets: %d %s", rec.Code, rec.Body.String())
	}
}

func TestOffsetsAPIRefusesAGroupWithMembers(t *testing.T) {
	e := newResetEnv(t)
	e.join(t, "live")
	p := e.plan("live", `{"to":"earliest"}`)
	if !strings.Contains(p.ApplyRefused, "stop its consumers first") {
		t.Fatalf("plan of a live group says apply_refused %q (state %s)", p.ApplyRefused, p.GroupState)
	}
	rec := newClient(t, e.s, basic("alice", alicePW)).do("POST", "/api/v1/groups/prod/live/offsets/apply", `{"plan_id":"`+p.ID+`"}`)
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "group is not empty") {
		t.Fatalf("apply: %d %s", rec.Code, rec.Body.String())
	}
	if l := e.logged("live"); len(l) != 1 || l[0].Result != "refused" {
		t.Errorf("audit: %+v", l)
	}
}

func TestOffsetsAPIRefusesAStalePlan(t *testing.T) {
	e := newResetEnv(t)
	p := e.plan("billing", `{"to":"earliest"}`)
	e.commit("billing", 5, 10) // someone consumed since the plan
	rec := newClient(t, e.s, basic("alice", alicePW)).do("POST", "/api/v1/groups/prod/billing/offsets/apply", `{"plan_id":"`+p.ID+`"}`)
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "re-plan") {
		t.Fatalf("apply: %d %s", rec.Code, rec.Body.String())
	}
	if got, _ := e.adm.FetchOffsets(context.Background(), "billing"); got["orders"][0].At != 5 {
		t.Errorf("a stale plan committed: %+v", got)
	}
	if l := e.logged("billing"); len(l) != 1 || l[0].Result != "stale" {
		t.Errorf("audit: %+v", l)
	}
}

func TestOffsetsAPIGuards(t *testing.T) {
	e := newResetEnv(t)
	p := e.plan("billing", `{"to":"latest"}`)
	apply := `{"plan_id":"` + p.ID + `"}`
	alice, victor := basic("alice", alicePW), basic("victor", victorPW)
	for _, tc := range []struct {
		name, method, path, body string
		opts                     []reqOpt
		status                   int
		error                    string
	}{
		{"viewer plans", "POST", "billing/offsets/plan", `{"to":"earliest"}`, []reqOpt{victor}, 403, "needs role operator"},
		{"viewer applies", "POST", "billing/offsets/apply", apply, []reqOpt{victor}, 403, "needs role operator"},
		{"cross-origin apply", "POST", "billing/offsets/apply", apply, []reqOpt{alice, header("Sec-Fetch-Site", "cross-site")}, 403, "cross-origin request refused"},
		{"unknown plan", "POST", "billing/offsets/apply", `{"plan_id":"0123456789abcdef01234567"}`, []reqOpt{alice}, 404, "re-plan"},
		{"another group's plan", "POST", "other/offsets/apply", apply, []reqOpt{alice}, 404, "re-plan"},
		{"bad spec", "POST", "billing/offsets/plan", `{"to":"yesterday"}`, []reqOpt{alice}, 400, "invalid reset spec"},
		{"bad topic", "POST", "billing/offsets/plan", `{"to":"earliest","topics":["orders:x"]}`, []reqOpt{alice}, 400, "not a partition number"},
		{"unknown topic", "POST", "billing/offsets/plan", `{"to":"earliest","topics":["nope"]}`, []reqOpt{alice}, 400, "invalid scope"},
		{"no commits, no topic", "POST", "fresh/offsets/plan", `{"to":"earliest"}`, []reqOpt{alice}, 400, "name the topics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newClient(t, e.s, tc.opts...).do(tc.method, "/api/v1/groups/prod/"+tc.path, tc.body)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.error) {
				t.Errorf("%d %s, want %d %q", rec.Code, rec.Body.String(), tc.status, tc.error)
			}
		})
	}
	if got, _ := e.adm.FetchOffsets(context.Background(), "billing"); got["orders"][0].At != 4 || len(e.logged("billing")) != 0 {
		t.Errorf("a refused request changed or logged something: %+v", got)
	}
}

// TestOffsetsAPIExpiredPlan: a plan kept for longer than offsets.PlanTTL
// is 410 once, then unknown (404), and commits nothing.
func TestOffsetsAPIExpiredPlan(t *testing.T) {
	e := newResetEnv(t)
	p := e.plan("billing", `{"to":"earliest"}`)
	ctx := context.Background()
	kept, err := e.resets.store.OffsetPlan(ctx, p.ID, "prod", "billing", time.Now(), offsets.PlanTTL)
	if err != nil {
		t.Fatalf("the plan was not kept: %v", err)
	}
	// Made 15 minutes and a second ago, as far as the store knows.
	kept.Created = time.Now().Add(-offsets.PlanTTL - time.Second)
	if err := e.resets.store.PutOffsetPlan(ctx, kept, offsets.PlanTTL, offsets.MaxPlans); err != nil {
		t.Fatal(err)
	}
	alice := newClient(t, e.s, basic("alice", alicePW))
	apply := `{"plan_id":"` + p.ID + `"}`
	if rec := alice.do("POST", "/api/v1/groups/prod/billing/offsets/apply", apply); rec.Code != http.StatusGone || !strings.Contains(rec.Body.String(), "expired after 15 minutes") {
		t.Fatalf("apply of an expired plan: %d %s", rec.Code, rec.Body.String())
	}
	if rec := alice.do("POST", "/api/v1/groups/prod/billing/offsets/apply", apply); rec.Code != http.StatusNotFound {
		t.Fatalf("apply of an expired plan again: %d %s", rec.Code, rec.Body.String())
	}
	if got, _ := e.adm.FetchOffsets(ctx, "billing"); got["orders"][0].At != 4 || len(e.logged("billing")) != 0 {
		t.Errorf("an expired plan changed or logged something: %+v", got)
	}
}

// TestResetButtonForOperatorsOnly: a viewer sees no "Reset offsets…", nor
// does anyone on a server without resets.
func TestResetButtonForOperatorsOnly(t *testing.T) {
	e := newResetEnv(t)
	page := "/kafka/prod/groups/ok-group"
	for _, tc := range []struct {
		name string
		s    *Server
		opts []reqOpt
		want bool
	}{
		{"operator", e.s, []reqOpt{basic("alice", alicePW)}, true},
		{"viewer", e.s, []reqOpt{basic("victor", victorPW)}, false},
		{"no resets", testServer(true), nil, false},
	} {
		rec := send(tc.s, "GET", page, tc.opts...)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d", tc.name, rec.Code)
		}
		body := rec.Body.String()
		if got := strings.Contains(body, "data-reset-open") && strings.Contains(body, `id="reset"`); got != tc.want {
			t.Errorf("%s: reset button %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestOffsetsAPIApplyAudit: an apply the audit log cannot record commits
// nothing; one whose result it cannot record is answered, and logged at
// Error level.
func TestOffsetsAPIApplyAudit(t *testing.T) {
	e := newResetEnv(t)
	var logs syncBuffer
	e.s = New(Options{
		Monitor: testServer(true).opts.Monitor, Auth: authConfig(t, config.AuthBasic), Offsets: e.resets,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	e.resets.failBegin = true
	p := e.plan("billing", `{"to":"earliest"}`)
	rec := newClient(t, e.s, basic("alice", alicePW)).do("POST", "/api/v1/groups/prod/billing/offsets/apply", `{"plan_id":"`+p.ID+`"}`)
	if rec.Code == http.StatusOK || !strings.Contains(rec.Body.String(), "nothing was committed") {
		t.Fatalf("apply without audit: %d %s", rec.Code, rec.Body.String())
	}
	if got, err := e.adm.FetchOffsets(context.Background(), "billing"); err != nil || got["orders"][0].At != 4 {
		t.Fatalf("an unaudited apply committed: %+v %v", got, err)
	}
	e.resets.failBegin, e.resets.failFinish = false, true
	rec = newClient(t, e.s, basic("alice", alicePW)).do("POST", "/api/v1/groups/prod/billing/offsets/apply", `{"plan_id":"`+p.ID+`"}`)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "not recorded") {
		t.Fatalf("apply: %d %s", rec.Code, rec.Body.String())
	}
	if l := e.logged("billing"); len(l) != 1 || l[0].Result != "applying" {
		t.Errorf("audit: %+v", l)
	}
	if s := logs.String(); !strings.Contains(s, "level=ERROR") || !strings.Contains(s, p.ID) {
		t.Errorf("logs: %s", s)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
