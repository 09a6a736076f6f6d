package queue

import (
	"reflect"
	"testing"
	"time"
)

// TestEffectiveStatusEveryReader holds the one effective-status rule on
// every reader type, through its methods and through its Reader.
func TestEffectiveStatusEveryReader(t *testing.T) {
	tests := []struct {
		name       string
		err        string
		status     Status
		reason     string
		want       Status
		wantReason string
	}{
		{"not evaluated", "", "", "", StatusOK, ""},
		{"evaluated", "", StatusStall, "stuck", StatusStall, "stuck"},
		{"read error, not evaluated", "not authorized", "", "", StatusError, "not authorized"},
		{"read error wins over a stale evaluation", "timeout", StatusStop, "no members", StatusError, "timeout"},
		{"evaluated error", "", StatusError, "poll failed", StatusError, "poll failed"},
	}
	type reader interface {
		EffectiveStatus() Status
		EffectiveReason() string
		Reader() Reader
	}
	for _, tt := range tests {
		readers := map[string]reader{
			"group":    &ConsumerGroup{Err: tt.err, Status: tt.status, StatusReason: tt.reason},
			"consumer": &StreamConsumer{Err: tt.err, Status: tt.status, StatusReason: tt.reason},
			"table":    &OutboxTable{Err: tt.err, Status: tt.status, StatusReason: tt.reason},
			"slot":     &ReplicationSlot{Err: tt.err, Status: tt.status, StatusReason: tt.reason},
		}
		for kind, r := range readers {
			t.Run(tt.name+"/"+kind, func(t *testing.T) {
				if got := r.EffectiveStatus(); got != tt.want {
					t.Errorf("EffectiveStatus() = %q; want %q", got, tt.want)
				}
				if got := r.EffectiveReason(); got != tt.wantReason {
					t.Errorf("EffectiveReason() = %q; want %q", got, tt.wantReason)
				}
				if got := r.Reader(); got.Status != tt.want || got.Err != tt.err {
					t.Errorf("Reader() status %q err %q; want %q %q", got.Status, got.Err, tt.want, tt.err)
				}
			})
		}
	}
}

func TestReaders(t *testing.T) {
	tests := []struct {
		name string
		got  Reader
		want Reader
	}{
		{
			"kafka group, names escaped in its page",
			(&ConsumerGroup{
				Cluster: "eu/1", Name: "billing svc", Members: 2, Status: StatusWarn, StatusReason: "lag rising",
				Partitions: []PartitionLag{{Lag: 7, LagSeconds: 40}, {Lag: 5, LagSeconds: 12}},
			}).Reader(),
			Reader{
				Broker: Kafka, Cluster: "eu/1", Name: "billing svc", Title: "billing svc",
				Status: StatusWarn, Reason: "lag rising",
				Backlog: 12, BacklogUnit: UnitMessages, BacklogKnown: true, LagSeconds: 40, LagBasis: LagExact,
				Members: 2, Page: "/kafka/eu%2F1/groups/billing%20svc",
			},
		},
		{
			"kafka group still reading a partition's lag seconds",
			(&ConsumerGroup{Cluster: "c", Name: "g", Partitions: []PartitionLag{{Lag: 3, LagSeconds: 9, LagSecondsPending: true}}}).Reader(),
			Reader{
				Broker: Kafka, Cluster: "c", Name: "g", Title: "g", Status: StatusOK,
				Backlog: 3, BacklogUnit: UnitMessages, BacklogKnown: true, LagSeconds: 9, LagBasis: LagEstimate,
				Page: "/kafka/c/groups/g",
			},
		},
		{
			"jetstream consumer, lag unknown",
			(&StreamConsumer{Cluster: "n1", Stream: "ORDERS", Name: "mailer", Pending: 22}).Reader(),
			Reader{
				Broker: NATS, Cluster: "n1", Scope: "ORDERS", Name: "mailer", Title: "mailer", Status: StatusOK,
				Backlog: 22, BacklogUnit: UnitMessages, BacklogKnown: true, LagBasis: LagUnknown,
				Members: -1, Page: "/nats/n1/streams/ORDERS/consumers/mailer",
			},
		},
		{
			"jetstream consumer, lag known",
			(&StreamConsumer{Cluster: "n1", Stream: "S", Name: "c", LagSeconds: 5, HasLagSeconds: true}).Reader(),
			Reader{
				Broker: NATS, Cluster: "n1", Scope: "S", Name: "c", Title: "c", Status: StatusOK,
				BacklogUnit: UnitMessages, BacklogKnown: true, LagSeconds: 5, LagBasis: LagExact,
				Members: -1, Page: "/nats/n1/streams/S/consumers/c",
			},
		},
		{
			"rabbitmq queue with a known head age",
			(&Queue{Cluster: "r", VHost: "/", Name: "orders", Ready: 25, Unacked: 3, Consumers: 2, HeadMessageAge: 40 * time.Second, HasHeadAge: true}).Reader(),
			Reader{
				Broker: RabbitMQ, Cluster: "r", Scope: "/", Name: "orders", Title: "orders", Status: StatusOK,
				Backlog: 25, BacklogUnit: UnitMessages, BacklogKnown: true, LagSeconds: 40, LagBasis: LagExact, Members: 2,
				Page: "/rabbitmq/r/queues/%2F/orders",
			},
		},
		{
			"rabbitmq queue judged stop, with its sentence and onset",
			(&Queue{Cluster: "r", VHost: "v", Name: "q", Ready: 4, Status: StatusStop, StatusReason: "no consumer for 1m, 4 ready", StatusSince: time.Unix(100, 0)}).Reader(),
			Reader{
				Broker: RabbitMQ, Cluster: "r", Scope: "v", Name: "q", Title: "q", Status: StatusStop, Reason: "no consumer for 1m, 4 ready",
				StatusSince: time.Unix(100, 0), Backlog: 4, BacklogUnit: UnitMessages, BacklogKnown: true, LagBasis: LagUnknown,
				Page: "/rabbitmq/r/queues/v/q",
			},
		},
		{
			"rabbitmq queue whose head age the broker does not know",
			(&Queue{Cluster: "r", VHost: "v", Name: "q"}).Reader(),
			Reader{
				Broker: RabbitMQ, Cluster: "r", Scope: "v", Name: "q", Title: "q", Status: StatusOK,
				BacklogUnit: UnitMessages, BacklogKnown: true, LagBasis: LagUnknown, Page: "/rabbitmq/r/queues/v/q",
			},
		},
		{
			"outbox table with pending rows and no evaluation says how old they are",
			(&OutboxTable{Source: "orders-db", Table: "outbox", Pending: 80, OldestPendingAge: 90 * time.Second}).Reader(),
			Reader{
				Broker: Outbox, Cluster: "orders-db", Name: "outbox", Title: "outbox",
				Status: StatusOK, Reason: "the oldest pending row is 1m 30s old",
				Backlog: 80, BacklogUnit: UnitRows, BacklogKnown: true, LagSeconds: 90, LagBasis: LagExact,
				Members: -1, Page: "/outbox/orders-db",
			},
		},
		{
			"outbox table that could not be read has no backlog or lag age",
			(&OutboxTable{Source: "db", Table: "t", Err: "relation does not exist", Status: StatusWarn}).Reader(),
			Reader{
				Broker: Outbox, Cluster: "db", Name: "t", Title: "t", Status: StatusError, Reason: "relation does not exist",
				BacklogUnit: UnitRows, LagBasis: LagUnknown, Members: -1, Err: "relation does not exist", Page: "/outbox/db",
			},
		},
		{
			"kafka group that could not be read",
			(&ConsumerGroup{Cluster: "c", Name: "g", Err: "not authorized", Members: 3}).Reader(),
			Reader{
				Broker: Kafka, Cluster: "c", Name: "g", Title: "g", Status: StatusError, Reason: "not authorized",
				BacklogUnit: UnitMessages, LagBasis: LagUnknown, Members: 3, Err: "not authorized", Page: "/kafka/c/groups/g",
			},
		},
		{
			"empty outbox table",
			(&OutboxTable{Source: "db", Table: "t"}).Reader(),
			Reader{
				Broker: Outbox, Cluster: "db", Name: "t", Title: "t", Status: StatusOK, Reason: "no pending rows",
				BacklogUnit: UnitRows, BacklogKnown: true, LagBasis: LagExact, Members: -1, Page: "/outbox/db",
			},
		},
		{
			"inactive slot with unknown lag",
			(&ReplicationSlot{Source: "db", Slot: "debezium", LagUnknown: "never used"}).Reader(),
			Reader{
				Broker: Outbox, Cluster: "db", Name: "debezium", Title: "slot debezium", Status: StatusOK,
				Reason: "no consumer is connected to the slot", BacklogUnit: UnitBytes, LagBasis: LagUnknown,
				Page: "/outbox/db",
			},
		},
		{
			"active slot keeps its evaluated reason",
			(&ReplicationSlot{Source: "db", Slot: "s", LagBytes: 2048, Active: true, Status: StatusWarn, StatusReason: "lag growing"}).Reader(),
			Reader{
				Broker: Outbox, Cluster: "db", Name: "s", Title: "slot s", Status: StatusWarn, Reason: "lag growing",
				Backlog: 2048, BacklogUnit: UnitBytes, BacklogKnown: true, LagBasis: LagUnknown,
				Members: 1, Page: "/outbox/db",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("Reader()\n got %+v\nwant %+v", tt.got, tt.want)
			}
		})
	}
}

func TestReaderBacklogAndCounts(t *testing.T) {
	tests := []struct {
		r                Reader
		text, title      string
		lagging, stopped bool
	}{
		{Reader{Backlog: 12_400, BacklogUnit: UnitMessages, BacklogKnown: true}, "12.4k pending", "12,400 messages", false, false},
		{Reader{Backlog: 80, BacklogUnit: UnitRows, BacklogKnown: true, Status: StatusWarn}, "80 pending", "80 rows", true, false},
		{Reader{Backlog: 3 << 20, BacklogUnit: UnitBytes, BacklogKnown: true, Status: StatusStall}, "3 MiB", "3,145,728 bytes", true, true},
		{Reader{BacklogUnit: UnitBytes, Status: StatusStop}, "—", "unknown", true, true},
		{Reader{Status: StatusError}, "—", "unknown", false, false},
		{Reader{Status: StatusRewind}, "—", "unknown", false, false},
	}
	for _, tt := range tests {
		if got := tt.r.BacklogText(); got != tt.text {
			t.Errorf("%+v BacklogText() = %q; want %q", tt.r, got, tt.text)
		}
		if got := tt.r.BacklogTitle(); got != tt.title {
			t.Errorf("%+v BacklogTitle() = %q; want %q", tt.r, got, tt.title)
		}
		if got := tt.r.Lagging(); got != tt.lagging {
			t.Errorf("%+v Lagging() = %v; want %v", tt.r, got, tt.lagging)
		}
		if got := tt.r.Stopped(); got != tt.stopped {
			t.Errorf("%+v Stopped() = %v; want %v", tt.r, got, tt.stopped)
		}
	}
}

// TestEveryReaderKindListed: every list of readers a Snapshot holds (a
// slice of a type with a Reader method) is counted, listed by Readers and
// filtered by WithReaders: a kind added to Snapshot and left out of them
// would be missing from the overview's counts, or shown whole to a scoped
// principal.
func TestEveryReaderKindListed(t *testing.T) {
	readerType := reflect.TypeFor[interface{ Reader() Reader }]()
	st := reflect.TypeFor[Snapshot]()
	kinds := 0
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Type.Kind() != reflect.Slice || !reflect.PointerTo(f.Type.Elem()).Implements(readerType) {
			continue
		}
		kinds++
		var s Snapshot
		v := reflect.ValueOf(&s).Elem().Field(i)
		v.Set(reflect.MakeSlice(f.Type, 1, 1))
		if s.ReaderCount() != 1 || len(s.Readers()) != 1 {
			t.Errorf("Snapshot.%s: counted %d, listed %d; want 1 each", f.Name, s.ReaderCount(), len(s.Readers()))
		}
		all, none := s.WithReaders(func(Reader) bool { return true }), s.WithReaders(func(Reader) bool { return false })
		if all.ReaderCount() != 1 || none.ReaderCount() != 0 {
			t.Errorf("Snapshot.%s: WithReaders kept %d of all, %d of none; want 1 and 0", f.Name, all.ReaderCount(), none.ReaderCount())
		}
	}
	if kinds < 8 {
		t.Errorf("found %d reader lists in Snapshot; the test misses some", kinds)
	}
}
