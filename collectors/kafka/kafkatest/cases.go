package kafkatest

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	collector "github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// Run runs every case that leaves the cluster serving, each as a parallel
// subtest of t on the cluster that newCluster returns for it (a new one,
// or a shared one).
func Run(t *testing.T, newCluster func(t *testing.T) Cluster) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, e *env)
	}{
		{"PollLag", pollLag},
		{"LogAppendTime", logAppendTime},
		{"CommittedBelowLogStart", committedBelowLogStart},
		{"ReadCommitted", readCommitted},
		{"KIP848Group", kip848Group},
		{"TopologyChanges", topologyChanges},
		{"GroupFilter", groupFilter},
		{"PollCost", pollCost},
		{"DLQDepthAndCursor", dlqDepthAndCursor},
		{"LagSecondsOversizedBatch", lagSecondsOversizedBatch},
		{"RetentionHeadroom", retentionHeadroom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newEnv(t, newCluster(t)))
		})
	}
}

// pollLag: lag per partition (committed, fully read, never committed),
// lag seconds read from the record at the committed offset, the group's
// state, and the partitions' end offsets.
func pollLag(t *testing.T, e *env) {
	orders := e.topic(3, nil)
	now := time.Now().Truncate(time.Millisecond)
	for p := range int32(3) {
		e.produce(orders, p, 10, now.Add(-time.Minute))
	}
	billing := testenv.Unique("billing")
	e.commit(billing, orders, map[int32]int64{0: 4, 1: 10})

	snap := Poll(t, e.source(collector.Options{}, billing))
	g := Group(t, snap, billing)
	tests := []struct {
		p          int32
		lag        int64
		hasCommit  bool
		lagSeconds float64 // age of the record at the committed offset
	}{
		{0, 6, true, time.Since(now.Add(-time.Minute - 5*time.Second)).Seconds()},
		{1, 0, true, 0},
		{2, 10, false, time.Since(now.Add(-time.Minute - 9*time.Second)).Seconds()},
	}
	for _, tt := range tests {
		pl := Partition(t, g, orders, tt.p)
		if pl.Lag != tt.lag || pl.HasCommit != tt.hasCommit || pl.End != 10 {
			t.Errorf("p%d: lag %d commit %v end %d; want lag %d commit %v end 10", tt.p, pl.Lag, pl.HasCommit, pl.End, tt.lag, tt.hasCommit)
		}
		if d := pl.LagSeconds - tt.lagSeconds; d > 2 || d < -2 {
			t.Errorf("p%d: lag seconds %.1f, want ≈%.1f", tt.p, pl.LagSeconds, tt.lagSeconds)
		}
		if pl.LagSecondsEstimated {
			t.Errorf("p%d: lag seconds estimated, want fetched", tt.p)
		}
	}
	if g.TotalLag() != 16 || g.State != "Empty" || g.Members != 0 {
		t.Errorf("group: total %d state %q members %d", g.TotalLag(), g.State, g.Members)
	}
	var offsets []queue.PartitionOffsets
	for _, po := range snap.Partitions {
		if po.Topic == orders {
			offsets = append(offsets, po)
		}
	}
	if len(offsets) != 3 || offsets[0].End != 10 {
		t.Errorf("partition offsets of %s: %+v", orders, offsets)
	}
}

// logAppendTime: on a topic with message.timestamp.type=LogAppendTime the
// broker's append time replaces the producer's timestamp, and lag seconds
// follow the append time.
func logAppendTime(t *testing.T, e *env) {
	if e.c.Emulated() {
		t.Skip("kfake keeps the producer's timestamp on a LogAppendTime topic")
	}
	logAppend := "LogAppendTime"
	appended := e.topic(1, map[string]*string{"message.timestamp.type": &logAppend})
	begin := time.Now()
	e.produce(appended, 0, 10, begin.Add(-time.Hour))
	g := testenv.Unique("appended")
	e.commit(g, appended, map[int32]int64{0: 4})
	pl := Partition(t, Group(t, Poll(t, e.source(collector.Options{}, g)), g), appended, 0)
	if age := time.Since(begin).Seconds(); pl.Lag != 6 || pl.LagSecondsEstimated || pl.LagSeconds > age+2 {
		t.Errorf("LogAppendTime topic: lag %d, lag seconds %.1f (estimated %v); want 6 and at most %.1f (appended since the case began, not an hour ago)",
			pl.Lag, pl.LagSeconds, pl.LagSecondsEstimated, age)
	}
}

// committedBelowLogStart: records deleted below a group's committed offset
// are counted lost, and lag runs from the log start.
func committedBelowLogStart(t *testing.T, e *env) {
	logs := e.topic(1, nil)
	e.produce(logs, 0, 10, time.Now())
	slow := testenv.Unique("slow")
	e.commit(slow, logs, map[int32]int64{0: 2})
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: logs, Partition: 0, At: 5})
	resp, err := e.adm.DeleteRecords(context.Background(), os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	pl := Partition(t, Group(t, Poll(t, e.source(collector.Options{}, slow)), slow), logs, 0)
	if pl.Lag != 5 || pl.Lost != 3 || pl.LogStart != 5 {
		t.Errorf("lag %d lost %d log start %d; want 5, 3, 5", pl.Lag, pl.Lost, pl.LogStart)
	}
}

// readCommitted: a transactional producer commits 3 records and aborts 2
// (each with its marker), then leaves 4 in an open transaction. A group
// committed at the last stable offset has no lag read_committed, and the
// open transaction's 4 read_uncommitted.
func readCommitted(t *testing.T, e *env) {
	ledger := e.topic(1, nil)
	ctx := context.Background()
	// The open transaction must outlive the case on a loaded machine: at
	// franz-go's default timeout (40s) a real broker aborts it.
	txn, err := kgo.NewClient(kgo.SeedBrokers(e.c.Addrs()...), kgo.TransactionalID(testenv.Unique("txn")),
		kgo.DefaultProduceTopic(ledger), kgo.TransactionTimeout(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	for _, tx := range []struct {
		n   int
		end kgo.TransactionEndTry
	}{{3, kgo.TryCommit}, {2, kgo.TryAbort}} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for range tx.n {
			if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := txn.EndTransaction(ctx, tx.end); err != nil {
			t.Fatal(err)
		}
	}
	stable := int64(3 + 1 + 2 + 1)
	reader := testenv.Unique("reader")
	e.commit(reader, ledger, map[int32]int64{0: stable})
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	committed := Partition(t, Group(t, Poll(t, e.source(collector.Options{ReadCommitted: true}, reader)), reader), ledger, 0)
	if committed.Lag != 0 || committed.End != stable {
		t.Errorf("read_committed: lag %d end %d; want 0, %d", committed.Lag, committed.End, stable)
	}
	uncommitted := Partition(t, Group(t, Poll(t, e.source(collector.Options{}, reader)), reader), ledger, 0)
	if uncommitted.Lag != 4 {
		t.Errorf("read_uncommitted: lag %d; want 4 (the open transaction)", uncommitted.Lag)
	}
	if err := txn.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
}

// kip848Group: a franz-go consumer in a KIP-848 consumer group reads
// everything and commits; queuewatch shows one member owning every
// partition, state Stable, type consumer, and no lag.
func kip848Group(t *testing.T, e *env) {
	shipments := e.topic(4, nil)
	for p := range int32(4) {
		e.produce(shipments, p, 5, time.Now())
	}
	shipping := testenv.Unique("shipping")
	consumer, err := kgo.NewClient(kgo.SeedBrokers(e.c.Addrs()...),
		kgo.ConsumerGroup(shipping), kgo.ServerSideBalancer(), kgo.ConsumeTopics(shipments),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ClientID("shipper-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	s := e.source(collector.Options{}, shipping)
	// A real broker takes a few heartbeats to assign every partition.
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		consumer.PollFetches(ctx)
		cancel()
		if err := consumer.CommitUncommittedOffsets(context.Background()); err != nil {
			t.Fatal(err)
		}
		snap := Poll(t, s)
		if g, ok := snap.Group(shipping); ok && g.Members == 1 && g.TotalLag() == 0 && len(g.Partitions) == 4 {
			for _, pl := range g.Partitions {
				if pl.Member != "shipper-1" {
					t.Errorf("848 group p%d: member %q; want shipper-1", pl.Partition, pl.Member)
				}
			}
			if g.Type != queue.GroupConsumer || g.State != "Stable" {
				t.Errorf("848 group: type %q state %q", g.Type, g.State)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("848 group never showed 1 member and lag 0: %+v", snap.Groups)
		}
	}
}

// topologyChanges: one source, polled across a partition added, a topic
// deleted and a group deleted, reports each change on its next poll.
func topologyChanges(t *testing.T, e *env) {
	a, b := e.topic(1, nil), e.topic(1, nil)
	e.produce(a, 0, 3, time.Now())
	e.produce(b, 0, 3, time.Now())
	g, gone := testenv.Unique("g"), testenv.Unique("gone")
	e.commit(g, a, map[int32]int64{0: 1})
	e.commit(g, b, map[int32]int64{0: 1})
	e.commit(gone, a, map[int32]int64{0: 0})
	s := e.source(collector.Options{}, g, gone)
	if got := Group(t, Poll(t, s), g); len(got.Partitions) != 2 {
		t.Fatalf("partitions %+v", got.Partitions)
	}
	ctx := context.Background()

	t.Run("partition added", func(t *testing.T) {
		e := e.with(t)
		if _, err := e.adm.CreatePartitions(ctx, 1, a); err != nil {
			t.Fatal(err)
		}
		e.waitPartitions(a, 2)
		e.produce(a, 1, 7, time.Now())
		pl := Partition(t, Group(t, Poll(t, s), g), a, 1)
		if pl.HasCommit || pl.Lag != 7 {
			t.Errorf("new partition: commit %v lag %d; want uncommitted with lag 7", pl.HasCommit, pl.Lag)
		}
	})
	t.Run("topic deleted", func(t *testing.T) {
		e := e.with(t)
		if _, err := e.adm.DeleteTopics(ctx, b); err != nil {
			t.Fatal(err)
		}
		// A real broker's metadata, and the collector's metadata cached
		// for a second, may list the topic for a moment after the delete
		// answered: it must be gone within a few polls.
		deadline := time.Now().Add(10 * time.Second)
		for {
			stale := slices.ContainsFunc(Group(t, Poll(t, s), g).Partitions, func(pl queue.PartitionLag) bool { return pl.Topic == b })
			if !stale {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("deleted topic %s still reported 10 s after the delete", b)
			}
			time.Sleep(500 * time.Millisecond)
		}
	})
	t.Run("group deleted", func(t *testing.T) {
		e := e.with(t)
		if _, err := e.adm.DeleteGroup(ctx, gone); err != nil {
			t.Fatal(err)
		}
		if _, ok := Poll(t, s).Group(gone); ok {
			t.Error("deleted group still reported")
		}
	})
}

// groupFilter: a group the include filter rejects is not reported.
func groupFilter(t *testing.T, e *env) {
	a := e.topic(1, nil)
	keep, drop := testenv.Unique("keep-me"), testenv.Unique("drop-me")
	e.commit(keep, a, map[int32]int64{0: 0})
	e.commit(drop, a, map[int32]int64{0: 0})
	snap := Poll(t, e.source(collector.Options{IncludeGroup: func(g string) bool { return g == keep }}))
	if len(snap.Groups) != 1 || snap.Groups[0].Name != keep {
		t.Errorf("groups %+v; want %s only", snap.Groups, keep)
	}
	if _, ok := snap.Group(drop); ok {
		t.Errorf("group %s reported though the filter rejects it", drop)
	}
}

// pollCost: a poll's requests grow with brokers, never with groups ×
// partitions, and unchanged committed offsets are never fetched twice.
func pollCost(t *testing.T, e *env) {
	brokers := int64(e.c.Brokers())
	// ListGroups, DescribeGroups, OffsetFetch and three ListOffsets reach
	// each broker at most once. Metadata comes on top: the poll's own
	// request and, on a slow machine, a refresh of the cache franz-go's
	// sharded requests route by when it is older than the collector's
	// metadata min age (1s). Coordinator lookups add at most one per
	// broker.
	maxPerPoll, maxMetadata, maxTotal := 6*brokers, int64(3), max(7*brokers, 6+3)
	for _, tt := range []struct {
		partitions int32
		groups     int
	}{{3, 2}, {48, 2}, {48, 40}} {
		topic := e.topic(tt.partitions, nil)
		offsets := map[int32]int64{}
		var recs []*kgo.Record
		for p := range tt.partitions {
			for range 3 {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("v")})
			}
			offsets[p] = 1
		}
		e.produceRecords(recs...)
		var groups []string
		for range tt.groups {
			g := testenv.Unique("cost")
			e.commit(g, topic, offsets)
			groups = append(groups, g)
		}
		// The collector's own metadata min age, not the other cases'
		// 10ms: no topic changes here.
		s := e.source(collector.Options{Cluster: e.accessWith(config.DefaultKafkaCursorGroup)}, groups...)
		if snap := Poll(t, s); len(snap.Groups) != tt.groups || snap.Groups[0].TotalLag() != int64(tt.partitions)*2 {
			t.Fatalf("groups %d, first lag %d; want %d groups lagging %d", len(snap.Groups), snap.Groups[0].TotalLag(), tt.groups, tt.partitions*2)
		}
		fetches := s.Requests(int16(kmsg.Fetch))
		if fetches > brokers {
			t.Errorf("%d partitions × %d groups: first poll sent %d fetch requests, want ≤ %d (one per leader)",
				tt.partitions, tt.groups, fetches, brokers)
		}
		before := map[int16]int64{-1: s.Requests(-1)}
		for k := range int16(100) {
			before[k] = s.Requests(k)
		}
		Poll(t, s)
		md := s.Requests(int16(kmsg.Metadata)) - before[int16(kmsg.Metadata)]
		total := s.Requests(-1) - before[-1]
		if n := total - md; n > maxPerPoll || md > maxMetadata || total > maxTotal {
			t.Errorf("%d partitions × %d groups: a poll sent %d requests and %d metadata requests, want ≤ %d and ≤ %d, ≤ %d in all",
				tt.partitions, tt.groups, n, md, maxPerPoll, maxMetadata, maxTotal)
			for k := range int16(100) {
				if n := s.Requests(k) - before[k]; n > 0 {
					t.Logf("%s: %d", kmsg.NameForKey(k), n)
				}
			}
		}
		if n := s.Requests(int16(kmsg.Fetch)) - fetches; n != 0 {
			t.Errorf("second poll sent %d fetch requests; cached timestamps should need none", n)
		}
	}
}

// dlqDepthAndCursor: DLQ depth counted from the replay cursor group, the
// source from Spring's and Connect's headers, the oldest record's age, and
// the source remembered once the DLQ is empty.
func dlqDepthAndCursor(t *testing.T, e *env) {
	base := testenv.Unique("orders")
	dlt, dlq := base+".DLT", base+"-payments-dlq"
	e.createTopic(dlt, 2, nil)
	e.createTopic(dlq, 1, nil)
	e.createTopic(base, 1, nil)
	oldest := time.Now().Add(-2 * time.Hour).Truncate(time.Millisecond)
	offset := make([]byte, 8)
	binary.BigEndian.PutUint64(offset, 42)
	var recs []*kgo.Record
	for i := range 5 {
		recs = append(recs, &kgo.Record{
			Topic: dlt, Partition: int32(i % 2), Value: []byte("{}"),
			Timestamp: oldest.Add(time.Duration(i) * time.Minute),
			Headers: []kgo.RecordHeader{
				{Key: "kafka_dlt-original-topic", Value: []byte("orders-v2")},
				{Key: "kafka_dlt-original-offset", Value: offset},
			},
		})
	}
	recs = append(recs, &kgo.Record{
		Topic: dlq, Value: []byte("x"), Timestamp: oldest,
		Headers: []kgo.RecordHeader{{Key: "__connect.errors.topic", Value: []byte("payments")}},
	})
	e.produceRecords(recs...)

	// A cursor group of the case's own, so cases sharing a cluster never
	// see each other's replays; only this case's topics are DLQs.
	cursor := testenv.Unique("cursor")
	ours := regexp.MustCompile("^" + regexp.QuoteMeta(base) + `.*[._-](dlq|DLT)$`)
	s := e.source(collector.Options{
		Cluster:      e.access(cursor),
		IncludeGroup: func(string) bool { return false },
		DLQTopic: func(topic string) (queue.DLQDetection, bool) {
			return queue.DetectedName, ours.MatchString(topic)
		},
	})

	snap := Poll(t, s)
	if len(snap.DLQs) != 2 {
		t.Fatalf("DLQs %+v; want %s and %s only", snap.DLQs, dlt, dlq)
	}
	d := FindDLQ(t, snap, dlt)
	if d.Messages != 5 || d.Source() != "orders-v2" || d.Detection != queue.DetectedName || d.VHost != "" {
		t.Errorf("%s: %+v; want 5 messages from orders-v2 (Spring header)", dlt, d)
	}
	if age := time.Since(oldest); !d.HasOldestAge || d.OldestAge < age-5*time.Second || d.OldestAge > age+5*time.Second {
		t.Errorf("oldest age %v (known %v), want ≈%v", d.OldestAge, d.HasOldestAge, age)
	}
	if p := FindDLQ(t, snap, dlq); p.Messages != 1 || p.Source() != "payments" {
		t.Errorf("%s: %+v; want 1 message from payments (Connect header)", dlq, p)
	}

	e.commit(cursor, dlt, map[int32]int64{0: 2, 1: 2})
	d = FindDLQ(t, Poll(t, s), dlt)
	if d.Messages != 1 || d.Source() != "orders-v2" {
		t.Errorf("after cursor: %+v; want 1 message, source kept", d)
	}
	if age := time.Since(oldest.Add(4 * time.Minute)); d.OldestAge < age-5*time.Second || d.OldestAge > age+5*time.Second {
		t.Errorf("after cursor: oldest age %v, want ≈%v", d.OldestAge, age)
	}
	e.commit(cursor, dlt, map[int32]int64{0: 3})
	if d = FindDLQ(t, Poll(t, s), dlt); d.Messages != 0 || d.HasOldestAge || d.Source() != "orders-v2" {
		t.Errorf("fully replayed: %+v; want 0 messages, no age, source remembered", d)
	}
}

// lagSecondsOversizedBatch: each partition holds one batch larger than
// what queuewatch asks per partition. Apache Kafka answers such a
// partition, unless it is the first of the request, with a truncated batch
// (kfake sends it whole; collectors/kafka injects the truncation there);
// lag seconds must still be read from the record, not estimated.
func lagSecondsOversizedBatch(t *testing.T, e *env) {
	topic := e.topic(3, nil)
	at := time.Now().Add(-10 * time.Minute).Truncate(time.Millisecond)
	// Random bytes: franz-go compresses batches, and a batch must stay
	// larger than 64 KiB on the broker.
	big := make([]byte, 100<<10)
	for i := range big {
		big[i] = byte(rand.Uint32())
	}
	for p := range int32(3) {
		e.produceRecords(&kgo.Record{Topic: topic, Partition: p, Value: big, Timestamp: at})
	}
	g := testenv.Unique("g")
	e.commit(g, topic, map[int32]int64{0: 0, 1: 0, 2: 0})

	got := Group(t, Poll(t, e.source(collector.Options{}, g)), g)
	want := time.Since(at).Seconds()
	for _, pl := range got.Partitions {
		if pl.LagSecondsEstimated || pl.LagSeconds < want-5 || pl.LagSeconds > want+5 {
			t.Errorf("p%d: lag seconds %.0f (estimated %v), want ≈%.0f fetched", pl.Partition, pl.LagSeconds, pl.LagSecondsEstimated, want)
		}
	}
}

// retentionHeadroom: a lagging group's headroom is its topic's
// retention.ms, as the broker describes it, less the age of the next
// record the group reads; there is none on a topic that keeps records
// forever or only compacts them, and none for a group that read
// everything.
func retentionHeadroom(t *testing.T, e *env) {
	hour, forever, compact := "3600000", "-1", "compact"
	kept := e.topic(1, map[string]*string{"retention.ms": &hour})
	eternal := e.topic(1, map[string]*string{"retention.ms": &forever})
	compacted := e.topic(1, map[string]*string{"retention.ms": &hour, "cleanup.policy": &compact})
	// The records are 40 minutes old: 20 minutes from deletion.
	last := time.Now().Add(-40 * time.Minute).Truncate(time.Millisecond)
	var recs []*kgo.Record
	for _, topic := range []string{kept, eternal, compacted} {
		for i := range 10 {
			recs = append(recs, &kgo.Record{
				Topic: topic, Key: []byte{byte(i)}, Value: []byte("v"),
				Timestamp: last.Add(-time.Duration(9-i) * time.Second),
			})
		}
	}
	e.produceRecords(recs...)
	behind, caughtUp, onEternal, onCompacted := testenv.Unique("behind"), testenv.Unique("caught-up"), testenv.Unique("eternal"), testenv.Unique("compacted")
	e.commit(behind, kept, map[int32]int64{0: 4})
	e.commit(caughtUp, kept, map[int32]int64{0: 10})
	e.commit(onEternal, eternal, map[int32]int64{0: 4})
	e.commit(onCompacted, compacted, map[int32]int64{0: 4})

	snap := Poll(t, e.source(collector.Options{}, behind, caughtUp, onEternal, onCompacted))

	// The broker's own setting, read back, not the one the test asked for.
	rc, err := e.adm.DescribeTopicConfigs(context.Background(), kept)
	if err != nil {
		t.Fatal(err)
	}
	c, err := rc.On(kept, nil)
	if err == nil {
		err = c.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	var retention time.Duration
	for _, cfg := range c.Configs {
		if cfg.Key == "retention.ms" && cfg.Value != nil {
			ms, _ := strconv.ParseInt(*cfg.Value, 10, 64)
			retention = time.Duration(ms) * time.Millisecond
		}
	}
	// The next record behind reads, offset 4, was produced 5s before last.
	want := (retention - time.Since(last.Add(-5*time.Second))).Seconds()
	h := Group(t, snap, behind).Headroom
	if !h.Known || h.Projected || h.Seconds < want-3 || h.Seconds > want+1 || h.Where != kept+"/0" || h.Limit != "retention.ms 1h" {
		t.Errorf("headroom %+v; want ≈%.0fs from retention.ms %s on %s/0", h, want, retention, kept)
	}
	for _, g := range []string{caughtUp, onEternal, onCompacted} {
		if h := Group(t, snap, g).Headroom; h.Known {
			t.Errorf("group %s: headroom %+v; want none", g, h)
		}
	}
}
