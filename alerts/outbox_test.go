package alerts

import (
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// tablePoll is one poll of outbox table "outbox": pending rows and the
// publish rate (negative: not known yet).
type tablePoll struct {
	pending int64
	rate    float64
}

func outboxSeries(polls ...tablePoll) ([]*queue.Snapshot, *queue.Snapshot) {
	var snaps []*queue.Snapshot
	for i, p := range polls {
		t := queue.OutboxTable{Source: "db", Table: "outbox", Pending: p.pending, OldestPendingAge: time.Duration(i+1) * time.Minute}
		if p.rate >= 0 {
			t.PublishRate, t.HasPublishRate = p.rate, true
		}
		snaps = append(snaps, &queue.Snapshot{
			Broker: queue.Outbox, Cluster: "db", Time: t0.Add(time.Duration(i) * time.Minute),
			OutboxTables: []queue.OutboxTable{t},
		})
	}
	return snaps[:len(snaps)-1], snaps[len(snaps)-1]
}

func TestEvaluateOutboxTable(t *testing.T) {
	tests := []struct {
		name   string
		polls  []tablePoll
		want   queue.Status
		reason string
	}{
		{"empty", []tablePoll{{0, -1}, {0, 0}, {0, 0}}, queue.StatusOK, "no rows pending"},
		{
			"stalled worker",
			[]tablePoll{{40, -1}, {40, 0}, {40, 0}},
			queue.StatusStall,
			"40 rows pending and none published since 12:00 UTC (2m); the oldest is 3m old",
		},
		{"stalled but window not full", []tablePoll{{40, -1}, {40, 0}}, queue.StatusOK, "40 rows pending"},
		// 30 rows published and one more pending: progress, and jitter, not growth.
		{"one publish in the window is progress, not a stall", []tablePoll{{40, -1}, {41, 0.5}, {41, 0}}, queue.StatusOK, "41 rows pending"},
		{
			"growing backlog",
			[]tablePoll{{10, -1}, {50, 2}, {90, 2}},
			queue.StatusWarn,
			"backlog growing from 10 to 90 rows over 2m while 2.0 rows/s are published",
		},
		// The flaps of the old rule, which warned whenever the backlog
		// ended above where the window began and never dipped below it.
		{"jitter at high throughput is not growth", []tablePoll{{100, -1}, {104, 50}, {103, 50}}, queue.StatusOK, "103 rows pending"},
		{"a backlog that touched zero is not growing", []tablePoll{{0, -1}, {0, 0.2}, {3, 0.1}}, queue.StatusOK, "3 rows pending"},
		{"caught up within the window", []tablePoll{{5, -1}, {0, 1}, {9, 0.1}}, queue.StatusOK, "9 rows pending"},
		{"slow growth past a tenth of the inserts", []tablePoll{{10, -1}, {20, 0.5}, {30, 0.5}}, queue.StatusWarn, "backlog growing from 10 to 30 rows over 2m while 0.5 rows/s are published"},
		{"an unknown rate counts no publish", []tablePoll{{10, -1}, {50, -1}, {90, 2}}, queue.StatusWarn, "backlog growing from 10 to 90"},
		{"dip is not growth", []tablePoll{{10, -1}, {5, 2}, {90, 2}}, queue.StatusOK, "90 rows pending, the oldest 3m old, 2.0 rows/s published"},
		{"draining", []tablePoll{{90, -1}, {50, 2}, {10, 2}}, queue.StatusOK, "10 rows pending"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hist, latest := outboxSeries(tc.polls...)
			EvaluateOutbox(hist, latest, StatusOptions{Window: 3})
			got := latest.OutboxTables[0]
			if got.Status != tc.want || !strings.Contains(got.StatusReason, tc.reason) {
				t.Errorf("status %s %q, want %s containing %q", got.Status, got.StatusReason, tc.want, tc.reason)
			}
		})
	}
}

func TestEvaluateOutboxErrorsAndSlots(t *testing.T) {
	mk := func(i int, lag int64, active bool) *queue.Snapshot {
		return &queue.Snapshot{
			Broker: queue.Outbox, Cluster: "db", Time: t0.Add(time.Duration(i) * time.Minute),
			OutboxTables: []queue.OutboxTable{{Table: "gone", Err: `relation "gone" does not exist`}},
			Slots:        []queue.ReplicationSlot{{Slot: "debezium", LagBytes: lag, Active: active}},
		}
	}
	hist := []*queue.Snapshot{mk(0, 1<<20, true), mk(1, 20<<20, true)}
	latest := mk(2, 40<<20, true)
	e := NewEvaluator(StatusOptions{Window: 3, HysteresisPolls: 1}) // the Evaluator covers outboxes too
	for _, s := range append(hist, latest) {
		e.Evaluate(s)
	}
	if tb := latest.OutboxTables[0]; tb.Status != queue.StatusError || tb.StatusReason != `relation "gone" does not exist` {
		t.Errorf("dropped table: %s %q", tb.Status, tb.StatusReason)
	}
	if sl := latest.Slots[0]; sl.Status != queue.StatusWarn || sl.StatusReason != "lag growing from 1 MiB to 40 MiB over 2m" {
		t.Errorf("growing slot: %s %q", sl.Status, sl.StatusReason)
	}
	latest = mk(2, 2048, false)
	EvaluateOutbox(hist, latest, StatusOptions{Window: 3})
	if sl := latest.Slots[0]; sl.Status != queue.StatusStop || sl.StatusReason != "no client is streaming from the slot; the server retains 2 KiB of WAL for it" {
		t.Errorf("inactive slot: %s %q", sl.Status, sl.StatusReason)
	}
	latest = mk(2, 10, true)
	EvaluateOutbox(hist, latest, StatusOptions{Window: 3})
	if sl := latest.Slots[0]; sl.Status != queue.StatusOK || sl.StatusReason != "active, 10 B behind" {
		t.Errorf("caught-up slot: %s %q", sl.Status, sl.StatusReason)
	}

	// An unknown lag is neither 0 nor a step of a trend: the status says
	// why it is unknown.
	const why = "physical slot that reserves no WAL yet: no standby has streamed from it"
	latest = mk(2, 0, true)
	latest.Slots[0].LagUnknown = why
	EvaluateOutbox(hist, latest, StatusOptions{Window: 3})
	if sl := latest.Slots[0]; sl.Status != queue.StatusOK || sl.StatusReason != "active, lag is unknown: "+why {
		t.Errorf("active slot of unknown lag: %s %q", sl.Status, sl.StatusReason)
	}
	latest.Slots[0].Active = false
	EvaluateOutbox(hist, latest, StatusOptions{Window: 3})
	if sl := latest.Slots[0]; sl.Status != queue.StatusStop || sl.StatusReason != "no client is streaming from the slot; its lag is unknown: "+why {
		t.Errorf("inactive slot of unknown lag: %s %q", sl.Status, sl.StatusReason)
	}
	unknown := mk(0, 0, true)
	unknown.Slots[0].LagUnknown = why
	latest = mk(2, 40<<20, true)
	EvaluateOutbox([]*queue.Snapshot{unknown, mk(1, 20<<20, true)}, latest, StatusOptions{Window: 3})
	if sl := latest.Slots[0]; sl.Status != queue.StatusOK {
		t.Errorf("a poll of unknown lag counted in the trend: %s %q", sl.Status, sl.StatusReason)
	}
}

// slotSeries is one poll a minute of active replication slot "debezium"
// with these lags in bytes.
func slotSeries(lags ...int64) ([]*queue.Snapshot, *queue.Snapshot) {
	var snaps []*queue.Snapshot
	for i, l := range lags {
		snaps = append(snaps, &queue.Snapshot{
			Broker: queue.Outbox, Cluster: "db", Time: t0.Add(time.Duration(i) * time.Minute),
			Slots: []queue.ReplicationSlot{{Source: "db", Slot: "debezium", LagBytes: l, Active: true}},
		})
	}
	return snaps[:len(snaps)-1], snaps[len(snaps)-1]
}

func TestEvaluateOutboxSlotTrend(t *testing.T) {
	const kib, mib = 1 << 10, 1 << 20
	tests := []struct {
		name   string
		window int
		lags   []int64
		want   queue.Status
		reason string
	}{
		{"sustained growth", 3, []int64{10 * mib, 40 * mib, 70 * mib}, queue.StatusWarn, "lag growing from 10 MiB to 70 MiB over 2m"},
		// Confirming, but confirming less than is written: the troughs rise.
		{
			"a slow client that falls behind between confirms", 10,
			[]int64{100 * mib, 150 * mib, 120 * mib, 170 * mib, 140 * mib, 190 * mib, 160 * mib, 210 * mib, 180 * mib, 230 * mib},
			queue.StatusWarn, "lag growing from 100 MiB to 230 MiB over 9m",
		},
		{"window not full", 3, []int64{10 * mib, 400 * mib}, queue.StatusOK, "active, 400 MiB behind"},
		// The flaps of the old rule, which warned whenever the lag ended
		// above where the window began and never dipped below it.
		{"WAL jitter around a steady lag", 3, []int64{40 * kib, 44 * kib, 43 * kib}, queue.StatusOK, "active, 43 KiB behind"},
		{"a quiet database's creep", 3, []int64{1000, 1100, 1200}, queue.StatusOK, "active, 1.2 KiB behind"},
		{"growth under one WAL segment", 3, []int64{1 * mib, 9 * mib, 16 * mib}, queue.StatusOK, "active, 16 MiB behind"},
		// A client that confirms every fourth poll: the lag climbs
		// between confirms and falls back at each; the window began at a
		// trough, and a later trough is as low.
		{
			"the sawtooth of periodic confirms", 10,
			[]int64{5 * mib, 20 * mib, 35 * mib, 50 * mib, 5 * mib, 20 * mib, 35 * mib, 50 * mib, 5 * mib, 20 * mib},
			queue.StatusOK, "active, 20 MiB behind",
		},
		{"growth then drain", 3, []int64{10 * mib, 200 * mib, 12 * mib}, queue.StatusOK, "active, 12 MiB behind"},
		{
			"growth then drain over a long window", 10,
			[]int64{10 * mib, 50 * mib, 90 * mib, 130 * mib, 170 * mib, 130 * mib, 90 * mib, 50 * mib, 10 * mib, 11 * mib},
			queue.StatusOK, "active, 11 MiB behind",
		},
		{"dip below the start", 3, []int64{50 * mib, 40 * mib, 200 * mib}, queue.StatusOK, "active, 200 MiB behind"},
		{"draining", 3, []int64{200 * mib, 100 * mib, 10 * mib}, queue.StatusOK, "active, 10 MiB behind"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hist, latest := slotSeries(tc.lags...)
			EvaluateOutbox(hist, latest, StatusOptions{Window: tc.window})
			if got := latest.Slots[0]; got.Status != tc.want || got.StatusReason != tc.reason {
				t.Errorf("status %s %q, want %s %q", got.Status, got.StatusReason, tc.want, tc.reason)
			}
		})
	}
}
