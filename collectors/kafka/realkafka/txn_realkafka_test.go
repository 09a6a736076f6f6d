package realkafka

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// transactions writes to topic with a real transactional producer: a
// committed transaction of 3 records, an aborted one of 2, and an open one
// of 4 that stays open until the test ends. With the two commit/abort
// markers the last stable offset is 7 and the high watermark 11.
func (b *broker) transactions(topic string) {
	b.t.Helper()
	ctx := context.Background()
	// The open transaction must outlive the test on a loaded machine: at
	// franz-go's default timeout (40s) the broker aborts it, and the abort
	// marker moves the high watermark under the test's feet.
	txn, err := kgo.NewClient(kgo.SeedBrokers(b.node.Addr()), kgo.TransactionalID(testenv.Unique("txn")),
		kgo.DefaultProduceTopic(topic), kgo.TransactionTimeout(10*time.Minute))
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() {
		_ = txn.EndTransaction(context.Background(), kgo.TryAbort)
		txn.Close()
	})
	for _, tx := range []struct {
		n   int
		end kgo.TransactionEndTry
	}{{3, kgo.TryCommit}, {2, kgo.TryAbort}, {4, false}} {
		if err := txn.BeginTransaction(); err != nil {
			b.t.Fatal(err)
		}
		for range tx.n {
			if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
				b.t.Fatal(err)
			}
		}
		if tx.n == 4 {
			return
		}
		if err := txn.EndTransaction(ctx, tx.end); err != nil {
			b.t.Fatal(err)
		}
	}
}

// TestReadCommittedLagAgainstLSO has read_committed consumers (the Java
// console consumer and franz-go) read everything committed behind an
// aborted and an open transaction: queuewatch measuring read_committed
// shows them caught up at the last stable offset, and measuring
// read_uncommitted shows the open transaction's records as lag, as
// kafka-consumer-groups does.
func TestReadCommittedLagAgainstLSO(t *testing.T) {
	t.Parallel()
	eachVersion(t, readCommittedLagAgainstLSO)
}

func readCommittedLagAgainstLSO(t *testing.T, b *broker) {
	topic := b.topic(1)
	b.transactions(topic)
	const stable, end = 3 + 1 + 2 + 1, 3 + 1 + 2 + 1 + 4

	java, franz := testenv.Unique("java-rc"), testenv.Unique("franz-rc")
	if err := b.consoleConsume(java, topic, "consumer", 3, "--isolation-level", "read_committed"); err != nil {
		t.Fatal(err)
	}
	b.franzConsumer(franz, topic, "franz-rc", 3, kgo.FetchIsolationLevel(kgo.ReadCommitted()))

	groups := []string{java, franz}
	committed := poll(t, b.source(true, groups...))
	uncommitted := poll(t, b.source(false, groups...))
	want := b.describeGroups(groups...)
	for _, name := range groups {
		g, _ := uncommitted.Group(name)
		if g == nil {
			t.Fatalf("group %s missing", name)
		}
		assertMatches(t, g, want[name])
		if len(g.Partitions) != 1 || g.Partitions[0].End != end {
			t.Errorf("%s read_uncommitted: partitions %+v; want end %d", name, g.Partitions, end)
		}
		rc, _ := committed.Group(name)
		if rc == nil || len(rc.Partitions) != 1 {
			t.Fatalf("group %s read_committed: %+v", name, rc)
		}
		if pl := rc.Partitions[0]; pl.End != stable || pl.Lag != stable-pl.Committed || !pl.HasCommit {
			t.Errorf("%s read_committed: committed %d end %d lag %d; want end %d (the LSO), lag end-committed",
				name, pl.Committed, pl.End, pl.Lag, stable)
		}
		// The Java consumer commits its position, past the aborted records
		// and markers; franz-go commits after the last record it returned
		// (3), so its lag stays at 4 until a committed record follows.
		if name == java && (rc.Partitions[0].Lag != 0 || g.Partitions[0].Lag != end-stable) {
			t.Errorf("java read_committed consumer: lag %d read_committed, %d read_uncommitted; want 0 and %d (the open transaction)",
				rc.Partitions[0].Lag, g.Partitions[0].Lag, end-stable)
		}
		t.Logf("%s: committed %d, read_committed lag %d, read_uncommitted lag %d",
			name, rc.Partitions[0].Committed, rc.Partitions[0].Lag, g.Partitions[0].Lag)
	}
}
