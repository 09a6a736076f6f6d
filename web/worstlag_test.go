package web

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// TestWorstLagEveryReader: the Worst lag card names the reader with the
// oldest lag age whatever its broker, and links its page when it has one.
func TestWorstLagEveryReader(t *testing.T) {
	now := time.Now()
	group := queue.ConsumerGroup{
		Cluster: "prod", Name: "billing", State: "Stable", Members: 1,
		Partitions: []queue.PartitionLag{{Topic: "t", Lag: 50, LagSeconds: 60, HasCommit: true}},
	}
	consumer := func(lag float64) queue.StreamConsumer {
		return queue.StreamConsumer{Cluster: "local", Stream: "ORDERS", Name: "mailer", Pull: true, Pending: 9, LagSeconds: lag, HasLagSeconds: true}
	}
	table := func(age time.Duration) queue.OutboxTable {
		return queue.OutboxTable{Source: "orders-db", Table: "outbox", Pending: 4, OldestPendingAge: age}
	}
	tests := []struct {
		name      string
		consumer  queue.StreamConsumer
		table     queue.OutboxTable
		wantLink  string // the card's link to the worst reader
		wantTitle string // its sparkline's title
	}{
		{
			"kafka group", consumer(30), table(10 * time.Second),
			`<a class="muted small" href="/kafka/prod/groups/billing">billing</a>`, "lag time of billing",
		},
		{
			"jetstream consumer", consumer(300), table(10 * time.Second),
			`<a class="muted small" href="/nats/local/streams/ORDERS/consumers/mailer">mailer</a>`, "lag time of mailer",
		},
		{
			"outbox table", consumer(300), table(15 * time.Minute),
			`<a class="muted small" href="/outbox/orders-db">outbox</a>`, "lag time of outbox",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Options{Metrics: http.NotFoundHandler(), Monitor: staticMonitor{ready: true, snaps: []*queue.Snapshot{
				{Broker: queue.Kafka, Cluster: "prod", Time: now, Groups: []queue.ConsumerGroup{group}},
				{Broker: queue.NATS, Cluster: "local", Time: now, Consumers: []queue.StreamConsumer{tt.consumer}},
				{Broker: queue.Outbox, Cluster: "orders-db", Time: now, OutboxTables: []queue.OutboxTable{tt.table}},
			}}})
			body := do(t, s, "GET", "/").Body.String()
			card := body[strings.Index(body, "Worst lag"):]
			card = card[:strings.Index(card, "Dead letters")]
			if !strings.Contains(card, tt.wantLink) {
				t.Errorf("Worst lag card lacks %s:\n%s", tt.wantLink, card)
			}
			if !strings.Contains(card, tt.wantTitle) {
				t.Errorf("Worst lag sparkline lacks %q:\n%s", tt.wantTitle, card)
			}
		})
	}
}

// keyedMonitor serves one history per reader key.
type keyedMonitor struct {
	staticMonitor
	h map[queue.ReaderKey][]queue.ReaderPoint
}

func (m keyedMonitor) ReaderHistory(k queue.ReaderKey) []queue.ReaderPoint { return m.h[k] }

// TestLaggingTrendEveryReader: the lagging card's trend sums the kept
// backlog of every lagging reader, whatever its broker, aligned at the
// latest poll; healthy readers and a slot's bytes stay out.
func TestLaggingTrendEveryReader(t *testing.T) {
	group := (&queue.ConsumerGroup{Cluster: "prod", Name: "billing", Status: queue.StatusWarn}).Reader()
	consumer := (&queue.StreamConsumer{Cluster: "local", Stream: "ORDERS", Name: "mailer", Status: queue.StatusStop, Pending: 3}).Reader()
	table := (&queue.OutboxTable{Source: "db", Table: "outbox", Status: queue.StatusStall, Pending: 2}).Reader()
	slot := (&queue.ReplicationSlot{Source: "db", Slot: "cdc", Status: queue.StatusStall, LagBytes: 1 << 20}).Reader()
	healthy := (&queue.ConsumerGroup{Cluster: "prod", Name: "ok"}).Reader()
	pts := func(v ...int64) []queue.ReaderPoint {
		out := make([]queue.ReaderPoint, len(v))
		for i := range v {
			out[i].Backlog = v[i]
		}
		return out
	}
	s := New(Options{Metrics: http.NotFoundHandler(), Monitor: keyedMonitor{h: map[queue.ReaderKey][]queue.ReaderPoint{
		group.Key():    pts(1, 2, 3),
		consumer.Key(): pts(10, 20),
		table.Key():    pts(100),
		slot.Key():     pts(1<<20, 1<<20),
		healthy.Key():  pts(5000, 5000, 5000),
	}}})
	got := s.ui.LaggingTrend(s.opts.Monitor, []queue.Reader{group, consumer, table, slot, healthy})
	if want := []float64{1, 12, 123}; !slices.Equal(got, want) {
		t.Errorf("lagging trend %v; want %v", got, want)
	}
}
