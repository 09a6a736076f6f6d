package store

import (
	"context"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/queue"
)

// TestStatusOnsets: onsets kept by one Store (a replica, or the process
// before a restart) are read by another on the same database, per broker
// and cluster; a put replaces a reader's onset and a delete forgets it.
func TestStatusOnsets(t *testing.T) {
	forEngines(t, testStatusOnsets)
}

func testStatusOnsets(t *testing.T, e engine, db string) {
	ctx := context.Background()
	a := e.open(t, db)
	since := time.Date(2026, 12, 5, 5, 9, 0, 123_456_789, time.UTC)
	put := []queue.Onset{
		{Reader: "group:billing", Condition: "stop", Since: since},
		{Reader: "consumer:ORDERS/shipper", Condition: "stall", Since: since.Add(time.Minute)},
	}
	if err := a.SaveOnsets(ctx, "kafka", "prod", put[:1], nil); err != nil {
		t.Fatal(err)
	}
	if err := a.SaveOnsets(ctx, "nats", "prod", put[1:], nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	b := e.open(t, db) // the restart
	defer func() { _ = b.Close() }()
	got, err := b.Onsets(ctx, "kafka", "prod")
	if err != nil || len(got) != 1 || got[0].Reader != "group:billing" || got[0].Condition != "stop" || !got[0].Since.Equal(since.Truncate(time.Millisecond)) {
		t.Fatalf("kafka prod after the restart: %+v %v", got, err)
	}
	if got, err := b.Onsets(ctx, "kafka", "dev"); err != nil || len(got) != 0 {
		t.Errorf("another cluster: %+v %v", got, err)
	}
	// A new condition replaces the onset; a cleared reader is forgotten.
	if err := b.SaveOnsets(ctx, "kafka", "prod", []queue.Onset{{Reader: "group:billing", Condition: "stall", Since: since.Add(time.Hour)}}, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Onsets(ctx, "kafka", "prod"); err != nil || len(got) != 1 || got[0].Condition != "stall" || !got[0].Since.Equal(since.Add(time.Hour).Truncate(time.Millisecond)) {
		t.Errorf("replaced: %+v %v", got, err)
	}
	if err := b.SaveOnsets(ctx, "nats", "prod", nil, []string{"consumer:ORDERS/shipper"}); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Onsets(ctx, "nats", "prod"); err != nil || len(got) != 0 {
		t.Errorf("deleted: %+v %v", got, err)
	}
}

// TestEvaluatorRestart: a group memberless for an hour keeps its onset
// through a restart: a new Evaluator on a reopened store says since when.
func TestEvaluatorRestart(t *testing.T) {
	forEngines(t, func(t *testing.T, e engine, db string) {
		t0 := time.Date(2026, 12, 5, 5, 9, 0, 0, time.UTC)
		poll := func(i int) *queue.Snapshot {
			return &queue.Snapshot{
				Broker: queue.Kafka, Cluster: "prod", Time: t0.Add(time.Duration(i) * time.Minute),
				Groups: []queue.ConsumerGroup{{Cluster: "prod", Name: "billing", Partitions: []queue.PartitionLag{
					{Topic: "invoices", Partition: 0, Committed: 10, HasCommit: true, End: 50, Lag: 40},
				}}},
			}
		}
		a := e.open(t, db)
		ev := alerts.NewEvaluator(alerts.StatusOptions{})
		ev.Persist(a, nil)
		for i := range 60 {
			ev.Evaluate(poll(i))
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}

		b := e.open(t, db)
		defer func() { _ = b.Close() }()
		ev = alerts.NewEvaluator(alerts.StatusOptions{})
		ev.Persist(b, nil)
		latest := poll(74)
		ev.Evaluate(latest)
		g := latest.Groups[0]
		if want := "no members since 05:09 UTC (1h 14m), lag 40"; g.StatusReason != want || !g.StatusSince.Equal(t0) {
			t.Errorf("after the restart: %q since %v; want %q since %v", g.StatusReason, g.StatusSince, want, t0)
		}
	})
}
