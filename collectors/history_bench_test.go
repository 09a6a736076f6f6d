package collectors

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// BenchmarkRecordHistory measures what a poll's history costs at the
// 100k group-partition target: 1,700 groups of 60 partitions each, into a
// history that is already full (an hour at 15s).
func BenchmarkRecordHistory(b *testing.B) {
	snap := &queue.Snapshot{Broker: queue.Kafka, Cluster: "load", Time: time.Now()}
	for g := range 1700 {
		cg := queue.ConsumerGroup{Cluster: "load", Name: fmt.Sprintf("group-%04d", g), State: "Stable", Members: 3, Status: queue.StatusOK}
		for p := range int32(60) {
			cg.Partitions = append(cg.Partitions, queue.PartitionLag{
				Topic: fmt.Sprintf("load-%03d", g%200), Partition: p, Committed: 900, HasCommit: true,
				End: 1000, Lag: 100, LagSeconds: 12.5,
			})
		}
		snap.Groups = append(snap.Groups, cg)
	}
	s := &sourceState{log: slog.New(slog.DiscardHandler), maxPoints: 241}
	for range 241 {
		s.publish(snap, time.Millisecond)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.publish(snap, time.Millisecond)
	}
}
