package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// TestReaderAttention: every reader that is not ok has one line, in the
// same shape whatever its broker.
func TestReaderAttention(t *testing.T) {
	readers := []queue.Reader{
		(&queue.ConsumerGroup{
			Cluster: "k", Name: "billing", Status: queue.StatusStop, StatusReason: "no members",
			Partitions: []queue.PartitionLag{{Lag: 560, LagSeconds: 3600, LagSecondsPending: true}},
		}).Reader(),
		(&queue.StreamConsumer{Cluster: "n", Stream: "ORDERS", Name: "mailer", Pending: 22, Status: queue.StatusStop, StatusReason: "unbound"}).Reader(),
		(&queue.ReplicationSlot{Source: "db", Slot: "debezium", LagBytes: 3 << 30, Status: queue.StatusStop, StatusReason: "inactive"}).Reader(),
		(&queue.OutboxTable{Source: "db", Table: "outbox", Pending: 80, OldestPendingAge: 30 * time.Second, Status: queue.StatusStall, StatusReason: "no progress"}).Reader(),
		(&queue.ConsumerGroup{Cluster: "k", Name: "fine"}).Reader(),
	}
	items := readerAttention(readers)
	var got []string
	for _, it := range items {
		a := it.A
		got = append(got, strings.Join([]string{a.Class, a.Name, a.Where, a.Metric, a.MetricExact, a.Age, a.AgeTitle, a.Reason, a.Href}, "|"))
	}
	want := []string{
		"stop|billing|kafka:k|560 pending|560 messages|1h|the next message to be read is 1h old or more (still reading the rest)|no members|/kafka/k/groups/billing",
		"stop|mailer|nats:n · ORDERS|22 pending|22 messages|||unbound|/nats/n/streams/ORDERS/consumers/mailer",
		"stop|slot debezium|outbox:db|3 GiB|3,221,225,472 bytes|||inactive|/outbox/db",
		"stall|outbox|outbox:db|80 pending|80 rows|30s|the next row to be read is 30s old|no progress|/outbox/db",
	}
	if !slices.Equal(got, want) {
		t.Errorf("attention lines\n got %q\nwant %q", got, want)
	}
	if lagging, stopped := tally(readers); lagging != 4 || stopped != 4 {
		t.Errorf("tally: %d lagging, %d stopped; want 4, 4", lagging, stopped)
	}
}
