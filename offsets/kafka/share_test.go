package kafka

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
)

// shareEnv is env with share group "sg" at start offset 5 on each
// partition of "orders", and the share-group resets of the cluster.
type shareEnv struct {
	*env
	share *ShareResets
}

func newShareEnv(t *testing.T) *shareEnv {
	t.Helper()
	e := newEnv(t)
	s, err := NewShare(testenv.KafkaCluster(t, "test", e.c.ListenAddrs()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	se := &shareEnv{env: e, share: s}
	se.alter("sg", map[int32]int64{0: 5, 1: 5, 2: 5})
	return se
}

// alter sets group's start offsets on "orders" as kafka-share-groups
// --reset-offsets --execute would.
func (e *shareEnv) alter(group string, at map[int32]int64) {
	e.t.Helper()
	os := kadm.Offsets{}
	for p, o := range at {
		os.Add(kadm.Offset{Topic: "orders", Partition: p, At: o})
	}
	resp, err := e.adm.AlterShareGroupOffsets(context.Background(), group, os)
	if err != nil || resp.Error() != nil {
		e.t.Fatal(err, resp.Error())
	}
}

// starts is group's start offsets on "orders", -1 for none.
func (e *shareEnv) starts(group string) [3]int64 {
	e.t.Helper()
	resp, err := e.adm.DescribeShareGroupOffsets(context.Background(), group)
	if err != nil {
		e.t.Fatal(err)
	}
	out := [3]int64{-1, -1, -1}
	for _, o := range resp[group].Offsets.Sorted() {
		if o.Topic == "orders" {
			out[o.Partition] = o.StartOffset
		}
	}
	return out
}

func (e *shareEnv) plan(group, spec string, topics ...string) (offsets.Plan, error) {
	e.t.Helper()
	req := offsets.Request{Group: group, Kind: offsets.KindShare}
	var err error
	if req.To, err = offsets.ParseSpec(spec); err != nil {
		e.t.Fatal(err)
	}
	for _, s := range topics {
		ts, err := offsets.ParseTopicScope(s)
		if err != nil {
			e.t.Fatal(err)
		}
		req.Topics = append(req.Topics, ts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return offsets.MakePlan(ctx, e.share, req, time.Now())
}

func (e *shareEnv) mustPlan(group, spec string, topics ...string) offsets.Plan {
	e.t.Helper()
	p, err := e.plan(group, spec, topics...)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *shareEnv) apply(p offsets.Plan, a *audit, m *offsets.Metrics) (offsets.Receipt, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := offsets.ApplyOptions{Who: "test", Metrics: m}
	if a != nil {
		o.Audit = a
	}
	return offsets.Apply(ctx, e.share, p, o)
}

// TestSharePlanEverySpec plans each spec kafka-share-groups offers over
// start offsets 5, 5, 5 (log start 2, 0, 0, end 10), and refuses the two
// it does not.
func TestSharePlanEverySpec(t *testing.T) {
	e := newShareEnv(t)
	for _, tc := range []struct {
		spec   string
		topics []string
		want   string
	}{
		{"earliest", nil, "2 0 0"},
		{"latest", nil, "10 10 10"},
		{"timestamp:" + base.Add(3*time.Minute).Format(time.RFC3339), nil, "3 3 3"},
		{"timestamp:" + base.Add(time.Hour).Format(time.RFC3339), nil, "10 10 10"},
		{"offset:7", []string{"orders:1"}, "7"},
		{"offset:1", []string{"orders:0"}, "2"}, // clamped to the log start
	} {
		t.Run(tc.spec, func(t *testing.T) {
			p := e.mustPlan("sg", tc.spec, tc.topics...)
			if got := targets(p); got != tc.want {
				t.Errorf("targets %s, want %s", got, tc.want)
			}
			if p.Kind != offsets.KindShare || p.GroupState != "Empty" || p.ApplyRefused != "" || p.Partitions[0].Current == nil || *p.Partitions[0].Current != 5 {
				t.Errorf("plan %+v", p)
			}
		})
	}
	for _, spec := range []string{"shift:-2", "group:g"} {
		if _, err := e.plan("sg", spec); !errors.Is(err, offsets.ErrSpec) || !strings.Contains(err.Error(), "kafka-share-groups") {
			t.Errorf("%s: %v, want a refused spec", spec, err)
		}
	}
	if _, err := e.plan("g", "earliest", "orders"); !errors.Is(err, offsets.ErrScope) || !strings.Contains(err.Error(), "not a share group") {
		t.Errorf("a consumer group planned as a share group: %v", err)
	}
	if _, err := e.plan("no-such-share-group", "earliest"); !errors.Is(err, offsets.ErrScope) {
		t.Errorf("a share group without start offsets and no topic: %v", err)
	}
	// The same offsets as a consumer group's plan have another ID.
	if p := e.mustPlan("sg", "earliest"); p.ID == offsets.PlanID(p.Cluster, p.Group, p.Partitions) {
		t.Error("a share group's plan has a consumer group plan's ID")
	}
}

// TestShareApply moves the start offsets, reads them back, records the
// apply and counts it; applied again, the plan is stale.
func TestShareApply(t *testing.T) {
	e := newShareEnv(t)
	m, err := offsets.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	var a audit
	p := e.mustPlan("sg", "earliest")
	r, err := e.apply(p, &a, m)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.starts("sg"); got != [3]int64{2, 0, 0} {
		t.Errorf("start offsets %v, want [2 0 0]", got)
	}
	if r.Result != offsets.ResultOK || len(r.Partitions) != 3 {
		t.Fatalf("receipt %+v", r)
	}
	for _, pr := range r.Partitions {
		if pr.Result != "committed" || pr.Committed == nil || *pr.Committed != pr.Target {
			t.Errorf("partition %+v", pr)
		}
	}
	if len(a.entries) != 1 || a.entries[0].Plan.Kind != offsets.KindShare || a.entries[0].Receipt.Result != offsets.ResultOK {
		t.Errorf("audit %+v", a.entries)
	}
	if n := testutil.ToFloat64(m.Resets("test", "sg", offsets.ResultOK)); n != 1 {
		t.Errorf("queuewatch_offset_resets_total{result=ok} = %v", n)
	}
	if _, err := e.apply(p, &a, m); !errors.Is(err, offsets.ErrStale) {
		t.Errorf("second apply: %v", err)
	}
}

// TestShareApplyStale: a start offset moved after the plan: nothing is
// altered.
func TestShareApplyStale(t *testing.T) {
	e := newShareEnv(t)
	p := e.mustPlan("sg", "latest")
	e.alter("sg", map[int32]int64{1: 6})
	r, err := e.apply(p, nil, nil)
	if !errors.Is(err, offsets.ErrStale) || !strings.Contains(err.Error(), "orders[1] planned from 5, now 6") || r.Result != offsets.ResultStale {
		t.Fatalf("apply: %v, result %s", err, r.Result)
	}
	if got := e.starts("sg"); got != [3]int64{5, 6, 5} {
		t.Errorf("a stale apply altered: %v", got)
	}
}

// TestShareApplyRefusesMembers: a share group with a live consumer plans,
// says apply will be refused, and apply refuses it, altering nothing.
func TestShareApplyRefusesMembers(t *testing.T) {
	e := newShareEnv(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.c.ListenAddrs()...), kgo.ConsumeTopics("orders"),
		kgo.ShareGroup("sg"), kgo.ClientID("live-share-consumer"), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var p offsets.Plan
	for deadline := time.Now().Add(10 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		cl.PollFetches(ctx) // records stay acquired, unacknowledged
		cancel()
		if p = e.mustPlan("sg", "earliest"); len(p.Members) == 1 || time.Now().After(deadline) {
			break
		}
	}
	if len(p.Members) != 1 || p.Members[0].ClientID != "live-share-consumer" || !strings.Contains(p.ApplyRefused, "with 1 member(s)") {
		t.Fatalf("state %s members %+v refused %q", p.GroupState, p.Members, p.ApplyRefused)
	}
	var a audit
	r, err := e.apply(p, &a, nil)
	if !errors.Is(err, offsets.ErrGroupActive) || r.Result != offsets.ResultRefused {
		t.Errorf("apply: %v, result %s", err, r.Result)
	}
	if len(a.entries) != 1 || a.entries[0].Receipt.Result != offsets.ResultRefused {
		t.Errorf("audit %+v", a.entries)
	}
}

// TestShareApplyWrongKind: a share group's plan is not applied as a
// consumer group's, nor the other way round, nor with its kind edited.
func TestShareApplyWrongKind(t *testing.T) {
	e := newShareEnv(t)
	sp := e.mustPlan("sg", "earliest")
	ctx := context.Background()
	if _, err := offsets.Apply(ctx, e.resets, sp, offsets.ApplyOptions{}); !errors.Is(err, offsets.ErrPlanModified) {
		t.Errorf("share plan applied to consumer groups: %v", err)
	}
	edited := sp
	edited.Kind = ""
	if _, err := offsets.Apply(ctx, e.resets, edited, offsets.ApplyOptions{}); !errors.Is(err, offsets.ErrPlanModified) {
		t.Errorf("share plan with its kind removed: %v", err)
	}
	cp := e.env.mustPlan("g", "earliest")
	if _, err := offsets.Apply(ctx, e.share, cp, offsets.ApplyOptions{}); !errors.Is(err, offsets.ErrPlanModified) {
		t.Errorf("consumer group plan applied to share groups: %v", err)
	}
	if got := e.starts("sg"); got != [3]int64{5, 5, 5} {
		t.Errorf("start offsets %v", got)
	}
}
