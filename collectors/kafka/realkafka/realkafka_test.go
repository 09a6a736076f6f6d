package realkafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	collector "github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/collectors/kafka/kafkatest"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestMain shares one node among the package's tests. They run in
// parallel, except TestBrokerKilledAndBack, which Go runs before any
// parallel test resumes.
func TestMain(m *testing.M) { testenv.KafkaMainWithOAuth(m) }

// broker is the shared real node with an admin client for test setup.
type broker struct {
	t    *testing.T
	node *testenv.KafkaNode
	cl   *kgo.Client
	adm  *kadm.Client
}

func realBroker(t *testing.T) *broker {
	t.Helper()
	return realBrokerAt(t, testenv.KafkaVersion)
}

// realBrokerAt is realBroker on the shared node of one of
// testenv.KafkaVersions.
func realBrokerAt(t *testing.T, version string) *broker {
	t.Helper()
	node := testenv.RealKafkaAt(t, version)
	cl, err := kgo.NewClient(kgo.SeedBrokers(node.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &broker{t: t, node: node, cl: cl, adm: kadm.NewClient(cl)}
}

func (b *broker) topic(partitions int32) string {
	b.t.Helper()
	name := testenv.Unique("topic")
	if _, err := b.adm.CreateTopic(context.Background(), partitions, 1, nil, name); err != nil {
		b.t.Fatal(err)
	}
	return name
}

// produce writes n records to each of the topic's partitions.
func (b *broker) produce(topic string, partitions int32, n int) {
	b.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.node.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		b.t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for p := range partitions {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%d-%d", p, i)})
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		b.t.Fatal(err)
	}
}

// source is queuewatch's collector for the node, built the way app builds
// it from a config.Kafka section, watching only the given groups.
func (b *broker) source(readCommitted bool, groups ...string) *collector.Source {
	b.t.Helper()
	c, err := brokerkafka.New(config.Kafka{Name: "real", Brokers: []string{b.node.Addr()}},
		config.DLQ{KafkaCursorGroup: config.DefaultKafkaCursorGroup}, kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		b.t.Fatal(err)
	}
	s, err := collector.New(collector.Options{
		Cluster:       c,
		ReadCommitted: readCommitted,
		IncludeGroup:  func(g string) bool { return contains(groups, g) },
	})
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(s.Close)
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// poll polls s as the scheduler does; see kafkatest.Poll.
func poll(t *testing.T, s *collector.Source) *queue.Snapshot {
	t.Helper()
	return kafkatest.Poll(t, s)
}

// consoleConsume runs the Java console consumer of kafka-tools: it reads
// n records of topic from the start in group, with the given
// group.protocol, and commits on exit.
func (b *broker) consoleConsume(group, topic, protocol string, n int, extra ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Kafka 4.0's console consumer knows only --consumer-property, which
	// 4.4 deprecates for --command-property.
	property := "--command-property"
	if strings.HasPrefix(b.node.Version, "4.0.") {
		property = "--consumer-property"
	}
	args := append([]string{
		"--bootstrap-server", b.node.Addr(), "--topic", topic, "--group", group,
		"--from-beginning", "--max-messages", strconv.Itoa(n), "--timeout-ms", "90000",
		property, "group.protocol=" + protocol,
	}, extra...)
	_, err := b.node.Java(ctx, "org.apache.kafka.tools.consumer.ConsoleConsumer", args...)
	return err
}

// cgcPartition is one row of kafka-consumer-groups --describe --offsets;
// "-" columns are kept as "-".
type cgcPartition struct {
	current, end, lag, clientID, host string
}

// cgcGroup is what kafka-consumer-groups --describe reports for one group.
type cgcGroup struct {
	strategy, state string
	members         int
	partitions      map[string]cgcPartition // "topic/partition"
}

// describeGroups runs the broker's own ConsumerGroupCommand (the
// kafka-consumer-groups script's class) with --describe --offsets and
// --describe --state for the groups, and parses its tables.
func (b *broker) describeGroups(groups ...string) map[string]*cgcGroup {
	b.t.Helper()
	out := map[string]*cgcGroup{}
	for _, g := range groups {
		out[g] = &cgcGroup{partitions: map[string]cgcPartition{}}
	}
	for _, mode := range []string{"--offsets", "--state"} {
		// The tool's own timeout (5s) is too short on a loaded machine;
		// when it times out it prints "Error: ..." and exits 0.
		args := []string{"--bootstrap-server", b.node.Addr(), "--describe", mode, "--timeout", "60000"}
		for _, g := range groups {
			args = append(args, "--group", g)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		text, err := b.node.Java(ctx, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", args...)
		cancel()
		if err == nil && strings.Contains(text, "Error:") {
			err = errors.New(strings.TrimSpace(text))
		}
		if err != nil {
			b.t.Fatal(err)
		}
		b.t.Logf("kafka-consumer-groups --describe %s:\n%s", mode, text)
		for line := range strings.Lines(text) {
			f := strings.Fields(line)
			if len(f) == 0 || out[f[0]] == nil {
				continue
			}
			g := out[f[0]]
			switch mode {
			case "--offsets":
				if len(f) != 9 {
					b.t.Fatalf("offsets row %q: want 9 columns", line)
				}
				g.partitions[f[1]+"/"+f[2]] = cgcPartition{current: f[3], end: f[4], lag: f[5], host: f[7], clientID: f[8]}
			case "--state":
				// GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS;
				// an empty classic group has no strategy ("-").
				g.strategy = strings.TrimPrefix(f[len(f)-3], "-")
				g.state = f[len(f)-2]
				g.members, err = strconv.Atoi(f[len(f)-1])
				if err != nil {
					b.t.Fatalf("state row %q: %v", line, err)
				}
			}
		}
	}
	return out
}

// assertMatches checks that queuewatch's view of a group is the broker's:
// state, assignor, member count, and per partition the committed offset,
// log end offset, lag and assigned client and host.
func assertMatches(t *testing.T, g *queue.ConsumerGroup, want *cgcGroup) {
	t.Helper()
	if g.State != want.state || g.Members != want.members || g.Protocol != want.strategy {
		t.Errorf("%s: state %q members %d assignor %q; kafka-consumer-groups says %q, %d, %q",
			g.Name, g.State, g.Members, g.Protocol, want.state, want.members, want.strategy)
	}
	seen := 0
	for _, pl := range g.Partitions {
		key := fmt.Sprintf("%s/%d", pl.Topic, pl.Partition)
		w, ok := want.partitions[key]
		if !ok {
			// kafka-consumer-groups lists an empty group's committed
			// partitions only; queuewatch also shows the topic's other
			// partitions, uncommitted, with all they store as lag.
			if pl.HasCommit || pl.Member != "" || pl.Lag != pl.End-pl.LogStart {
				t.Errorf("%s %s: not listed by kafka-consumer-groups, yet queuewatch has %+v", g.Name, key, pl)
			}
			continue
		}
		seen++
		got := cgcPartition{current: "-", end: strconv.FormatInt(pl.End, 10), lag: "-", clientID: "-", host: "-"}
		if pl.HasCommit {
			got.current = strconv.FormatInt(pl.Committed, 10)
			got.lag = strconv.FormatInt(pl.Lag, 10)
		}
		if pl.Member != "" {
			// The broker writes the host as Java prints an address,
			// "/127.0.0.1"; queuewatch shows the address alone.
			got.clientID, got.host = pl.Member, "/"+pl.Host
		}
		if got != w {
			t.Errorf("%s %s: queuewatch %+v; kafka-consumer-groups %+v", g.Name, key, got, w)
		}
	}
	if seen != len(want.partitions) {
		t.Errorf("%s: queuewatch shows %d of the %d partitions kafka-consumer-groups lists: %+v", g.Name, seen, len(want.partitions), want.partitions)
	}
}

// produceAt writes n records to a partition, with timestamps one second
// apart ending at last.
func (b *broker) produceAt(topic string, partition int32, n int, last time.Time, headers ...kgo.RecordHeader) {
	b.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.node.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		b.t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{
			Topic: topic, Partition: partition, Value: []byte("v"), Headers: headers,
			Timestamp: last.Add(-time.Duration(n-1-i) * time.Second),
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		b.t.Fatal(err)
	}
}

// commit commits offsets for a group with the admin client.
func (b *broker) commit(group, topic string, offsets map[int32]int64) {
	b.t.Helper()
	os := kadm.Offsets{}
	for p, at := range offsets {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
	}
	if err := b.adm.CommitAllOffsets(context.Background(), group, os); err != nil {
		b.t.Fatal(err)
	}
}

// eachVersion runs test as a parallel subtest per Kafka release
// (testenv.KafkaVersions), each on that release's shared node, which the
// first subtest asking for it starts.
func eachVersion(t *testing.T, test func(t *testing.T, b *broker)) {
	t.Helper()
	for _, v := range testenv.KafkaVersions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			test(t, realBrokerAt(t, v))
		})
	}
}
