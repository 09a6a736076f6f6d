package collectors

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// TestPendingLagSecondsAbsent checks that a partition whose lag seconds are
// still being read exports its lag but no lag seconds series (absent, not
// 0), and its group no max_lag_seconds, so no alert or dashboard reads a
// made-up 0.
func TestPendingLagSecondsAbsent(t *testing.T) {
	snap := kafkaSnapshot()
	p := &snap.Groups[0].Partitions[1]
	p.LagSeconds, p.LagSecondsPending = 0, true
	c := New([]Source{&scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(snap)}}},
		Options{Metrics: config.Metrics{Granularity: config.GranularityPartition, PartitionLagSeconds: true}})
	c.PollOnce(context.Background())

	rec := httptest.NewRecorder()
	c.Handler(prometheus.NewRegistry()).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	for _, want := range []string{
		`queuewatch_kafka_consumergroup_lag{cluster="prod",group="billing",partition="1",topic="orders"} 80`,
		`queuewatch_kafka_consumergroup_lag_seconds{cluster="prod",group="billing",partition="0",topic="orders"} 12.5`,
		`queuewatch_kafka_consumergroup_topic_lag{cluster="prod",group="billing",topic="orders"} 100`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, absent := range []string{
		`queuewatch_kafka_consumergroup_lag_seconds{cluster="prod",group="billing",partition="1",topic="orders"}`,
		`queuewatch_kafka_consumergroup_max_lag_seconds{cluster="prod",group="billing"}`,
	} {
		if strings.Contains(text, absent) {
			t.Errorf("/metrics has %s while its lag seconds are pending", absent)
		}
	}
}

// finishingSource is a scripted source with pending work after its first
// poll.
type finishingSource struct {
	scriptedSource
	finished atomic.Int64
}

func (s *finishingSource) Finish(context.Context) bool {
	return s.finished.Add(1) == 1 // pending work after the first poll only
}

// TestFinishThenPollAtOnce checks that the scheduler runs a source's pending
// work after publishing its snapshot and then polls again at once, not after
// the interval, and only as long as there is pending work.
func TestFinishThenPollAtOnce(t *testing.T) {
	src := &finishingSource{
		scriptedSource: scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(kafkaSnapshot())}},
	}
	c := New([]Source{src}, Options{Interval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	deadline := time.Now().Add(5 * time.Second)
	for src.calls.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d polls, want a second one right after Finish", src.calls.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if n, f := src.calls.Load(), src.finished.Load(); n != 2 || f != 2 {
		t.Errorf("%d polls and %d finishes, want 2 and 2 (no more once nothing is pending)", n, f)
	}
}

// TestPollAfterFinishCompletesTheLastOne checks that the poll run at once
// after Finish is evaluated as completing the one before (it takes that
// poll's place in the status window), and the polls after it as polls of
// their own; and that a failed poll in between cancels the completion.
func TestPollAfterFinishCompletesTheLastOne(t *testing.T) {
	src := &finishingSource{
		scriptedSource: scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(kafkaSnapshot())}},
	}
	ev := &recordingEvaluator{}
	c := New([]Source{src}, Options{Interval: time.Hour, Evaluator: ev})
	s := c.sources[0]
	ctx := context.Background()
	for range 3 {
		if c.poll(ctx, s) {
			c.finish(ctx, s)
		}
	}
	if want := "evaluate complete evaluate"; ev.calls() != want {
		t.Errorf("evaluator calls %q, want %q", ev.calls(), want)
	}

	results := []func() (*queue.Snapshot, error){ok(kafkaSnapshot()), failing("refused"), ok(kafkaSnapshot())}
	flaky := &finishingSource{scriptedSource: scriptedSource{broker: queue.Kafka, cluster: "prod", results: results}}
	ev = &recordingEvaluator{}
	c = New([]Source{flaky}, Options{Interval: time.Hour, Evaluator: ev})
	s = c.sources[0]
	for range 3 {
		if c.poll(ctx, s) {
			c.finish(ctx, s)
		}
	}
	if want := "evaluate evaluate"; ev.calls() != want {
		t.Errorf("with a failed poll after Finish: evaluator calls %q, want %q", ev.calls(), want)
	}
}

// TestPendingSnapshotAddsNoHistoryPoint checks that a snapshot whose lag
// seconds are pending adds no point to the group's chart history (it would
// chart as a drop to 0), and that the next one does.
func TestPendingSnapshotAddsNoHistoryPoint(t *testing.T) {
	pending := kafkaSnapshot()
	pending.Groups[0].Partitions[1].LagSeconds, pending.Groups[0].Partitions[1].LagSecondsPending = 0, true
	src := &scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(pending), ok(kafkaSnapshot())}}
	c := New([]Source{src}, Options{})
	c.PollOnce(context.Background())
	if h := c.ReaderHistory(billingKey); len(h) != 0 {
		t.Errorf("history after a pending snapshot: %+v, want no point", h)
	}
	c.PollOnce(context.Background())
	if h := c.ReaderHistory(billingKey); len(h) != 1 || h[0].LagSeconds != 40 {
		t.Errorf("history after a complete snapshot: %+v, want one point with 40 s", h)
	}
}
