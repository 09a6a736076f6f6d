package web

import (
	"net/http"
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
