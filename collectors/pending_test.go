package collectors

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
	c := New([]Source{&scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(snap)}}}, Options{})
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

// refreshingSource is a scripted source with a refresh signal.
type refreshingSource struct {
	scriptedSource
	refresh chan struct{}
}

func (s *refreshingSource) Refreshed() <-chan struct{} { return s.refresh }

// TestRefreshPollsAtOnce checks that a source's refresh signal makes the
// scheduler poll again at once instead of after the interval.
func TestRefreshPollsAtOnce(t *testing.T) {
	src := &refreshingSource{
		scriptedSource: scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(kafkaSnapshot())}},
		refresh:        make(chan struct{}, 1),
	}
	c := New([]Source{src}, Options{Interval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	waitCalls := func(n int64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for src.calls.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d polls, want %d", src.calls.Load(), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitCalls(1)
	src.refresh <- struct{}{}
	waitCalls(2)
}
