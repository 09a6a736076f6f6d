package realkafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
	offsetskafka "github.com/queuewatch/queuewatch/offsets/kafka"
)

// shareEnv is env with share group share at start offset 5 on each
// partition of the topic, and the cluster's share-group resets.
type shareEnv struct {
	*env
	share  string
	resets *offsetskafka.ShareResets
}

func newShareEnv(t *testing.T, version string) *shareEnv {
	t.Helper()
	e := newEnv(t, version)
	r, err := offsetskafka.NewShare(testenv.KafkaCluster(t, "real", []string{e.node.Addr()}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return &shareEnv{env: e, share: testenv.Unique("share"), resets: r}
}

// alter sets the share group's start offsets, as an earlier reset would.
func (e *shareEnv) alter(at map[int32]int64) {
	e.t.Helper()
	os := kadm.Offsets{}
	for p, o := range at {
		os.Add(kadm.Offset{Topic: e.topic, Partition: p, At: o})
	}
	resp, err := e.adm.AlterShareGroupOffsets(context.Background(), e.share, os)
	if err != nil || resp.Error() != nil {
		e.t.Fatal(err, resp.Error())
	}
}

func (e *shareEnv) plan(spec string, topics ...string) (offsets.Plan, error) {
	e.t.Helper()
	sp, err := offsets.ParseSpec(spec)
	if err != nil {
		e.t.Fatal(err)
	}
	req := offsets.Request{Group: e.share, To: sp, Kind: offsets.KindShare}
	for _, s := range topics {
		ts, err := offsets.ParseTopicScope(s)
		if err != nil {
			e.t.Fatal(err)
		}
		req.Topics = append(req.Topics, ts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return offsets.MakePlan(ctx, e.resets, req, time.Now())
}

func (e *shareEnv) mustPlan(spec string, topics ...string) offsets.Plan {
	e.t.Helper()
	p, err := e.plan(spec, topics...)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *shareEnv) apply(p offsets.Plan) (offsets.Receipt, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return offsets.Apply(ctx, e.resets, p, offsets.ApplyOptions{Who: "test"})
}

// shareTool runs kafka-share-groups (ShareGroupCommand) on the share
// group and returns its rows that start with the group's name, split in
// fields; a line saying "Error:" fails the test.
func (e *shareEnv) shareTool(args ...string) [][]string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	text, err := e.node.Java(ctx, "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
		append([]string{"--bootstrap-server", e.node.Addr(), "--group", e.share}, args...)...)
	if err == nil && strings.Contains(text, "Error:") {
		err = errors.New(strings.TrimSpace(text))
	}
	if err != nil {
		e.t.Fatal(err)
	}
	var rows [][]string
	for line := range strings.Lines(text) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == e.share {
			rows = append(rows, f)
		}
	}
	return rows
}

// dryRun is kafka-share-groups --reset-offsets --dry-run: "topic:partition"
// → new start offset.
func (e *shareEnv) dryRun(args ...string) map[string]int64 {
	e.t.Helper()
	out := map[string]int64{}
	// GROUP TOPIC PARTITION NEW-OFFSET
	for _, f := range e.shareTool(append([]string{"--reset-offsets", "--dry-run"}, args...)...) {
		if len(f) != 4 {
			continue
		}
		n, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			e.t.Fatalf("dry run row %v: %v", f, err)
		}
		out[f[1]+":"+f[2]] = n
	}
	if len(out) == 0 {
		e.t.Fatalf("kafka-share-groups --reset-offsets --dry-run %v printed no offsets", args)
	}
	return out
}

// starts is kafka-share-groups --describe --offsets: "topic:partition" →
// START-OFFSET.
func (e *shareEnv) starts() map[string]string {
	e.t.Helper()
	out := map[string]string{}
	// GROUP TOPIC PARTITION START-OFFSET LAG
	for _, f := range e.shareTool("--describe", "--offsets") {
		if len(f) >= 4 {
			out[f[1]+":"+f[2]] = f[3]
		}
	}
	return out
}

// TestSharePlanMatchesShareGroupsTool plans every spec a share group takes
// on Kafka 4.4 and compares the targets with kafka-share-groups
// --reset-offsets --dry-run for the same spec and scope.
func TestSharePlanMatchesShareGroupsTool(t *testing.T) {
	e := newShareEnv(t, testenv.KafkaVersion)
	e.alter(map[int32]int64{0: 5, 1: 5, 2: 5})
	at := func(d time.Duration) string { return e.base.Add(d).Format("2006-01-02T15:04:05.000Z") }
	for _, tc := range []struct {
		spec   string
		scope  string
		tool   []string
		expect string
	}{
		{"earliest", "", []string{"--to-earliest"}, "2 0 0"},
		{"latest", "", []string{"--to-latest"}, "10 10 10"},
		{"offset:7", ":1", []string{"--to-offset", "7"}, "7"},
		{"offset:1", ":0", []string{"--to-offset", "1"}, "2"},
		{"offset:42", ":2", []string{"--to-offset", "42"}, "10"},
		{"timestamp:" + e.base.Add(3*time.Minute+30*time.Second).Format(time.RFC3339), "", []string{"--to-datetime", at(3*time.Minute + 30*time.Second)}, "4 4 4"},
		{"timestamp:" + e.base.Add(time.Hour).Format(time.RFC3339), "", []string{"--to-datetime", at(time.Hour)}, "10 10 10"},
	} {
		t.Run(tc.spec+tc.scope, func(t *testing.T) {
			p := e.mustPlan(tc.spec, e.topic+tc.scope)
			var got []string
			for _, pp := range p.Partitions {
				got = append(got, strconv.FormatInt(*pp.Target, 10))
				if pp.Current == nil || *pp.Current != 5 {
					t.Errorf("%s[%d]: current %v, want the start offset 5", pp.Topic, pp.Partition, pp.Current)
				}
			}
			if strings.Join(got, " ") != tc.expect {
				t.Errorf("targets %v, want %s", got, tc.expect)
			}
			want := e.dryRun(append(tc.tool, "--topic", e.topic+tc.scope)...)
			if len(want) != len(p.Partitions) {
				t.Errorf("kafka-share-groups resets %d partitions, the plan %d: %v", len(want), len(p.Partitions), want)
			}
			for _, pp := range p.Partitions {
				if w, ok := want[fmt.Sprintf("%s:%d", pp.Topic, pp.Partition)]; !ok || w != *pp.Target {
					t.Errorf("%s[%d]: plan %d, kafka-share-groups %d (%v)", pp.Topic, pp.Partition, *pp.Target, w, ok)
				}
			}
		})
	}
	// Without --topic the tool resets every partition the group has a
	// start offset on, as the plan does.
	p := e.mustPlan("earliest")
	if want := e.dryRun("--to-earliest", "--all-topics"); len(want) != 3 || len(p.Partitions) != 3 {
		t.Errorf("all topics: tool %v, plan %d partitions", want, len(p.Partitions))
	}
	for _, spec := range []string{"shift:-1", "group:" + e.g} {
		if _, err := e.plan(spec); !errors.Is(err, offsets.ErrSpec) {
			t.Errorf("%s: %v, want refused", spec, err)
		}
	}
	// A consumer group is no share group to reset.
	e.share = e.g
	if _, err := e.plan("earliest", e.topic); !errors.Is(err, offsets.ErrScope) || !strings.Contains(err.Error(), "not a share group") {
		t.Errorf("consumer group %s planned as a share group: %v", e.g, err)
	}
}

// TestShareApplyOnRealKafka applies plans to a share group on Kafka 4.4
// and reads the result with kafka-share-groups --describe; a live share
// consumer makes apply refuse, a start offset moved since the plan makes
// it stale, and once applied, a share consumer reads from the new start
// offset.
func TestShareApplyOnRealKafka(t *testing.T) {
	e := newShareEnv(t, testenv.KafkaVersion)
	e.alter(map[int32]int64{0: 5, 1: 5, 2: 5})
	r, err := e.apply(e.mustPlan("earliest"))
	if err != nil || r.Result != offsets.ResultOK {
		t.Fatalf("apply: %v %+v", err, r)
	}
	wantStarts(t, e, "2", "0", "0")

	p := e.mustPlan("latest")
	e.alter(map[int32]int64{2: 3})
	if r, err := e.apply(p); !errors.Is(err, offsets.ErrStale) || r.Result != offsets.ResultStale {
		t.Errorf("stale apply: %v, result %s", err, r.Result)
	}
	wantStarts(t, e, "2", "0", "3")

	cl, err := kgo.NewClient(kgo.SeedBrokers(e.node.Addr()), kgo.ConsumeTopics(e.topic), kgo.ShareGroup(e.share),
		kgo.ClientID("live-share"), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		cl.PollFetches(ctx)
		cancel()
		if p = e.mustPlan("timestamp:" + e.base.Add(8*time.Minute).Format(time.RFC3339)); len(p.Members) == 1 || time.Now().After(deadline) {
			break
		}
	}
	if p.GroupState != "Stable" || len(p.Members) != 1 || p.ApplyRefused == "" {
		t.Fatalf("with a live share consumer: state %s, members %+v, apply_refused %q", p.GroupState, p.Members, p.ApplyRefused)
	}
	if r, err := e.apply(p); !errors.Is(err, offsets.ErrGroupActive) || r.Result != offsets.ResultRefused {
		t.Errorf("apply with a member: %v, result %s", err, r.Result)
	}
	cl.Close()

	// Once the member has left, the same reset applies.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		if p = e.mustPlan("timestamp:" + e.base.Add(8*time.Minute).Format(time.RFC3339)); p.ApplyRefused == "" || time.Now().After(deadline) {
			break
		}
	}
	if r, err := e.apply(p); err != nil || r.Result != offsets.ResultOK {
		t.Fatalf("apply after the member left: %v %+v (plan state %s)", err, r, p.GroupState)
	}
	wantStarts(t, e, "8", "8", "8")
	if got := e.shareRead(6); got != "0:8 0:9 1:8 1:9 2:8 2:9" {
		t.Errorf("a share consumer after the reset read %s; want offsets 8 and 9 of each partition", got)
	}
}

// wantStarts compares the start offsets kafka-share-groups --describe
// says with want, partition by partition.
func wantStarts(t *testing.T, e *shareEnv, want ...string) {
	t.Helper()
	got := e.starts()
	for i, w := range want {
		if g := got[fmt.Sprintf("%s:%d", e.topic, i)]; g != w {
			t.Errorf("partition %d: kafka-share-groups says start offset %s, want %s (%v)", i, g, w, got)
		}
	}
}

// shareRead has a new share consumer of the group accept n records and
// returns them as sorted "partition:offset", after waiting a moment more
// for any record beyond n.
func (e *shareEnv) shareRead(n int) string {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.node.Addr()), kgo.ConsumeTopics(e.topic), kgo.ShareGroup(e.share),
		kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var extra time.Time
	for ctx.Err() == nil {
		if len(got) >= n && extra.IsZero() {
			extra = time.Now().Add(3 * time.Second)
		}
		if !extra.IsZero() && time.Now().After(extra) {
			break
		}
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		pcancel()
		for _, r := range fs.Records() {
			got = append(got, fmt.Sprintf("%d:%d", r.Partition, r.Offset))
			r.Ack(kgo.AckAccept)
		}
	}
	_ = cl.FlushAcks(context.Background())
	slices.Sort(got)
	return strings.Join(got, " ")
}

// TestShareResetRefusedOnKafka40: Kafka 4.0 has no share groups to reset
// (early access, off by default); the plan is refused, naming the release.
func TestShareResetRefusedOnKafka40(t *testing.T) {
	e := newShareEnv(t, testenv.KafkaPreviousVersion)
	_, err := e.plan("earliest", e.topic)
	t.Logf("plan on Kafka %s: %v", testenv.KafkaPreviousVersion, err)
	if !errors.Is(err, offsets.ErrUnsupported) || !strings.Contains(err.Error(), "4.0") || !strings.Contains(err.Error(), "4.1 or later") {
		t.Errorf("plan on Kafka 4.0: %v; want refused, naming 4.0", err)
	}
}
