package alerts

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// memOnsets is an OnsetStore in memory that counts its writes.
type memOnsets struct {
	mu     sync.Mutex
	rows   map[string]queue.Onset // broker/cluster/reader
	writes int
}

func newMemOnsets() *memOnsets { return &memOnsets{rows: map[string]queue.Onset{}} }

func (m *memOnsets) Onsets(_ context.Context, broker, cluster string) ([]queue.Onset, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []queue.Onset
	for k, o := range m.rows {
		if strings.HasPrefix(k, broker+"/"+cluster+"/") {
			out = append(out, o)
		}
	}
	return out, nil
}

func (m *memOnsets) SaveOnsets(_ context.Context, broker, cluster string, put []queue.Onset, del []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	for _, o := range put {
		m.rows[broker+"/"+cluster+"/"+o.Reader] = o
	}
	for _, r := range del {
		delete(m.rows, broker+"/"+cluster+"/"+r)
	}
	return nil
}

func (m *memOnsets) readers() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.rows))
}

// memberless is poll i of group g with no members and lag 500.
func memberless(i int) *queue.Snapshot {
	return snap(i, group(0, part("orders", 3, 1000, 1500)))
}

// stalled is poll i of group g with members whose committed offset stays
// at 1000 while lag is 500.
func stalled(i int) *queue.Snapshot {
	return snap(i, group(2, part("orders", 3, 1000, 1500)))
}

// healthy is poll i of group g with members that caught up.
func healthy(i int) *queue.Snapshot {
	return snap(i, group(2, part("orders", 3, int64(1000+i), int64(1000+i))))
}

// TestOnsetBeyondTheWindow holds the sentences of lasting conditions to
// their onset: a group memberless, or stalled, for an hour says so, not
// the window's ten minutes.
func TestOnsetBeyondTheWindow(t *testing.T) {
	for _, tt := range []struct {
		name string
		poll func(int) *queue.Snapshot
		want string
	}{
		{"stop", memberless, "no members since 12:00 UTC (59m), lag 500"},
		{"stall", stalled, "committed offset has not moved since 12:00 UTC (59m) while lag is 500 on orders/3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEvaluator(StatusOptions{})
			var latest *queue.Snapshot
			for i := range 60 {
				latest = tt.poll(i)
				e.Evaluate(latest)
			}
			g := latest.Groups[0]
			if g.Status != queue.Status(tt.name) || g.StatusReason != tt.want {
				t.Errorf("after 60 polls: %s %q; want %s %q", g.Status, g.StatusReason, tt.name, tt.want)
			}
			if !g.StatusSince.Equal(t0) {
				t.Errorf("since %v; want the first poll's %v", g.StatusSince, t0)
			}

			// One healthy poll is held (hysteresis.go): the onset stays.
			ok := healthy(60)
			e.Evaluate(ok)
			if g := ok.Groups[0]; g.Status != queue.Status(tt.name) || !g.StatusSince.Equal(t0) {
				t.Errorf("one healthy poll: %s since %v; want %s since %v, held", g.Status, g.StatusSince, tt.name, t0)
			}
			// Once it clears, the onset is forgotten: the next stop starts
			// afresh, at its first poll.
			ok = healthy(61)
			e.Evaluate(ok)
			if g := ok.Groups[0]; g.Status != queue.StatusOK || !g.StatusSince.IsZero() {
				t.Errorf("recovered: %s since %v; want ok, no onset", g.Status, g.StatusSince)
			}
			first := memberless(62)
			e.Evaluate(first)
			again := memberless(63)
			e.Evaluate(again)
			if g := again.Groups[0]; !g.StatusSince.Equal(first.Time) || g.StatusReason != "no members since 13:02 UTC (1m), lag 500" {
				t.Errorf("stopped again: since %v %q; want since %v", g.StatusSince, g.StatusReason, first.Time)
			}
		})
	}
}

// TestOnsetConditionChange starts a new onset when the condition changes.
func TestOnsetConditionChange(t *testing.T) {
	e := NewEvaluator(StatusOptions{Window: 3})
	for i := range 20 {
		e.Evaluate(stalled(i))
	}
	first := memberless(20)
	e.Evaluate(first)
	stop := memberless(21) // the second poll in a row shows it
	e.Evaluate(stop)
	if g := stop.Groups[0]; g.Status != queue.StatusStop || !g.StatusSince.Equal(first.Time) {
		t.Errorf("stall then stop: %s since %v; want stop since %v", g.Status, g.StatusSince, first.Time)
	}
}

// TestOnsetConsumerAndTable covers the other readers whose sentences say
// how long: a push consumer with no subscriber and a stalled outbox table.
func TestOnsetConsumerAndTable(t *testing.T) {
	e := NewEvaluator(StatusOptions{})
	var latest *queue.Snapshot
	for i := range 90 {
		latest = &queue.Snapshot{
			Broker: queue.NATS, Cluster: "prod", Time: t0.Add(time.Duration(i) * time.Minute),
			Streams: []queue.Stream{{Cluster: "prod", Name: "S", FirstSeq: 1, LastSeq: 20}},
			Consumers: []queue.StreamConsumer{{
				Cluster: "prod", Stream: "S", Name: "C", Pending: 12, DeliveredSeq: 8, MaxAckPending: 1000,
			}},
		}
		e.Evaluate(latest)
	}
	c := latest.Consumers[0]
	if want := "no subscriber bound to its deliver subject since 12:00 UTC (1h 29m), 12 pending"; c.StatusReason != want || !c.StatusSince.Equal(t0) {
		t.Errorf("consumer: %q since %v; want %q since %v", c.StatusReason, c.StatusSince, want, t0)
	}

	for i := range 90 {
		latest = &queue.Snapshot{
			Broker: queue.Outbox, Cluster: "orders-db", Time: t0.Add(time.Duration(i) * time.Minute),
			OutboxTables: []queue.OutboxTable{{
				Source: "orders-db", Table: "outbox", Pending: 40, OldestPendingAge: time.Duration(i+3) * time.Minute,
				HasPublishRate: i > 0,
			}},
		}
		e.Evaluate(latest)
	}
	tb := latest.OutboxTables[0]
	if want := "40 rows pending and none published since 12:00 UTC (1h 29m); the oldest is 1h 32m old"; tb.StatusReason != want || !tb.StatusSince.Equal(t0) {
		t.Errorf("table: %q since %v; want %q since %v", tb.StatusReason, tb.StatusSince, want, t0)
	}
}

// TestOnsetShareGroup says since when a share group has had no members.
func TestOnsetShareGroup(t *testing.T) {
	e := NewEvaluator(StatusOptions{})
	var latest *queue.Snapshot
	for i := range 30 {
		latest = &queue.Snapshot{
			Broker: queue.Kafka, Cluster: "prod", Time: t0.Add(time.Duration(i) * time.Minute),
			ShareGroups: []queue.ShareGroup{{
				Cluster: "prod", Name: "sg",
				Partitions: []queue.SharePartition{{Topic: "orders", Initialized: true, Start: 10, End: 50, Lag: 40}},
			}},
		}
		e.Evaluate(latest)
	}
	g := latest.ShareGroups[0]
	if want := "no members since 12:00 UTC (29m): 40 records waiting"; g.StatusReason != want || !g.StatusSince.Equal(t0) {
		t.Errorf("share group: %q since %v; want %q since %v", g.StatusReason, g.StatusSince, want, t0)
	}
}

// TestOnsetRestart keeps onsets in a store: a new Evaluator on it (a
// restart, or another replica) goes on from them, writing only when an
// onset begins, changes or ends.
func TestOnsetRestart(t *testing.T) {
	store := newMemOnsets()
	e := NewEvaluator(StatusOptions{})
	e.Persist(store, nil)
	for i := range 60 {
		e.Evaluate(&queue.Snapshot{
			Broker: queue.Kafka, Cluster: "prod", Time: t0.Add(time.Duration(i) * time.Minute),
			Groups: []queue.ConsumerGroup{
				{Cluster: "prod", Name: "stopped", Partitions: []queue.PartitionLag{part("orders", 3, 1000, 1500)}},
				{Cluster: "prod", Name: "stalled", Members: 1, Partitions: []queue.PartitionLag{part("orders", 3, 1000, 1500)}},
				{Cluster: "prod", Name: "healthy", Members: 1, Partitions: []queue.PartitionLag{part("orders", 3, 1000, 1000)}},
			},
		})
	}
	if got, want := store.readers(), []string{"kafka/prod/group:stalled", "kafka/prod/group:stopped"}; !slices.Equal(got, want) {
		t.Fatalf("stored %v; want %v", got, want)
	}
	// stopped began at the first poll; stalled showed once the window was
	// full, its onset the window's first poll too; nothing changed after.
	if store.writes != 2 {
		t.Errorf("%d writes; want 2, one per onset", store.writes)
	}

	// The restart: a new Evaluator, its window empty. stopped is seen at
	// once; stalled only once the window is full again and the next poll
	// agrees (hysteresis), and its onset is kept meanwhile. "gone"
	// recovered while the process was down.
	store.rows["kafka/prod/group:gone"] = queue.Onset{Reader: "group:gone", Condition: "stop", Since: t0}
	e = NewEvaluator(StatusOptions{})
	e.Persist(store, nil)
	for i := 70; i <= 80; i++ {
		latest := &queue.Snapshot{
			Broker: queue.Kafka, Cluster: "prod", Time: t0.Add(time.Duration(i) * time.Minute),
			Groups: []queue.ConsumerGroup{
				{Cluster: "prod", Name: "stopped", Partitions: []queue.PartitionLag{part("orders", 3, 1000, 1500)}},
				{Cluster: "prod", Name: "stalled", Members: 1, Partitions: []queue.PartitionLag{part("orders", 3, 1000, 1500)}},
				{Cluster: "prod", Name: "gone", Members: 1, Partitions: []queue.PartitionLag{part("orders", 3, 1000, 1000)}},
			},
		}
		e.Evaluate(latest)
		stopped, stalled := latest.Groups[0], latest.Groups[1]
		if !stopped.StatusSince.Equal(t0) {
			t.Errorf("poll %d: stopped since %v; want %v", i, stopped.StatusSince, t0)
		}
		if i == 70 && stopped.StatusReason != "no members since 12:00 UTC (1h 10m), lag 500" {
			t.Errorf("poll %d: stopped %q", i, stopped.StatusReason)
		}
		if i == 80 {
			if want := t0; stalled.Status != queue.StatusStall || !stalled.StatusSince.Equal(want) {
				t.Errorf("poll %d: stalled %s since %v; want stall since %v", i, stalled.Status, stalled.StatusSince, want)
			}
			if want := "committed offset has not moved since 12:00 UTC (1h 20m) while lag is 500 on orders/3"; stalled.StatusReason != want {
				t.Errorf("poll %d: stalled %q; want %q", i, stalled.StatusReason, want)
			}
		}
	}
	if got, want := store.readers(), []string{"kafka/prod/group:stalled", "kafka/prod/group:stopped"}; !slices.Equal(got, want) {
		t.Errorf("after the restart stored %v; want %v (gone dropped)", got, want)
	}
}

// TestOnsetPersistLate attaches the store once polling runs, as app does
// with a SQLite store: the store's older onset wins.
func TestOnsetPersistLate(t *testing.T) {
	store := newMemOnsets()
	store.rows["kafka/prod/group:g"] = queue.Onset{Reader: "group:g", Condition: "stop", Since: t0}
	e := NewEvaluator(StatusOptions{})
	e.Evaluate(memberless(30))
	e.Persist(store, nil)
	latest := memberless(31)
	e.Evaluate(latest)
	if g := latest.Groups[0]; !g.StatusSince.Equal(t0) {
		t.Errorf("since %v; want the stored %v", g.StatusSince, t0)
	}
}

// TestOnsetFailedPoll leaves onsets alone when a poll fails as a whole.
func TestOnsetFailedPoll(t *testing.T) {
	e := NewEvaluator(StatusOptions{})
	for i := range 20 {
		e.Evaluate(memberless(i))
	}
	failed := memberless(20)
	failed.Err = context.DeadlineExceeded
	e.Evaluate(failed)
	latest := memberless(21)
	e.Evaluate(latest)
	if g := latest.Groups[0]; !g.StatusSince.Equal(t0) {
		t.Errorf("since %v; want %v across the failed poll", g.StatusSince, t0)
	}
}

// sqsRead is a read of account "acct" at minute m whose queue "orders" has
// visible messages and none in flight; the Evaluator judges it against the
// read before it that it saw.
func sqsRead(m int, visible int64) *queue.Snapshot {
	at := t0.Add(time.Duration(m) * time.Minute)
	q := queue.SQSQueue{Cluster: "acct", Name: "orders", ARN: "arn:aws:sqs:eu-west-1:1:orders", Visible: visible}
	return &queue.Snapshot{
		Broker: queue.SQS, Cluster: "acct", Time: at,
		SQS: &queue.SQSAccount{ReadAt: at, ReadEvery: 4 * time.Minute}, SQSQueues: []queue.SQSQueue{q},
	}
}

// TestOnsetSQS: an SQS queue with no consumer says since when, from the
// read before the one that found it (nothing was in flight at either), at
// every poll between reads too, and after a restart that the store
// outlives: "no consumer since 12:00 UTC (8m): …".
func TestOnsetSQS(t *testing.T) {
	store := newMemOnsets()
	e := NewEvaluator(StatusOptions{})
	e.Persist(store, nil)
	r0 := sqsRead(0, 4)
	e.Evaluate(r0)
	if q := r0.SQSQueues[0]; q.Status != queue.StatusOK || !q.StatusSince.IsZero() {
		t.Fatalf("first read: %s since %v", q.Status, q.StatusSince)
	}
	r4 := sqsRead(4, 10)
	e.Evaluate(r4)
	if q := r4.SQSQueues[0]; q.Status != queue.StatusStop || !q.StatusSince.Equal(t0) ||
		q.StatusReason != "no consumer since 12:00 UTC (4m): 10 visible, up from 4 at the last read, and none in flight" {
		t.Errorf("second read: %s since %v %q", q.Status, q.StatusSince, q.StatusReason)
	}
	mid := sqsRead(4, 10) // a poll between reads: a copy of the read as read
	e.Evaluate(mid)
	if q := mid.SQSQueues[0]; !q.StatusSince.Equal(t0) || !strings.HasPrefix(q.StatusReason, "no consumer since 12:00 UTC (4m): ") {
		t.Errorf("between reads: since %v %q", q.StatusSince, q.StatusReason)
	}
	r8 := sqsRead(8, 16)
	e.Evaluate(r8)
	if q := r8.SQSQueues[0]; !q.StatusSince.Equal(t0) ||
		q.StatusReason != "no consumer since 12:00 UTC (8m): 16 visible, up from 10 at the last read, and none in flight" {
		t.Errorf("third read: since %v %q", q.StatusSince, q.StatusReason)
	}
	if got, want := store.readers(), []string{"sqs/acct/queue:orders"}; !slices.Equal(got, want) {
		t.Fatalf("stored %v; want %v", got, want)
	}

	// A restart: the first read judges nothing (no read before it), the
	// second finds no consumer again, and the onset is the stored one.
	e = NewEvaluator(StatusOptions{})
	e.Persist(store, nil)
	r12 := sqsRead(12, 20)
	e.Evaluate(r12)
	r16 := sqsRead(16, 25)
	e.Evaluate(r16)
	if q := r16.SQSQueues[0]; !q.StatusSince.Equal(t0) || !strings.HasPrefix(q.StatusReason, "no consumer since 12:00 UTC (16m): ") {
		t.Errorf("after a restart: since %v %q; want since %v", q.StatusSince, q.StatusReason, t0)
	}
	// A consumer came: the onset is forgotten, in the store too.
	r20 := sqsRead(20, 25)
	r20.SQSQueues[0].InFlight = 5
	e.Evaluate(r20)
	if q := r20.SQSQueues[0]; q.Status != queue.StatusOK || !q.StatusSince.IsZero() || len(store.readers()) != 0 {
		t.Errorf("consumed again: %s since %v, stored %v", q.Status, q.StatusSince, store.readers())
	}
}

// TestOnsetSQSStall: a queue at the in-flight limit says since which read.
func TestOnsetSQSStall(t *testing.T) {
	e := NewEvaluator(StatusOptions{})
	var last *queue.Snapshot
	for m := 0; m <= 8; m += 4 {
		last = sqsRead(m, 10)
		q := &last.SQSQueues[0]
		q.InFlight = queue.SQSInFlightLimit
		e.Evaluate(last)
	}
	want := "in flight at the SQS limit of 120,000 since 12:00 UTC (8m): receives fail until some are deleted"
	if q := last.SQSQueues[0]; q.Status != queue.StatusStall || q.StatusReason != want {
		t.Errorf("%s %q; want stall %q", q.Status, q.StatusReason, want)
	}
}
