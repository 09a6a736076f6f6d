package realkafka

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestLagSecondsOversizedBatch is collectors/kafka's test of the same name
// with the batches really larger than what queuewatch asks per partition:
// the broker answers such a partition with a truncated batch (the first
// partition of the request excepted), and lag seconds must still be read
// from the record, not estimated.
func TestLagSecondsOversizedBatch(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	topic := b.topic(3)
	at := time.Now().Add(-10 * time.Minute).Truncate(time.Millisecond)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.node.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Random bytes: franz-go compresses batches, and a batch must stay
	// larger than 64 KiB on the broker.
	big := make([]byte, 100<<10)
	for i := range big {
		big[i] = byte(rand.Uint32())
	}
	for p := range int32(3) {
		if err := cl.ProduceSync(context.Background(),
			&kgo.Record{Topic: topic, Partition: p, Value: big, Timestamp: at}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	g := testenv.Unique("g")
	b.commit(g, topic, map[int32]int64{0: 0, 1: 0, 2: 0})

	got := group(t, poll(t, b.source(false, g)), g)
	want := time.Since(at).Seconds()
	for _, pl := range got.Partitions {
		if pl.LagSecondsEstimated || pl.LagSeconds < want-5 || pl.LagSeconds > want+5 {
			t.Errorf("p%d: lag seconds %.0f (estimated %v), want ≈%.0f fetched", pl.Partition, pl.LagSeconds, pl.LagSecondsEstimated, want)
		}
	}
}
