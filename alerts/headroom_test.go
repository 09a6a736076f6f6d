package alerts

import (
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// TestGroupHeadroom: a group the window finds ok is warn when its oldest
// pending record is deleted within retention_headroom_low, with the
// headroom as its sentence; a stopped group keeps its status and adds the
// headroom to its sentence; a long headroom changes nothing.
func TestGroupHeadroom(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	snap := func(i int, members int, h queue.Headroom) *queue.Snapshot {
		return &queue.Snapshot{Broker: queue.Kafka, Cluster: "c", Time: t0.Add(time.Duration(i) * 15 * time.Second), Groups: []queue.ConsumerGroup{{
			Cluster: "c", Name: "g", State: "Stable", Members: members, Headroom: h,
			Partitions: []queue.PartitionLag{{Topic: "t", Committed: int64(10 * i), HasCommit: true, End: int64(10*i + 5), Lag: 5}},
		}}}
	}
	short := queue.AgeHeadroom(time.Hour, 40*time.Minute, "retention.ms")
	long := queue.AgeHeadroom(7*24*time.Hour, 40*time.Minute, "retention.ms")
	for _, tc := range []struct {
		name       string
		members    int
		h          queue.Headroom
		want       queue.Status
		wantReason string
	}{
		{"short headroom", 1, short, queue.StatusWarn, "oldest pending record is deleted in 20m (retention.ms 1h)"},
		{"long headroom", 1, long, queue.StatusOK, ""},
		// 61m old on retention.ms 2h: past half of it, 59m left: warn. A
		// second old on retention.ms 1h: under the hour, but a reader
		// keeping pace loses nothing: ok.
		{"inside half of a short retention", 1, queue.AgeHeadroom(2*time.Hour, 61*time.Minute, "retention.ms"), queue.StatusWarn, "deleted in 59m (retention.ms 2h)"},
		{"keeping pace on a short retention", 1, queue.AgeHeadroom(time.Hour, time.Second, "retention.ms"), queue.StatusOK, ""},
		{"stopped and short", 0, short, queue.StatusStop, "; oldest pending record is deleted in 20m (retention.ms 1h)"},
		// A week away is not said after a stopped reader's own sentence.
		{"stopped and long", 0, long, queue.StatusStop, "lag 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEvaluator(StatusOptions{HysteresisPolls: 1, HeadroomLow: time.Hour})
			var last *queue.Snapshot
			for i := range 10 {
				last = snap(i, tc.members, tc.h)
				e.Evaluate(last)
			}
			g := last.Groups[0]
			if g.Status != tc.want {
				t.Errorf("status %s (%s), want %s", g.Status, g.StatusReason, tc.want)
			}
			if !strings.HasSuffix(g.StatusReason, tc.wantReason) || (tc.h == long && strings.Contains(g.StatusReason, "deleted")) {
				t.Errorf("reason %q, want it to end in %q", g.StatusReason, tc.wantReason)
			}
		})
	}
}

// TestSQSHeadroom: an SQS queue the collector judged ok is warn when its
// oldest message expires within the threshold; a DLQ keeps its sentence
// (its expiring letters are QueuewatchDataLossImminent's).
func TestSQSHeadroom(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	q := queue.SQSQueue{
		Cluster: "acct", Name: "orders", ARN: "arn:aws:sqs:eu-west-1:1:orders", Visible: 3, Retention: time.Hour,
		OldestAge: 50 * time.Minute, OldestAgeBasis: queue.SQSAgeCloudWatch, Status: queue.StatusOK, StatusReason: "3 visible, 0 in flight",
	}
	dlq := q
	dlq.Name, dlq.DLQ, dlq.StatusReason = "orders-dlq", true, queue.DLQReason
	snap := &queue.Snapshot{Broker: queue.SQS, Cluster: "acct", Time: now, SQS: &queue.SQSAccount{ReadAt: now}, SQSQueues: []queue.SQSQueue{q, dlq}}
	NewEvaluator(StatusOptions{HeadroomLow: time.Hour}).Evaluate(snap)
	if got := snap.SQSQueues[0]; got.Status != queue.StatusWarn || got.StatusReason != "oldest pending message is deleted in 10m (MessageRetentionPeriod 1h)" {
		t.Errorf("queue: %s %q", got.Status, got.StatusReason)
	}
	if got := snap.SQSQueues[1]; got.Status != queue.StatusOK || got.StatusReason != queue.DLQReason {
		t.Errorf("DLQ: %s %q", got.Status, got.StatusReason)
	}
}
