package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// The tests in this file inject faults only kfake's control hooks can (a
// slow coordinator, an authorization error, one broker unreachable, a
// truncated fetch answer) or test pure functions; the cases every Kafka
// passes, kfake and real Apache Kafka alike, are kafkatest's
// (kafkatest_test.go here, collectors/kafka/realkafka for real nodes).

// testCluster is an in-process Kafka-protocol cluster with an admin client.
type testCluster struct {
	t     *testing.T
	c     *kfake.Cluster
	ports []int
	cl    *kgo.Client
	adm   *kadm.Client
}

func newCluster(t *testing.T, opts ...kfake.Opt) *testCluster {
	t.Helper()
	ports := testenv.FreePorts(t, 3)
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.Ports(ports...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	tc := &testCluster{t: t, c: c, ports: ports, cl: cl, adm: kadm.NewClient(cl)}
	t.Cleanup(func() { cl.Close(); tc.c.Close() })
	return tc
}

func (tc *testCluster) source(opts Options) *Source {
	tc.t.Helper()
	// Topology changes must show on the next poll, not after the client's
	// metadata cache expires.
	opts.Cluster = testenv.KafkaCluster(tc.t, "test", tc.c.ListenAddrs(), kgo.MetadataMinAge(10*time.Millisecond))
	s, err := New(opts)
	if err != nil {
		tc.t.Fatal(err)
	}
	tc.t.Cleanup(s.Close)
	return s
}

func (tc *testCluster) topic(name string, partitions int32) {
	tc.t.Helper()
	if _, err := tc.adm.CreateTopic(context.Background(), partitions, 1, nil, name); err != nil {
		tc.t.Fatal(err)
	}
}

// produce writes n records to each partition, with timestamps one second
// apart ending at last.
func (tc *testCluster) produce(topic string, partition int32, n int, last time.Time) {
	tc.t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{
			Topic: topic, Partition: partition, Value: []byte("v"),
			Timestamp: last.Add(-time.Duration(n-1-i) * time.Second),
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(tc.c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		tc.t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		tc.t.Fatal(err)
	}
}

func (tc *testCluster) commit(group, topic string, offsets map[int32]int64) {
	tc.t.Helper()
	os := kadm.Offsets{}
	for p, at := range offsets {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
	}
	if err := tc.adm.CommitAllOffsets(context.Background(), group, os); err != nil {
		tc.t.Fatal(err)
	}
}

// poll polls s as the scheduler does until no lag seconds are pending: the
// first poll after a start publishes lag at once, Finish then reads the
// record timestamps, and the next poll has them.
func poll(t *testing.T, s *Source) *queue.Snapshot {
	t.Helper()
	snap := pollOnce(t, s)
	if snap.LagSecondsPending() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if !s.Finish(ctx) {
			t.Fatal("lag seconds pending, but Finish had nothing to read")
		}
		if snap = pollOnce(t, s); snap.LagSecondsPending() {
			t.Fatal("lag seconds still pending after Finish")
		}
	}
	return snap
}

func pollOnce(t *testing.T, s *Source) *queue.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	snap, err := s.Poll(ctx)
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	return snap
}

func group(t *testing.T, snap *queue.Snapshot, name string) *queue.ConsumerGroup {
	t.Helper()
	g, ok := snap.Group(name)
	if !ok {
		t.Fatalf("group %q missing from snapshot (groups: %d)", name, len(snap.Groups))
	}
	return g
}

func TestGroupAuthorizationFailure(t *testing.T) {
	tc := newCluster(t)
	tc.topic("a", 1)
	tc.produce("a", 0, 4, time.Now())
	tc.commit("secret", "a", map[int32]int64{0: 0})
	tc.commit("open", "a", map[int32]int64{0: 1})
	tc.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetFetch}, Group: "secret", Err: kerr.GroupAuthorizationFailed, Count: -1})
	snap := poll(t, tc.source(Options{}))
	if g := group(t, snap, "secret"); g.Err == "" || len(g.Partitions) != 0 {
		t.Errorf("secret: err %q partitions %d; want an error and no partitions", g.Err, len(g.Partitions))
	}
	if g := group(t, snap, "open"); g.Err != "" || g.TotalLag() != 3 {
		t.Errorf("open: err %q lag %d; one failing group must not affect another", g.Err, g.TotalLag())
	}
	if len(snap.Partial) != 1 {
		t.Errorf("partial %v", snap.Partial)
	}
}

func TestEndHistoryInterpolation(t *testing.T) {
	t0 := time.Unix(1000, 0)
	h := endHistory{}
	for i, end := range []int64{100, 200, 400} {
		h.observe(t0.Add(time.Duration(i)*10*time.Second), offsetTable{"t": {0: {Topic: "t", End: end}}})
	}
	tests := []struct {
		offset int64
		want   time.Time
		ok     bool
	}{
		{150, t0.Add(5 * time.Second), true},
		{300, t0.Add(15 * time.Second), true},
		{50, t0, true},            // before history: the oldest sample bounds it
		{400, time.Time{}, false}, // not produced yet
	}
	for _, tt := range tests {
		got, ok := h.producedAt(tp{"t", 0}, tt.offset)
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("producedAt(%d) = %v, %v; want %v, %v", tt.offset, got, ok, tt.want, tt.ok)
		}
	}
}

func TestEndHistoryBounded(t *testing.T) {
	h := endHistory{}
	t0 := time.Unix(0, 0)
	for i := range 1000 {
		h.observe(t0.Add(time.Duration(i)*time.Second), offsetTable{"t": {0: {End: int64(i)}}})
	}
	s := h[tp{"t", 0}]
	if len(s) > maxEndSamples || s[0].end != 0 || s[len(s)-1].end != 999 {
		t.Errorf("%d samples from %d to %d", len(s), s[0].end, s[len(s)-1].end)
	}
	h.observe(t0, offsetTable{})
	if len(h) != 0 {
		t.Error("history kept a partition that no longer exists")
	}
}

// TestSlowCoordinator delays OffsetFetch on one group's coordinator past its
// share of the poll deadline: that coordinator's groups are marked, the poll
// succeeds, and groups on other coordinators are exact. (The delay is shorter
// than the whole deadline: a broker answers a connection's requests in
// order, so later requests to that broker wait it out.)
func TestSlowCoordinator(t *testing.T) {
	tc := newCluster(t)
	tc.topic("a", 1)
	tc.produce("a", 0, 5, time.Now())
	slowNode := tc.c.CoordinatorFor("slow")
	fast := ""
	for i := range 100 {
		g := fmt.Sprintf("fast-%d", i)
		if tc.c.CoordinatorFor(g) != slowNode {
			fast = g
			break
		}
	}
	tc.commit("slow", "a", map[int32]int64{0: 1})
	tc.commit(fast, "a", map[int32]int64{0: 2})

	release := make(chan struct{})
	defer close(release)
	tc.c.ControlKey(int16(kmsg.OffsetFetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		tc.c.KeepControl()
		if tc.c.CurrentNode() == slowNode {
			tc.c.SleepControl(func() {
				select {
				case <-release:
				case <-time.After(2 * time.Second):
				}
			})
		}
		return nil, nil, false
	})
	s := tc.source(Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 4500*time.Millisecond)
	defer cancel()
	snap, err := s.Poll(ctx)
	if err != nil {
		t.Fatalf("a slow coordinator failed the whole poll: %v", err)
	}
	if g := group(t, snap, "slow"); g.Err == "" {
		t.Errorf("slow group has no error: %+v", g)
	}
	if g := group(t, snap, fast); g.Err != "" || g.TotalLag() != 3 {
		t.Errorf("group %s on another coordinator: err %q lag %d; want lag 3", fast, g.Err, g.TotalLag())
	}
}

// TestOneBrokerDown closes every connection to one broker: groups and
// partitions it serves are marked or left out, everything else is exact, and
// the poll as a whole succeeds.
func TestOneBrokerDown(t *testing.T) {
	tc := newCluster(t)
	tc.topic("a", 6)
	for p := range int32(6) {
		tc.produce("a", p, 5, time.Now())
	}
	const down = 2
	var groups []string
	for i := range 30 {
		g := fmt.Sprintf("g-%d", i)
		tc.commit(g, "a", map[int32]int64{0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1})
		groups = append(groups, g)
	}
	s := tc.source(Options{})
	poll(t, s)

	tc.c.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		tc.c.KeepControl()
		if tc.c.CurrentNode() == down {
			return nil, errors.New("broker down"), true
		}
		return nil, nil, false
	})
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	snap, err := s.Poll(ctx)
	if err != nil {
		t.Fatalf("one broker down failed the whole poll: %v", err)
	}
	var healthy, marked int
	for _, g := range groups {
		cg := group(t, snap, g)
		switch {
		case cg.Err != "":
			marked++
		case len(cg.Partitions) > 0:
			healthy++
			for _, p := range cg.Partitions {
				if p.Lag != 4 {
					t.Errorf("%s %s/%d: lag %d, want 4", g, p.Topic, p.Partition, p.Lag)
				}
			}
		}
	}
	if healthy == 0 || marked == 0 {
		t.Errorf("%d healthy and %d marked groups; want both (groups are spread over 3 coordinators)", healthy, marked)
	}
}

// TestLagSecondsOversizedBatch makes the broker answer a multi-partition
// fetch the way Kafka does for batches larger than the per-partition limit
// (beyond the first partition): no records, though the partition has some.
// The timestamps must still be fetched, not estimated.
func TestLagSecondsOversizedBatch(t *testing.T) {
	tc := newCluster(t)
	tc.topic("big", 3)
	at := time.Now().Add(-10 * time.Minute).Truncate(time.Millisecond)
	for p := range int32(3) {
		tc.produce("big", p, 1, at)
	}
	tc.commit("g", "big", map[int32]int64{0: 0, 1: 0, 2: 0})
	tc.c.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		tc.c.KeepControl()
		req := kreq.(*kmsg.FetchRequest)
		if len(req.Topics) != 1 || len(req.Topics[0].Partitions) < 2 {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = req.Topics[0].Topic, req.Topics[0].TopicID
		for _, p := range req.Topics[0].Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.HighWatermark, rp.LastStableOffset = p.Partition, 1, 1
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
	// One broker leads all three partitions, so they share one fetch.
	for p := range int32(3) {
		if err := tc.c.MoveTopicPartition("big", p, 0); err != nil {
			t.Fatal(err)
		}
	}
	g := group(t, poll(t, tc.source(Options{})), "g")
	want := time.Since(at).Seconds()
	for _, pl := range g.Partitions {
		if pl.LagSecondsEstimated || pl.LagSeconds < want-5 || pl.LagSeconds > want+5 {
			t.Errorf("p%d: lag seconds %.0f (estimated %v), want ≈%.0f fetched", pl.Partition, pl.LagSeconds, pl.LagSecondsEstimated, want)
		}
	}
}

// TestLagBeforeTimestamps holds every Fetch (the reads of record timestamps):
// the first poll must still return at once with every group's lag, lag
// seconds marked pending rather than 0, having sent no Fetch; Finish then
// reads the timestamps and the next poll carries them.
func TestLagBeforeTimestamps(t *testing.T) {
	tc := newCluster(t)
	tc.topic("orders", 3)
	now := time.Now().Truncate(time.Millisecond)
	for p := range int32(3) {
		tc.produce("orders", p, 10, now.Add(-time.Minute))
	}
	tc.commit("billing", "orders", map[int32]int64{0: 4, 1: 10, 2: 10})
	tc.commit("shipping", "orders", map[int32]int64{0: 2, 1: 7, 2: 10})

	release := make(chan struct{})
	var held atomic.Int32
	tc.c.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		tc.c.KeepControl()
		held.Add(1)
		tc.c.SleepControl(func() { <-release })
		return nil, nil, false
	})

	s := tc.source(Options{})
	start := time.Now()
	snap := pollOnce(t, s)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("first poll took %s: it waited for the held record fetch", took)
	}
	want := map[string]map[int32]int64{"billing": {0: 6, 1: 0, 2: 0}, "shipping": {0: 8, 1: 3, 2: 0}}
	for name, lags := range want {
		g := group(t, snap, name)
		for p, lag := range lags {
			pl := partition(t, g, "orders", p)
			if pl.Lag != lag {
				t.Errorf("%s/%d: lag %d, want %d", name, p, pl.Lag, lag)
			}
			if pl.LagSecondsPending != (lag > 0) || pl.LagSeconds != 0 || pl.LagSecondsEstimated {
				t.Errorf("%s/%d: lag seconds %.1f pending %v estimated %v; want pending only where lag > 0",
					name, p, pl.LagSeconds, pl.LagSecondsPending, pl.LagSecondsEstimated)
			}
		}
		if !g.LagSecondsPending() {
			t.Errorf("%s: group not marked pending", name)
		}
	}

	if n := held.Load(); n != 0 {
		t.Errorf("the first poll sent %d fetch requests; it must leave them to Finish", n)
	}
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !s.Finish(ctx) {
		t.Fatal("Finish read nothing after a poll left lag seconds pending")
	}
	if held.Load() == 0 {
		t.Fatal("no fetch went through the held control: the test did not delay timestamps")
	}
	if s.Finish(ctx) {
		t.Error("a second Finish read again: nothing was pending")
	}
	snap = pollOnce(t, s)
	for name, lags := range want {
		g := group(t, snap, name)
		if g.LagSecondsPending() {
			t.Errorf("%s: lag seconds still pending after the refresh", name)
		}
		for p, lag := range lags {
			pl := partition(t, g, "orders", p)
			// Records 0..9 are a second apart, the last a minute before now.
			age := time.Since(now.Add(-time.Minute - time.Duration(9-(10-lag))*time.Second)).Seconds()
			if lag > 0 && (pl.LagSecondsEstimated || pl.LagSeconds < age-2 || pl.LagSeconds > age+2) {
				t.Errorf("%s/%d: lag seconds %.1f (estimated %v), want ≈%.1f fetched", name, p, pl.LagSeconds, pl.LagSecondsEstimated, age)
			}
		}
	}
}

// TestOneFetchForManyOffsets puts five groups at five offsets of one
// partition: the batch read at the lowest offset holds every record they
// need, so one Fetch must serve them all, each with its own record's age.
func TestOneFetchForManyOffsets(t *testing.T) {
	tc := newCluster(t, kfake.NumBrokers(1))
	tc.topic("orders", 1)
	now := time.Now().Truncate(time.Millisecond)
	tc.produce("orders", 0, 10, now.Add(-time.Minute))
	for at := range int64(5) {
		tc.commit(fmt.Sprintf("g%d", at), "orders", map[int32]int64{0: at})
	}
	s := tc.source(Options{})
	snap := poll(t, s)
	if n := s.Requests(int16(kmsg.Fetch)); n != 1 {
		t.Errorf("%d fetch requests for five offsets of one partition, want 1", n)
	}
	for at := range int64(5) {
		pl := partition(t, group(t, snap, fmt.Sprintf("g%d", at)), "orders", 0)
		// Record i was produced 9-i seconds before the last, a minute ago.
		want := time.Since(now.Add(-time.Minute - time.Duration(9-at)*time.Second)).Seconds()
		if pl.LagSecondsEstimated || pl.LagSeconds < want-2 || pl.LagSeconds > want+2 {
			t.Errorf("g%d: lag seconds %.1f (estimated %v), want ≈%.1f", at, pl.LagSeconds, pl.LagSecondsEstimated, want)
		}
	}
}

// partition returns g's lag on topic/p, failing the test when it has none.
func partition(t *testing.T, g *queue.ConsumerGroup, topic string, p int32) queue.PartitionLag {
	t.Helper()
	for _, pl := range g.Partitions {
		if pl.Topic == topic && pl.Partition == p {
			return pl
		}
	}
	t.Fatalf("group %s has no %s/%d (partitions %+v)", g.Name, topic, p, g.Partitions)
	return queue.PartitionLag{}
}
