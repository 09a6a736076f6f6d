// Package kafkatest is the one set of lag and DLQ cases queuewatch's Kafka
// collector passes on every Kafka it is tested against: franz-go's
// in-process kfake (collectors/kafka's tests) and real Apache Kafka nodes
// (collectors/kafka/realkafka's). A test supplies a Cluster and calls Run,
// and RunKilledAndBack where the cluster may be stopped, and
// RunLeaderKilled where one of several brokers may be (a Failover);
// adding a broker version or a topology means writing a Cluster, not new
// cases, and a case added here runs on all of them.
//
// Every case names its topics and groups uniquely (testenv.Unique), so the
// cases share one cluster and run in parallel on a real node that takes
// seconds to start, and start a cluster of their own on kfake, which takes a
// millisecond. Records, topics and commits go through franz-go's client and
// admin client, the same requests on every cluster. The cases that inject
// faults only kfake can (a slow coordinator, an authorization error, one
// broker unreachable, a truncated fetch answer) stay in collectors/kafka.
package kafkatest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	collector "github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// Cluster is one Kafka cluster the cases run against.
type Cluster interface {
	// Addrs are the bootstrap addresses of its plaintext listeners.
	Addrs() []string
	// Brokers is how many brokers serve; the poll-cost case allows
	// requests per broker.
	Brokers() int
	// Emulated reports whether the cluster is kfake, which does a few
	// things differently from Apache Kafka (README, Tested against): a
	// case testing one of those skips there and says why.
	Emulated() bool
	// Kill stops every broker at once, as a crash would, keeping the
	// data; Restart starts them again on the same ports and data and
	// returns once they serve. Only RunKilledAndBack calls them.
	Kill(t *testing.T)
	Restart(t *testing.T)
}

// pollTimeout bounds one poll: a real node on a busy two-core machine
// answers a first poll in seconds, not milliseconds.
const pollTimeout = 30 * time.Second

// env is a case's view of its cluster: an admin client, and the helpers
// that create topics, produce and commit through it.
type env struct {
	t   *testing.T
	c   Cluster
	cl  *kgo.Client
	adm *kadm.Client
}

func newEnv(t *testing.T, c Cluster) *env {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &env{t: t, c: c, cl: cl, adm: kadm.NewClient(cl)}
}

// replicas is the replication factor of the topics a case creates: every
// broker holds every partition, so killing one keeps them all readable.
func (e *env) replicas() int16 { return int16(min(e.c.Brokers(), 3)) }

func (e *env) topic(partitions int32, configs map[string]*string) string {
	e.t.Helper()
	name := testenv.Unique("topic")
	e.createTopic(name, partitions, configs)
	return name
}

func (e *env) createTopic(name string, partitions int32, configs map[string]*string) {
	e.t.Helper()
	resp, err := e.adm.CreateTopic(context.Background(), partitions, e.replicas(), configs, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		e.t.Fatalf("create topic %s: %v", name, err)
	}
	e.waitPartitions(name, partitions)
}

// waitPartitions waits until the brokers' metadata shows the topic with n
// partitions, each with a leader. kfake answers a CreateTopics or
// CreatePartitions request once that is so; Apache Kafka answers once the
// controller has committed the change, and the brokers learn of it a
// moment later: a producer or a transaction asking before then is told
// the partition does not exist.
func (e *env) waitPartitions(topic string, n int32) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		md, err := e.adm.Metadata(ctx, topic)
		cancel()
		if err == nil {
			td := md.Topics[topic]
			led := 0
			for _, p := range td.Partitions {
				if p.Leader >= 0 && p.Err == nil {
					led++
				}
			}
			if td.Err == nil && led == int(n) {
				return
			}
			err = td.Err
			if err == nil {
				err = fmt.Errorf("%d of %d partitions led", led, n)
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("topic %s never showed %d partitions with leaders: %v", topic, n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// with is the env for a subtest t.
func (e *env) with(t *testing.T) *env {
	sub := *e
	sub.t = t
	return &sub
}

// produce writes n records to a partition, with timestamps one second
// apart ending at last.
func (e *env) produce(topic string, partition int32, n int, last time.Time) {
	e.t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{
			Topic: topic, Partition: partition, Value: []byte("v"),
			Timestamp: last.Add(-time.Duration(n-1-i) * time.Second),
		}
	}
	e.produceRecords(recs...)
}

func (e *env) produceRecords(recs ...*kgo.Record) {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.c.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
}

// commit commits offsets for a group with the admin client, as a consumer
// that is not a member would.
func (e *env) commit(group, topic string, offsets map[int32]int64) {
	e.t.Helper()
	os := kadm.Offsets{}
	for p, at := range offsets {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
	}
	if err := e.adm.CommitAllOffsets(context.Background(), group, os); err != nil {
		e.t.Fatalf("commit %s: %v", group, err)
	}
}

// source is queuewatch's collector for the cluster, built the way app
// builds it from a config.Kafka section, watching only the given groups.
// Its metadata cache lasts 10ms, so topology changes show on the next poll.
func (e *env) source(opts collector.Options, groups ...string) *collector.Source {
	e.t.Helper()
	if opts.Cluster == nil {
		opts.Cluster = e.access(config.DefaultKafkaCursorGroup)
	}
	if opts.IncludeGroup == nil {
		opts.IncludeGroup = func(g string) bool { return slices.Contains(groups, g) }
	}
	s, err := collector.New(opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(s.Close)
	return s
}

func (e *env) access(cursorGroup string) *brokerkafka.Cluster {
	e.t.Helper()
	return e.accessWith(cursorGroup, kgo.MetadataMinAge(10*time.Millisecond))
}

// accessWith is the cluster access with extra client options, as app
// builds it.
func (e *env) accessWith(cursorGroup string, extra ...kgo.Opt) *brokerkafka.Cluster {
	e.t.Helper()
	c, err := brokerkafka.New(config.Kafka{Name: "test", Brokers: e.c.Addrs()},
		config.DLQ{KafkaCursorGroup: cursorGroup}, extra...)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// Poll polls s as the scheduler does until no lag seconds are pending: the
// first poll after a start publishes lag at once, Finish then reads the
// record timestamps, and the next poll has them. It fails the test on an
// error.
func Poll(t *testing.T, s *collector.Source) *queue.Snapshot {
	t.Helper()
	snap := pollOnce(t, s)
	if snap.LagSecondsPending() {
		ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
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

func pollOnce(t *testing.T, s *collector.Source) *queue.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
	defer cancel()
	snap, err := s.Poll(ctx)
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	return snap
}

// Group is the named group of a snapshot; the test fails without it.
func Group(t *testing.T, snap *queue.Snapshot, name string) *queue.ConsumerGroup {
	t.Helper()
	g, ok := snap.Group(name)
	if !ok {
		t.Fatalf("group %q missing from snapshot (groups: %d)", name, len(snap.Groups))
	}
	return g
}

// Partition is one partition of a group; the test fails without it.
func Partition(t *testing.T, g *queue.ConsumerGroup, topic string, p int32) queue.PartitionLag {
	t.Helper()
	for _, pl := range g.Partitions {
		if pl.Topic == topic && pl.Partition == p {
			return pl
		}
	}
	t.Fatalf("group %s has no %s/%d (partitions %+v)", g.Name, topic, p, g.Partitions)
	return queue.PartitionLag{}
}

// FindDLQ is the DLQ of a snapshot named name; the test fails without it.
func FindDLQ(t *testing.T, snap *queue.Snapshot, name string) queue.DLQ {
	t.Helper()
	for _, d := range snap.DLQs {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("DLQ %s missing; have %+v", name, snap.DLQs)
	return queue.DLQ{}
}
