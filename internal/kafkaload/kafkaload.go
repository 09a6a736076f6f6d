// Package kafkaload seeds an in-process Kafka-protocol cluster with the
// workload queuewatch's performance targets are stated for: many topics,
// many groups, each group consuming a few topics at its own offsets. The
// poll benchmark and the soak command share it.
package kafkaload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Workload describes what to seed.
type Workload struct {
	Topics, Partitions int
	Groups             int
	TopicsPerGroup     int
	// RecordsPerPartition are produced with timestamps spread over the last
	// hour, so lag seconds are meaningful.
	RecordsPerPartition int
}

// Target is the workload of the Kafka-lag performance targets: 200 topics ×
// 12 partitions, 500 groups consuming 3 topics each (18,000 group-partitions).
var Target = Workload{Topics: 200, Partitions: 12, Groups: 500, TopicsPerGroup: 3, RecordsPerPartition: 20}

// GroupPartitions is how many (group, partition) pairs the workload has.
func (w Workload) GroupPartitions() int { return w.Groups * w.TopicsPerGroup * w.Partitions }

// Start starts a 3-broker kfake cluster and seeds it.
func Start(ctx context.Context, w Workload, opts ...kfake.Opt) (*kfake.Cluster, error) {
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3)}, opts...)...)
	if err != nil {
		return nil, err
	}
	if err := Seed(ctx, c.ListenAddrs(), w); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Seed creates the topics, produces the records and commits every group's
// offsets at random positions (some partitions left uncommitted).
func Seed(ctx context.Context, brokers []string, w Workload) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0), kgo.MaxBufferedRecords(1<<20))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topics := make([]string, w.Topics)
	for i := range topics {
		topics[i] = fmt.Sprintf("load-%03d", i)
	}
	if _, err := adm.CreateTopics(ctx, int32(w.Partitions), 1, nil, topics...); err != nil {
		return fmt.Errorf("create topics: %w", err)
	}
	now := time.Now()
	var recs []*kgo.Record
	for _, t := range topics {
		for p := range w.Partitions {
			for i := range w.RecordsPerPartition {
				at := now.Add(-time.Hour + time.Duration(i)*time.Hour/time.Duration(w.RecordsPerPartition))
				recs = append(recs, &kgo.Record{Topic: t, Partition: int32(p), Value: []byte("x"), Timestamp: at})
			}
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for g := range w.Groups {
		os := kadm.Offsets{}
		for k := range w.TopicsPerGroup {
			t := topics[(g*w.TopicsPerGroup+k)%len(topics)]
			for p := range w.Partitions {
				if rng.IntN(20) == 0 {
					continue // no commit on this partition
				}
				os.Add(kadm.Offset{Topic: t, Partition: int32(p), At: int64(rng.IntN(w.RecordsPerPartition + 1)), LeaderEpoch: -1})
			}
		}
		if err := adm.CommitAllOffsets(ctx, fmt.Sprintf("group-%03d", g), os); err != nil {
			return fmt.Errorf("commit group %d: %w", g, err)
		}
	}
	return nil
}

// Large is the workload of the large-cluster targets: 800 topics × 20
// partitions, 1,700 groups consuming 3 topics each (102,000
// group-partitions, about 97,000 of them committed).
var Large = Workload{Topics: 800, Partitions: 20, Groups: 1700, TopicsPerGroup: 3, RecordsPerPartition: 20}
