package kafka

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
)

// base is the timestamp of every partition's first record; record i is
// i minutes later.
var base = time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)

// env is a kfake cluster with topic "orders" (3 partitions of 10 records,
// one a minute from base; partition 0's log starts at 2), group "g"
// committed at 5 on each partition, and group "old" committed on
// partitions 0 and 2 only.
type env struct {
	t      *testing.T
	c      *kfake.Cluster
	adm    *kadm.Client
	resets *Resets
}

func newEnv(t *testing.T) *env {
	t.Helper()
	c, err := kfake.NewCluster(kfake.Ports(testenv.FreePorts(t, 1)...), kfake.SeedTopics(3, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(testenv.KafkaCluster(t, "test", c.ListenAddrs()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); cl.Close(); c.Close() })
	e := &env{t: t, c: c, adm: kadm.NewClient(cl), resets: r}
	var recs []*kgo.Record
	for p := range int32(3) {
		for i := range 10 {
			recs = append(recs, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("v"), Timestamp: base.Add(time.Duration(i) * time.Minute)})
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 2})
	if resp, err := e.adm.DeleteRecords(context.Background(), del); err != nil || resp.Error() != nil {
		t.Fatal(err, resp.Error())
	}
	e.commit("g", map[int32]int64{0: 5, 1: 5, 2: 5})
	e.commit("old", map[int32]int64{0: 3, 2: 8})
	return e
}

func (e *env) commit(group string, at map[int32]int64) {
	e.t.Helper()
	os := kadm.Offsets{}
	for p, o := range at {
		os.Add(kadm.Offset{Topic: "orders", Partition: p, At: o, LeaderEpoch: -1})
	}
	if err := e.adm.CommitAllOffsets(context.Background(), group, os); err != nil {
		e.t.Fatal(err)
	}
}

// committed is group's committed offsets on "orders", -1 for none.
func (e *env) committed(group string) [3]int64 {
	e.t.Helper()
	resp, err := e.adm.FetchOffsets(context.Background(), group)
	if err != nil {
		e.t.Fatal(err)
	}
	out := [3]int64{-1, -1, -1}
	for p := range int32(3) {
		if o, ok := resp.Lookup("orders", p); ok && o.Err == nil {
			out[p] = o.At
		}
	}
	return out
}

func (e *env) plan(group, spec string, topics ...string) (offsets.Plan, error) {
	e.t.Helper()
	req := offsets.Request{Group: group}
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
	return offsets.MakePlan(ctx, e.resets, req, time.Now())
}

func (e *env) mustPlan(group, spec string, topics ...string) offsets.Plan {
	e.t.Helper()
	p, err := e.plan(group, spec, topics...)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// audit records entries, as the audit store would.
type audit struct {
	mu      sync.Mutex
	entries []offsets.Entry
}

func (a *audit) Begin(_ context.Context, e offsets.Entry) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
	return int64(len(a.entries)), nil
}

func (a *audit) Finish(_ context.Context, id int64, e offsets.Entry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries[id-1] = e
	return nil
}

func (e *env) apply(p offsets.Plan, a *audit, m *offsets.Metrics) (offsets.Receipt, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := offsets.ApplyOptions{Who: "test", Metrics: m}
	if a != nil {
		o.Audit = a
	}
	return offsets.Apply(ctx, e.resets, p, o)
}

// targets is the plan's targets of partitions 0, 1 and 2 ("-": left as it is).
func targets(p offsets.Plan) string {
	var s []string
	for _, pp := range p.Partitions {
		if pp.Target == nil {
			s = append(s, "-")
		} else {
			s = append(s, strconv.FormatInt(*pp.Target, 10))
		}
	}
	return strings.Join(s, " ")
}

// TestPlanEverySpec plans each SPEC over the same offsets: log start 2, 0,
// 0, end 10, group g at 5 on every partition.
func TestPlanEverySpec(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		spec, targets string
		// warnings are substrings of the plan's warnings, in order.
		warnings []string
	}{
		{"earliest", "2 0 0", nil},
		{"latest", "10 10 10", nil},
		{"shift:-4", "2 1 1", []string{"orders[0]: offset 1 is before the log start: clamped to 2"}},
		{"shift:+2", "7 7 7", nil},
		{"shift:+7", "10 10 10", []string{"orders[0]: offset 12 is past the log end: clamped to 10", "orders[1]", "orders[2]"}},
		// Records are a minute apart: 09:03:30 falls between records 3 and 4.
		{"timestamp:2026-12-05T09:03:30Z", "4 4 4", nil},
		{"timestamp:2026-12-05T09:00:00Z", "2 0 0", nil},
		{"timestamp:2026-12-05T10:00:00Z", "10 10 10", []string{"orders[0]: no record at or after 2026-12-05T10:00:00Z: set to the log end", "orders[1]", "orders[2]"}},
		{"group:old", "3 - 8", []string{"orders[1]: group old has no committed offset here: left as it is"}},
		// Kafka reads -1 and -3 ms as the log end and the last record:
		// before 1970 is before every record.
		{"timestamp:1969-12-31T23:59:59.999Z", "2 0 0", []string{"orders[0]: timestamp 1969-12-31T23:59:59.999Z is before 1970", "orders[1]", "orders[2]"}},
		{"timestamp:1969-12-31T23:59:59.997Z", "2 0 0", []string{"orders[0]: timestamp 1969-12-31T23:59:59.997Z is before 1970", "orders[1]", "orders[2]"}},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			p := e.mustPlan("g", tc.spec)
			if got := targets(p); got != tc.targets {
				t.Errorf("targets %s, want %s", got, tc.targets)
			}
			if len(p.Warnings) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %d", p.Warnings, len(tc.warnings))
			}
			for i, w := range tc.warnings {
				if !strings.Contains(p.Warnings[i], w) {
					t.Errorf("warning %q, want %q", p.Warnings[i], w)
				}
			}
			if p.Cluster != "test" || p.Group != "g" || p.GroupState != "Empty" || p.ApplyRefused != "" || p.To.String() != strings.Replace(tc.spec, "+", "+", 1) {
				t.Errorf("plan header %+v", p)
			}
			// The target record's timestamp is minute <target> after base,
			// or none at the end of the log.
			for _, pp := range p.Partitions {
				switch {
				case pp.Target == nil:
				case *pp.Target == 10:
					if pp.TargetTimestamp != nil || pp.TimestampNote != offsets.NoteEndOfLog {
						t.Errorf("%d: timestamp %v %q at the end", pp.Partition, pp.TargetTimestamp, pp.TimestampNote)
					}
				default:
					if want := base.Add(time.Duration(*pp.Target) * time.Minute); pp.TargetTimestamp == nil || !pp.TargetTimestamp.Equal(want) {
						t.Errorf("%d: target timestamp %v, want %v", pp.Partition, pp.TargetTimestamp, want)
					}
				}
			}
		})
	}
	// Nothing changed.
	if got := e.committed("g"); got != [3]int64{5, 5, 5} {
		t.Errorf("planning changed the commits: %v", got)
	}
}

func TestPlanAccounting(t *testing.T) {
	e := newEnv(t)
	p := e.mustPlan("g", "shift:-4")
	pp := p.Partitions[1]
	if *pp.Current != 5 || *pp.Target != 1 || *pp.Delta != -4 || pp.Reprocess != 4 || pp.Skip != 0 || pp.LagAfter != 9 || pp.LogStart != 0 || pp.LogEnd != 10 {
		t.Errorf("partition 1: %+v", pp)
	}
	// Partition 0 is clamped to 2: 3 records re-processed.
	if p.Totals != (offsets.Totals{Partitions: 3, Changed: 3, Reprocess: 3 + 4 + 4, LagAfter: 8 + 9 + 9}) {
		t.Errorf("totals %+v", p.Totals)
	}
	if p.Totals.Skip != 0 {
		t.Errorf("skip %d", p.Totals.Skip)
	}
	if q := e.mustPlan("g", "shift:-4"); q.ID != p.ID {
		t.Errorf("the same plan twice has two IDs: %s, %s", p.ID, q.ID)
	}
	if q := e.mustPlan("g", "shift:-3"); q.ID == p.ID {
		t.Errorf("another target keeps the ID %s", p.ID)
	}
}

func TestPlanScope(t *testing.T) {
	e := newEnv(t)
	if _, err := e.adm.CreateTopic(context.Background(), 2, 1, nil, "fresh"); err != nil {
		t.Fatal(err)
	}
	p := e.mustPlan("g", "earliest", "orders:0,2", "fresh")
	var got []string
	for _, pp := range p.Partitions {
		got = append(got, pp.Topic+":"+strconv.Itoa(int(pp.Partition))+"@"+dashed(pp.Current))
	}
	if strings.Join(got, " ") != "fresh:0@- fresh:1@- orders:0@5 orders:2@5" {
		t.Errorf("scope %v", got)
	}
	// offset:N needs exactly one partition.
	if _, err := e.plan("g", "offset:7"); !errors.Is(err, offsets.ErrSpec) {
		t.Errorf("offset:7 on 3 partitions: %v", err)
	}
	p = e.mustPlan("g", "offset:7", "orders:1")
	if targets(p) != "7" || p.Partitions[0].Skip != 2 {
		t.Errorf("offset:7 on orders:1: %s %+v", targets(p), p.Partitions[0])
	}
	if p = e.mustPlan("g", "offset:42", "orders:1"); targets(p) != "10" || len(p.Warnings) != 1 {
		t.Errorf("offset:42: %s %q", targets(p), p.Warnings)
	}
	for _, bad := range [][]string{{"missing"}, {"orders:7"}} {
		if _, err := e.plan("g", "earliest", bad...); err == nil {
			t.Errorf("scope %v planned", bad)
		}
	}
	if _, err := e.plan("nobody", "earliest"); err == nil || !strings.Contains(err.Error(), "--topic") {
		t.Errorf("a group without commits and no --topic: %v", err)
	}
}

func dashed(o *int64) string {
	if o == nil {
		return "-"
	}
	return strconv.FormatInt(*o, 10)
}

func TestApply(t *testing.T) {
	e := newEnv(t)
	reg := prometheus.NewRegistry()
	m, err := offsets.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var a audit
	p := e.mustPlan("g", "group:old")
	r, err := e.apply(p, &a, m)
	if err != nil {
		t.Fatal(err)
	}
	// Partition 1 is left as it is: only 0 and 2 are committed.
	if got := e.committed("g"); got != [3]int64{3, 5, 8} {
		t.Errorf("committed %v, want [3 5 8]", got)
	}
	if r.Result != offsets.ResultOK || r.PlanID != p.ID || r.Who != "test" || len(r.Partitions) != 2 {
		t.Fatalf("receipt %+v", r)
	}
	for _, pr := range r.Partitions {
		if pr.Result != "committed" || pr.Committed == nil || *pr.Committed != pr.Target {
			t.Errorf("partition %+v", pr)
		}
	}
	if len(a.entries) != 1 || a.entries[0].Plan.ID != p.ID || a.entries[0].Receipt.Result != offsets.ResultOK {
		t.Errorf("audit %+v", a.entries)
	}
	if n := testutil.ToFloat64(m.Resets("test", "g", offsets.ResultOK)); n != 1 {
		t.Errorf("queuewatch_offset_resets_total{result=ok} = %v", n)
	}
	// Applying the same plan again is stale: its current offsets moved.
	if _, err := e.apply(p, &a, m); !errors.Is(err, offsets.ErrStale) {
		t.Errorf("second apply: %v", err)
	}
}

// TestApplyRefusesGroupWithMembers: a group with a live member, classic
// or KIP-848, plans, says apply will be refused, and apply refuses it.
func TestApplyRefusesGroupWithMembers(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		opts     []kgo.Opt
	}{{"classic", nil}, {"consumer (KIP-848)", []kgo.Opt{kgo.ServerSideBalancer()}}} {
		t.Run(tc.protocol, func(t *testing.T) { refusesGroupWithMembers(t, tc.opts...) })
	}
}

func refusesGroupWithMembers(t *testing.T, opts ...kgo.Opt) {
	e := newEnv(t)
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(e.c.ListenAddrs()...), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("orders"),
		kgo.DisableAutoCommit(), kgo.ClientID("live-consumer"),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	deadline := time.Now().Add(10 * time.Second)
	var p offsets.Plan
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		cl.PollFetches(ctx)
		cancel()
		if p = e.mustPlan("g", "earliest"); p.GroupState == "Stable" || time.Now().After(deadline) {
			break
		}
	}
	if p.GroupState != "Stable" || len(p.Members) != 1 || p.Members[0].ClientID != "live-consumer" {
		t.Fatalf("state %s members %+v", p.GroupState, p.Members)
	}
	if !strings.Contains(p.ApplyRefused, "is Stable with 1 member(s)") {
		t.Errorf("apply_refused %q", p.ApplyRefused)
	}
	var a audit
	r, err := e.apply(p, &a, nil)
	if !errors.Is(err, offsets.ErrGroupActive) || !strings.Contains(err.Error(), "Stable") || r.Result != offsets.ResultRefused {
		t.Errorf("apply: %v, result %s", err, r.Result)
	}
	if got := e.committed("g"); got != [3]int64{5, 5, 5} {
		t.Errorf("a refused apply committed: %v", got)
	}
	if len(a.entries) != 1 || a.entries[0].Receipt.Result != offsets.ResultRefused {
		t.Errorf("audit %+v", a.entries)
	}
}

// TestApplyStale: a commit after the plan makes it stale; nothing is
// committed.
func TestApplyStale(t *testing.T) {
	e := newEnv(t)
	p := e.mustPlan("g", "earliest")
	e.commit("g", map[int32]int64{1: 6})
	var a audit
	r, err := e.apply(p, &a, nil)
	if !errors.Is(err, offsets.ErrStale) || !strings.Contains(err.Error(), "orders[1] planned from 5, now 6); re-plan") || r.Result != offsets.ResultStale {
		t.Fatalf("apply: %v, result %s", err, r.Result)
	}
	if got := e.committed("g"); got != [3]int64{5, 6, 5} {
		t.Errorf("a stale apply committed: %v", got)
	}
	if len(a.entries) != 1 || a.entries[0].Receipt.Result != offsets.ResultStale {
		t.Errorf("audit %+v", a.entries)
	}
	// A commit where the plan saw none is as stale.
	p = e.mustPlan("fresh-group", "earliest", "orders:0")
	e.commit("fresh-group", map[int32]int64{0: 4})
	if _, err := e.apply(p, nil, nil); !errors.Is(err, offsets.ErrStale) {
		t.Errorf("apply over a new commit: %v", err)
	}
}

// TestApplyModifiedPlan: a plan edited by hand no longer matches its ID.
func TestApplyModifiedPlan(t *testing.T) {
	e := newEnv(t)
	p := e.mustPlan("g", "earliest")
	seven := int64(7)
	p.Partitions[1].Target = &seven
	if _, err := e.apply(p, nil, nil); !errors.Is(err, offsets.ErrPlanModified) {
		t.Errorf("apply: %v", err)
	}
	if got := e.committed("g"); got != [3]int64{5, 5, 5} {
		t.Errorf("a modified plan committed: %v", got)
	}
}

// TestApplyPartitionDenied: the broker refuses one partition's commit
// (TOPIC_AUTHORIZATION_FAILED, as an ACL denying it would); the receipt
// says so for that partition and the others are committed.
func TestApplyPartitionDenied(t *testing.T) {
	e := newEnv(t)
	p := e.mustPlan("g", "earliest")
	e.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Topic: "orders", Partitions: []int32{1}, Err: kerr.TopicAuthorizationFailed, Count: -1})
	var a audit
	r, err := e.apply(p, &a, nil)
	if err == nil || r.Result != offsets.ResultPartial {
		t.Fatalf("apply: %v, result %s", err, r.Result)
	}
	byPart := map[int32]offsets.PartitionResult{}
	for _, pr := range r.Partitions {
		byPart[pr.Partition] = pr
	}
	if pr := byPart[1]; pr.Result != "failed" || !strings.Contains(pr.Error, "TOPIC_AUTHORIZATION_FAILED") || pr.Committed == nil || *pr.Committed != 5 {
		t.Errorf("partition 1: %+v", pr)
	}
	for _, p := range []int32{0, 2} {
		if pr := byPart[p]; pr.Result != "committed" {
			t.Errorf("partition %d: %+v", p, pr)
		}
	}
	if got := e.committed("g"); got != [3]int64{2, 5, 0} {
		t.Errorf("committed %v, want [2 5 0]", got)
	}
	if len(a.entries) != 1 || a.entries[0].Receipt.Result != offsets.ResultPartial {
		t.Errorf("audit %+v", a.entries)
	}
}

// TestPlanTimestampUnreadable: a partition whose records cannot be read
// plans all the same, its target timestamp "unknown".
func TestPlanTimestampUnreadable(t *testing.T) {
	e := newEnv(t)
	e.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: "orders", Partitions: []int32{1}, Err: kerr.TopicAuthorizationFailed, Count: -1})
	p := e.mustPlan("g", "earliest")
	if targets(p) != "2 0 0" {
		t.Errorf("targets %s", targets(p))
	}
	for _, pp := range p.Partitions {
		unknown := pp.TargetTimestamp == nil && pp.TimestampNote == offsets.NoteUnknown
		if unknown != (pp.Partition == 1) {
			t.Errorf("partition %d: timestamp %v, note %q", pp.Partition, pp.TargetTimestamp, pp.TimestampNote)
		}
	}
}
