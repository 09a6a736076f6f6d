package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/internal/kafkaload"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// BenchmarkPoll measures one steady-state poll of the target workload: 200
// topics × 12 partitions, 500 groups × 3 topics (18,000 group-partitions).
// The first poll (lag without lag seconds) is reported as first-poll-ms, and
// the time until Finish has read every record timestamp after it as
// lag-seconds-ms.
func BenchmarkPoll(b *testing.B) {
	ctx := context.Background()
	c, err := kafkaload.Start(ctx, kafkaload.Target)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s, err := New(Options{Cluster: testenv.KafkaCluster(b, "load", c.ListenAddrs())})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	snap, err := s.Poll(ctx)
	if err != nil {
		b.Fatal(err)
	}
	first := time.Since(start)
	// The first poll leaves lag seconds to Finish, as the scheduler runs
	// it; the steady state starts once a poll has used what it read.
	if !s.Finish(ctx) {
		b.Fatal("the first poll left no lag seconds to read")
	}
	filled := time.Since(start)
	if _, err := s.Poll(ctx); err != nil {
		b.Fatal(err)
	}
	var gp int
	for _, g := range snap.Groups {
		gp += len(g.Partitions)
	}
	if gp < kafkaload.Target.GroupPartitions()*9/10 {
		b.Fatalf("snapshot has %d group-partitions, want ≈%d", gp, kafkaload.Target.GroupPartitions())
	}
	before := s.Requests(-1)
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Poll(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s.Requests(-1)-before)/float64(b.N), "requests/poll")
	b.ReportMetric(float64(first.Milliseconds()), "first-poll-ms")
	b.ReportMetric(float64(filled.Milliseconds()), "lag-seconds-ms")
	b.ReportMetric(float64(gp), "group-partitions")
}

// BenchmarkFetchRecords measures reading the record at the next offset of
// every lagging group-partition of the target workload in one go: what the
// first poll after a start leaves to the background.
func BenchmarkFetchRecords(b *testing.B) {
	ctx := context.Background()
	c, err := kafkaload.Start(ctx, kafkaload.Target)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s, err := New(Options{Cluster: testenv.KafkaCluster(b, "load", c.ListenAddrs())})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	snap, err := s.Poll(ctx)
	if err != nil {
		b.Fatal(err)
	}
	meta, err := s.metadata(ctx)
	if err != nil {
		b.Fatal(err)
	}
	seen := map[offsetKey]bool{}
	var keys []offsetKey
	for _, g := range snap.Groups {
		for i := range g.Partitions {
			k := offsetKey{g.Partitions[i].Topic, g.Partitions[i].Partition, nextOffset(&g.Partitions[i])}
			if g.Partitions[i].Lag > 0 && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	before := s.Requests(int16(kmsg.Fetch))
	b.ResetTimer()
	for b.Loop() {
		if got := s.fetchRecords(ctx, keys, meta); len(got) < len(keys)*9/10 {
			b.Fatalf("read %d of %d records", len(got), len(keys))
		}
	}
	b.ReportMetric(float64(s.Requests(int16(kmsg.Fetch))-before)/float64(b.N), "fetches/op")
	b.ReportMetric(float64(len(keys)), "offsets")
}
