package collectors

import (
	"context"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// billingKey is the reader key of kafkaSnapshot's group billing.
var billingKey = queue.ReaderKey{Broker: queue.Kafka, Cluster: "prod", Name: "billing", Unit: queue.UnitMessages}

// TestReaderHistory: every reader of every broker gets one point per poll
// that is worth one, bounded to the kept window, looked up by its key (a
// Kafka cluster and an outbox source of the same name, a table and a slot
// of the same name, stay apart), and forgotten once gone.
func TestReaderHistory(t *testing.T) {
	i := 0
	o := &scriptedSource{broker: queue.Outbox, cluster: "prod", results: []func() (*queue.Snapshot, error){
		func() (*queue.Snapshot, error) {
			i++
			snap := outboxSnapshot(i)
			snap.Cluster = "prod"
			for k := range snap.OutboxTables {
				snap.OutboxTables[k].Source = "prod"
			}
			for k := range snap.Slots {
				snap.Slots[k].Source, snap.Slots[k].Slot = "prod", "outbox" // a slot named like the table
			}
			return snap, nil
		},
	}}
	j := 0 // sources poll concurrently: each counts its own polls
	k := &scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){
		func() (*queue.Snapshot, error) {
			j++
			snap := kafkaSnapshot()
			snap.Time = fixedTime.Add(time.Duration(j) * time.Second)
			return snap, nil
		},
	}}
	n := &scriptedSource{broker: queue.NATS, cluster: "local", results: []func() (*queue.Snapshot, error){ok(natsSnapshot())}}
	c := New([]Source{k, o, n}, Options{Interval: time.Second, History: 4 * time.Second})
	for range 7 {
		c.PollOnce(context.Background())
	}
	at := func(h []queue.ReaderPoint) []int {
		var out []int
		for _, p := range h {
			out = append(out, int(p.At.Sub(fixedTime)/time.Second))
		}
		return out
	}
	table := queue.ReaderKey{Broker: queue.Outbox, Cluster: "prod", Name: "outbox", Unit: queue.UnitRows}
	slot := queue.ReaderKey{Broker: queue.Outbox, Cluster: "prod", Name: "outbox", Unit: queue.UnitBytes}
	group := queue.ReaderKey{Broker: queue.Kafka, Cluster: "prod", Name: "billing", Unit: queue.UnitMessages}
	tests := []struct {
		name string
		key  queue.ReaderKey
		at   []int // seconds after fixedTime of the kept points
		last queue.ReaderPoint
	}{
		// Polls 1–7, five kept; poll 5 could not read the table.
		{"outbox table", table, []int{2, 3, 4, 6, 7}, queue.ReaderPoint{Backlog: 70, LagSeconds: 7, HasLagSeconds: true}},
		// Poll 6 did not know the slot's lag.
		{"slot named like the table", slot, []int{2, 3, 4, 5, 7}, queue.ReaderPoint{Backlog: 7000}},
		{"kafka group of a same-named cluster", group, []int{3, 4, 5, 6, 7}, queue.ReaderPoint{Backlog: 100, LagSeconds: 40, HasLagSeconds: true}},
		{"group that could not be read", queue.ReaderKey{Broker: queue.Kafka, Cluster: "prod", Name: "secret", Unit: queue.UnitMessages}, nil, queue.ReaderPoint{}},
		{"jetstream consumer", queue.ReaderKey{Broker: queue.NATS, Cluster: "local", Scope: "ORDERS", Name: "billing", Unit: queue.UnitMessages}, []int{0, 0, 0, 0, 0}, queue.ReaderPoint{Backlog: 6, LagSeconds: 12.5, HasLagSeconds: true}},
		{"unknown reader", queue.ReaderKey{Broker: queue.NATS, Cluster: "prod", Name: "billing", Unit: queue.UnitMessages}, nil, queue.ReaderPoint{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := c.ReaderHistory(tt.key)
			if !equal(at(h), tt.at) {
				t.Fatalf("points at %v; want %v", at(h), tt.at)
			}
			if len(h) == 0 {
				return
			}
			last := h[len(h)-1]
			last.At = time.Time{}
			if last != tt.last {
				t.Errorf("last point %+v; want %+v", last, tt.last)
			}
		})
	}
	c.PollOnce(context.Background()) // the slot and audit_outbox are gone
	if h := c.ReaderHistory(slot); len(h) != 0 {
		t.Errorf("dropped slot still has %d points", len(h))
	}
	if h := c.ReaderHistory(table); len(h) != 5 || h[4].Backlog != 80 {
		t.Errorf("table history after the drop %+v", h)
	}
}

// TestAppendBounded: a full history keeps the newest limit points, oldest
// first, without growing its array.
func TestAppendBounded(t *testing.T) {
	var h []int
	for i := range 10 {
		h = appendBounded(h, i, 4)
	}
	if !equal(h, []int{6, 7, 8, 9}) {
		t.Errorf("kept %v; want [6 7 8 9]", h)
	}
	c := cap(h)
	h = appendBounded(h, 10, 4)
	if !equal(h, []int{7, 8, 9, 10}) || cap(h) != c {
		t.Errorf("kept %v (cap %d, was %d); want [7 8 9 10] in the same array", h, cap(h), c)
	}
}
