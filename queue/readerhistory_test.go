package queue

import (
	"testing"
	"time"
)

// TestSnapshotReaders: every kind of reader a snapshot holds is listed
// once, with a key of its own, even where an outbox table and a slot share
// a name.
func TestSnapshotReaders(t *testing.T) {
	snap := &Snapshot{
		Groups:       []ConsumerGroup{{Cluster: "k", Name: "billing"}},
		Consumers:    []StreamConsumer{{Cluster: "n", Stream: "ORDERS", Name: "billing"}},
		Queues:       []Queue{{Cluster: "r", VHost: "/", Name: "billing"}},
		OutboxTables: []OutboxTable{{Source: "db", Table: "debezium"}},
		Slots:        []ReplicationSlot{{Source: "db", Slot: "debezium"}},
		SQSQueues:    []SQSQueue{{Cluster: "s", Name: "billing"}},
		ShareGroups:  []ShareGroup{{Cluster: "k", Name: "payments"}},
	}
	got := snap.Readers()
	want := []ReaderKey{
		{Broker: Kafka, Cluster: "k", Name: "billing", Unit: UnitMessages},
		{Broker: Kafka, Cluster: "k", Name: "payments", Unit: UnitMessages},
		{Broker: NATS, Cluster: "n", Scope: "ORDERS", Name: "billing", Unit: UnitMessages},
		{Broker: RabbitMQ, Cluster: "r", Scope: "/", Name: "billing", Unit: UnitMessages},
		{Broker: Outbox, Cluster: "db", Name: "debezium", Unit: UnitRows},
		{Broker: Outbox, Cluster: "db", Name: "debezium", Unit: UnitBytes},
		{Broker: SQS, Cluster: "s", Name: "billing", Unit: UnitMessages},
	}
	if len(got) != len(want) {
		t.Fatalf("Readers() listed %d readers; want %d", len(got), len(want))
	}
	seen := map[ReaderKey]bool{}
	for i := range got {
		if k := got[i].Key(); k != want[i] {
			t.Errorf("reader %d key = %+v; want %+v", i, k, want[i])
		}
		seen[got[i].Key()] = true
	}
	if len(seen) != len(want) {
		t.Errorf("%d distinct keys; want %d", len(seen), len(want))
	}
}

// TestReaderPoint: a poll is kept when its backlog is known and its lag
// age is not a partial estimate; the lag age is kept only when known.
func TestReaderPoint(t *testing.T) {
	at := time.Unix(100, 0)
	tests := []struct {
		name   string
		r      Reader
		want   ReaderPoint
		wantOK bool
	}{
		{
			"exact lag",
			Reader{Backlog: 7, BacklogKnown: true, LagSeconds: 3, LagBasis: LagExact},
			ReaderPoint{At: at, Backlog: 7, LagSeconds: 3, HasLagSeconds: true},
			true,
		},
		{
			"no lag age",
			Reader{Backlog: 7, BacklogKnown: true, LagBasis: LagUnknown},
			ReaderPoint{At: at, Backlog: 7},
			true,
		},
		{
			"estimate waits for the poll that completes it",
			Reader{Backlog: 7, BacklogKnown: true, LagSeconds: 3, LagBasis: LagEstimate},
			ReaderPoint{},
			false,
		},
		{
			"a sighting kept across polls keeps the poll, its age not exact",
			(&SQSQueue{Name: "q", ARN: "arn", Visible: 4, OldestAge: time.Hour, OldestAgeBasis: SQSAgeBrowse}).Reader(),
			ReaderPoint{At: at, Backlog: 4, LagSeconds: 3600},
			true,
		},
		{"unknown backlog", Reader{LagBasis: LagUnknown}, ReaderPoint{}, false},
		{"read error", (&ConsumerGroup{Err: "timeout"}).Reader(), ReaderPoint{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.r.Point(at)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Point() = %+v, %v; want %+v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
