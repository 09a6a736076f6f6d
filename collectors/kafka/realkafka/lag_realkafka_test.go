package realkafka

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// franzConsumer joins group with franz-go, reads n records of topic from
// the start, commits exactly those and stays in the group (a live member)
// until the test ends.
func (b *broker) franzConsumer(group, topic, clientID string, n int, opts ...kgo.Opt) {
	b.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(b.node.Addr()),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID(clientID),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
	}, opts...)...)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < n {
		fs := cl.PollRecords(ctx, n-len(recs))
		if err := ctx.Err(); err != nil {
			b.t.Fatalf("%s read %d of %d records: %v", group, len(recs), n, err)
		}
		recs = append(recs, fs.Records()...)
	}
	if err := cl.CommitRecords(ctx, recs...); err != nil {
		b.t.Fatal(err)
	}
}

// TestLagMatchesConsumerGroupsTool drives groups with real consumers —
// the Java client's console consumer with group.protocol=consumer
// (KIP-848) and classic, and franz-go with both protocols as live members
// — and checks that queuewatch reports for each group exactly what the
// broker's own kafka-consumer-groups --describe reports.
func TestLagMatchesConsumerGroupsTool(t *testing.T) {
	t.Parallel()
	eachVersion(t, lagMatchesConsumerGroupsTool)
}

func lagMatchesConsumerGroupsTool(t *testing.T, b *broker) {
	t.Logf("kafka %s: storage formatted in %s, node serving after %s, RSS %d MiB", b.node.Version,
		b.node.FormatTime.Round(time.Millisecond), b.node.StartupTime.Round(time.Millisecond), b.node.RSS()>>20)
	topic := b.topic(3)
	b.produce(topic, 3, 10)

	javaConsumer, javaClassic := testenv.Unique("java-848"), testenv.Unique("java-classic")
	franz848, franzClassic := testenv.Unique("franz-848"), testenv.Unique("franz-classic")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = b.consoleConsume(javaConsumer, topic, "consumer", 7) })
	wg.Go(func() { errs[1] = b.consoleConsume(javaClassic, topic, "classic", 13) })
	b.franzConsumer(franz848, topic, "franz-848", 11, kgo.ServerSideBalancer())
	b.franzConsumer(franzClassic, topic, "franz-classic", 17)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	groups := []string{javaConsumer, javaClassic, franz848, franzClassic}
	snap := poll(t, b.source(false, groups...))
	want := b.describeGroups(groups...)
	for _, name := range groups {
		g, ok := snap.Group(name)
		if !ok {
			t.Fatalf("group %s missing from the snapshot", name)
		}
		assertMatches(t, g, want[name])
	}

	// The same expectations as the kfake tests, from what the consumers did.
	for _, tt := range []struct {
		group    string
		typ      queue.GroupType
		state    string
		members  int
		lag      int64
		clientID string
	}{
		{javaConsumer, queue.GroupConsumer, "Empty", 0, 30 - 7, ""},
		{javaClassic, queue.GroupClassic, "Empty", 0, 30 - 13, ""},
		{franz848, queue.GroupConsumer, "Stable", 1, 30 - 11, "franz-848"},
		{franzClassic, queue.GroupClassic, "Stable", 1, 30 - 17, "franz-classic"},
	} {
		g, _ := snap.Group(tt.group)
		if g.Type != tt.typ || g.State != tt.state || g.Members != tt.members || g.TotalLag() != tt.lag {
			t.Errorf("%s: type %q state %q members %d lag %d; want %q %q %d %d",
				tt.group, g.Type, g.State, g.Members, g.TotalLag(), tt.typ, tt.state, tt.members, tt.lag)
		}
		host := ""
		if tt.clientID != "" {
			host = "127.0.0.1"
		}
		for _, pl := range g.Partitions {
			if pl.Member != tt.clientID || pl.Host != host || pl.End != 10 {
				t.Errorf("%s p%d: member %q host %q end %d; want %q, %q, 10", tt.group, pl.Partition, pl.Member, pl.Host, pl.End, tt.clientID, host)
			}
		}
	}
}
