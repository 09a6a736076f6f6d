package realkafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
	offsetskafka "github.com/queuewatch/queuewatch/offsets/kafka"
)

// TestMain stops the shared node when the package's tests end.
func TestMain(m *testing.M) { testenv.KafkaMain(m) }

// env is a topic of 3 partitions of 10 records each, one a minute from
// base (partition 0's log starts at 2 after a DeleteRecords), group g
// committed at 5 on each partition and group old on partitions 0 (at 3)
// and 2 (at 8) only.
type env struct {
	t             *testing.T
	node          *testenv.KafkaNode
	adm           *kadm.Client
	resets        *offsetskafka.Resets
	topic, g, old string
	base          time.Time
}

func newEnv(t *testing.T, version string) *env {
	t.Helper()
	node := testenv.RealKafkaAt(t, version)
	cl, err := kgo.NewClient(kgo.SeedBrokers(node.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := offsetskafka.New(testenv.KafkaCluster(t, "real", []string{node.Addr()}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); cl.Close() })
	e := &env{
		t: t, node: node, adm: kadm.NewClient(cl), resets: r, topic: testenv.Unique("resets"),
		g: testenv.Unique("g"), old: testenv.Unique("old"),
		// In the past, but within any retention and timestamp limit.
		base: time.Now().Add(-2 * time.Hour).Truncate(time.Minute).UTC(),
	}
	ctx := context.Background()
	if _, err := e.adm.CreateTopic(ctx, 3, 1, nil, e.topic); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for p := range int32(3) {
		for i := range 10 {
			recs = append(recs, &kgo.Record{Topic: e.topic, Partition: p, Value: []byte("v"), Timestamp: e.base.Add(time.Duration(i) * time.Minute)})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: e.topic, Partition: 0, At: 2})
	if resp, err := e.adm.DeleteRecords(ctx, del); err != nil || resp.Error() != nil {
		t.Fatal(err, resp.Error())
	}
	e.commit(e.g, map[int32]int64{0: 5, 1: 5, 2: 5})
	e.commit(e.old, map[int32]int64{0: 3, 2: 8})
	return e
}

func (e *env) commit(group string, at map[int32]int64) {
	e.t.Helper()
	os := kadm.Offsets{}
	for p, o := range at {
		os.Add(kadm.Offset{Topic: e.topic, Partition: p, At: o, LeaderEpoch: -1})
	}
	if err := e.adm.CommitAllOffsets(context.Background(), group, os); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) plan(spec string, topics ...string) offsets.Plan {
	e.t.Helper()
	sp, err := offsets.ParseSpec(spec)
	if err != nil {
		e.t.Fatal(err)
	}
	req := offsets.Request{Group: e.g, To: sp}
	for _, s := range topics {
		ts, err := offsets.ParseTopicScope(s)
		if err != nil {
			e.t.Fatal(err)
		}
		req.Topics = append(req.Topics, ts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := offsets.MakePlan(ctx, e.resets, req, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// dryRun is what kafka-consumer-groups --reset-offsets --dry-run says for
// the group: "topic:partition" → new offset.
func (e *env) dryRun(args ...string) map[string]int64 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	text, err := e.node.Java(ctx, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
		append([]string{"--bootstrap-server", e.node.Addr(), "--group", e.g, "--reset-offsets", "--dry-run", "--timeout", "60000"}, args...)...)
	if err == nil && strings.Contains(text, "Error:") {
		err = errors.New(strings.TrimSpace(text))
	}
	if err != nil {
		e.t.Fatal(err)
	}
	// GROUP TOPIC PARTITION NEW-OFFSET
	out := map[string]int64{}
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != e.g {
			continue
		}
		n, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			e.t.Fatalf("dry run row %q: %v", line, err)
		}
		out[f[1]+":"+f[2]] = n
	}
	if len(out) == 0 {
		e.t.Fatalf("kafka-consumer-groups %v printed no offsets:\n%s", args, text)
	}
	return out
}

// TestPlanMatchesConsumerGroupsTool plans each spec and compares the
// targets with kafka-consumer-groups --reset-offsets --dry-run.
func TestPlanMatchesConsumerGroupsTool(t *testing.T) {
	eachVersion(t, planMatchesConsumerGroupsTool)
}

// eachVersion runs test on a fresh env of every release of
// testenv.KafkaVersions (4.4 and 4.0), one after the other: the machine's
// cores are better spent on one JVM at a time.
func eachVersion(t *testing.T, test func(*testing.T, *env)) {
	for _, v := range testenv.KafkaVersions {
		t.Run("kafka-"+v, func(t *testing.T) { test(t, newEnv(t, v)) })
	}
}

func planMatchesConsumerGroupsTool(t *testing.T, e *env) {
	at := func(d time.Duration) string { return e.base.Add(d).Format("2006-01-02T15:04:05.000Z") }
	for _, tc := range []struct {
		spec   string
		scope  string // --topic; the whole topic when ""
		tool   []string
		expect string // our targets of partitions 0, 1, 2 (in scope), as a check of the data itself
	}{
		{"earliest", "", []string{"--to-earliest"}, "2 0 0"},
		{"latest", "", []string{"--to-latest"}, "10 10 10"},
		{"shift:-4", "", []string{"--shift-by", "-4"}, "2 1 1"},
		{"shift:+2", "", []string{"--shift-by", "2"}, "7 7 7"},
		{"shift:+7", "", []string{"--shift-by", "7"}, "10 10 10"},
		{"offset:7", ":1", []string{"--to-offset", "7"}, "7"},
		{"offset:1", ":0", []string{"--to-offset", "1"}, "2"},
		{"offset:42", ":2", []string{"--to-offset", "42"}, "10"},
		{"timestamp:" + e.base.Add(3*time.Minute+30*time.Second).Format(time.RFC3339), "", []string{"--to-datetime", at(3*time.Minute + 30*time.Second)}, "4 4 4"},
		{"timestamp:" + e.base.Format(time.RFC3339), "", []string{"--to-datetime", at(0)}, "2 0 0"},
		{"timestamp:" + e.base.Add(time.Hour).Format(time.RFC3339), "", []string{"--to-datetime", at(time.Hour)}, "10 10 10"},
	} {
		t.Run(tc.spec+tc.scope, func(t *testing.T) {
			p := e.plan(tc.spec, e.topic+tc.scope)
			var got []string
			for _, pp := range p.Partitions {
				got = append(got, strconv.FormatInt(*pp.Target, 10))
			}
			if strings.Join(got, " ") != tc.expect {
				t.Errorf("targets %v, want %s", got, tc.expect)
			}
			want := e.dryRun(append(tc.tool, "--topic", e.topic+tc.scope)...)
			if len(want) != len(p.Partitions) {
				t.Errorf("kafka-consumer-groups resets %d partitions, the plan %d: %v", len(want), len(p.Partitions), want)
			}
			for _, pp := range p.Partitions {
				if w, ok := want[fmt.Sprintf("%s:%d", pp.Topic, pp.Partition)]; !ok || w != *pp.Target {
					t.Errorf("%s[%d]: plan %d, kafka-consumer-groups %d (%v)", pp.Topic, pp.Partition, *pp.Target, w, ok)
				}
			}
		})
	}
	// group:old has no counterpart in the tool: the plan copies what
	// kafka-consumer-groups --describe says old committed, and leaves
	// partition 1 (no commit in old) as it is.
	p := e.plan("group:" + e.old)
	desc := e.describe(e.old)
	if len(desc) != 2 {
		t.Errorf("kafka-consumer-groups --describe old: %v, want 2 partitions", desc)
	}
	for _, pp := range p.Partitions {
		key := fmt.Sprintf("%s:%d", pp.Topic, pp.Partition)
		// A partition without a commit is missing from an empty group's
		// description, or shows "-".
		none := desc[key] == "" || desc[key] == "-"
		switch {
		case none && (pp.Target != nil || pp.Warning == ""):
			t.Errorf("%s: no commit in old, planned %v (%q)", key, pp.Target, pp.Warning)
		case !none && (pp.Target == nil || strconv.FormatInt(*pp.Target, 10) != desc[key]):
			t.Errorf("%s: old committed %s, planned %v", key, desc[key], pp.Target)
		}
	}
}

// describe is kafka-consumer-groups --describe --offsets: "topic:partition"
// → CURRENT-OFFSET ("-" for none).
func (e *env) describe(group string) map[string]string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	text, err := e.node.Java(ctx, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
		"--bootstrap-server", e.node.Addr(), "--describe", "--offsets", "--group", group, "--timeout", "60000")
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for line := range strings.Lines(text) {
		if f := strings.Fields(line); len(f) >= 4 && f[0] == group {
			out[f[1]+":"+f[2]] = f[3]
		}
	}
	return out
}

// TestApplyOnRealKafka applies a plan and reads the result with
// kafka-consumer-groups --describe; then live members, classic and
// KIP-848, make apply refuse, and a commit after the plan makes it stale.
func TestApplyOnRealKafka(t *testing.T) {
	eachVersion(t, applyOnRealKafka)
}

func applyOnRealKafka(t *testing.T, e *env) {
	p := e.plan("shift:-4")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := offsets.Apply(ctx, e.resets, p, offsets.ApplyOptions{Who: "test"})
	if err != nil || r.Result != offsets.ResultOK {
		t.Fatalf("apply: %v %+v", err, r)
	}
	desc := e.describe(e.g)
	for i, want := range []string{"2", "1", "1"} {
		if got := desc[fmt.Sprintf("%s:%d", e.topic, i)]; got != want {
			t.Errorf("partition %d: kafka-consumer-groups says %s, want %s", i, got, want)
		}
	}

	// A commit since the plan: stale.
	p = e.plan("earliest")
	e.commit(e.g, map[int32]int64{2: 3})
	if _, err := offsets.Apply(ctx, e.resets, p, offsets.ApplyOptions{}); !errors.Is(err, offsets.ErrStale) {
		t.Errorf("stale apply: %v", err)
	}

	for _, tc := range []struct {
		protocol string
		opts     []kgo.Opt
	}{{"classic", nil}, {"consumer (KIP-848)", []kgo.Opt{kgo.ServerSideBalancer()}}} {
		t.Run(tc.protocol, func(t *testing.T) {
			stop := e.member(tc.opts...)
			defer stop()
			deadline := time.Now().Add(30 * time.Second)
			var p offsets.Plan
			for {
				if p = e.plan("earliest"); p.GroupState == "Stable" || time.Now().After(deadline) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if p.GroupState != "Stable" || len(p.Members) != 1 || p.ApplyRefused == "" {
				t.Fatalf("state %s, members %+v, apply_refused %q", p.GroupState, p.Members, p.ApplyRefused)
			}
			r, err := offsets.Apply(ctx, e.resets, p, offsets.ApplyOptions{})
			if !errors.Is(err, offsets.ErrGroupActive) || r.Result != offsets.ResultRefused {
				t.Errorf("apply: %v, result %s", err, r.Result)
			}
		})
	}
}

// member joins group g with a live franz-go consumer until stop.
func (e *env) member(opts ...kgo.Opt) (stop func()) {
	e.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(e.node.Addr()), kgo.ConsumerGroup(e.g), kgo.ConsumeTopics(e.topic),
		kgo.DisableAutoCommit(), kgo.ClientID("live"),
	}, opts...)...)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	})
	return func() { cancel(); wg.Wait(); cl.Close() }
}
