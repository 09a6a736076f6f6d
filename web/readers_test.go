package web

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// TestSameNamedClusters: a Kafka, a NATS and a RabbitMQ cluster all named
// "demo" (as in the demo) each answer for their own readers and DLQs, in
// whatever order the monitor lists them.
func TestSameNamedClusters(t *testing.T) {
	now := time.Now()
	kafka := &queue.Snapshot{
		Broker: queue.Kafka, Cluster: "demo", Time: now,
		Groups: []queue.ConsumerGroup{{Cluster: "demo", Name: "worker", State: "Stable", Members: 1}},
		DLQs:   []queue.DLQ{{Broker: queue.Kafka, Cluster: "demo", Name: "dead", Messages: 1}},
	}
	nats := &queue.Snapshot{
		Broker: queue.NATS, Cluster: "demo", Time: now,
		Consumers: []queue.StreamConsumer{{Cluster: "demo", Stream: "ORDERS", Name: "worker", Pull: true}},
	}
	rabbit := &queue.Snapshot{
		Broker: queue.RabbitMQ, Cluster: "demo", Time: now,
		Queues: []queue.Queue{{Cluster: "demo", VHost: "/", Name: "dead"}, {Cluster: "demo", VHost: "/", Name: "work"}},
		DLQs:   []queue.DLQ{{Broker: queue.RabbitMQ, Cluster: "demo", VHost: "/", Name: "dead", Messages: 2}},
	}
	outbox := &queue.Snapshot{
		Broker: queue.Outbox, Cluster: "demo", Time: now,
		OutboxTables: []queue.OutboxTable{{Source: "demo", Table: "outbox"}},
		Slots:        []queue.ReplicationSlot{{Source: "demo", Slot: "cdc"}},
	}
	orders := [][]*queue.Snapshot{{kafka, nats, rabbit, outbox}, {outbox, rabbit, nats, kafka}}
	for _, snaps := range orders {
		s := New(Options{Metrics: http.NotFoundHandler(), Monitor: staticMonitor{ready: true, snaps: snaps}})
		// Every reader's Page is a page the server has.
		pages := []string{
			kafka.Groups[0].Reader().Page, nats.Consumers[0].Reader().Page,
			outbox.OutboxTables[0].Reader().Page, outbox.Slots[0].Reader().Page,
		}
		if want := []string{"/kafka/demo/groups/worker", "/nats/demo/streams/ORDERS/consumers/worker", "/outbox/demo", "/outbox/demo"}; !slices.Equal(pages, want) {
			t.Errorf("reader pages %q; want %q", pages, want)
		}
		for _, path := range pages {
			if rec := do(t, s, "GET", path); rec.Code != http.StatusOK {
				t.Errorf("first %s: %s answers %d", snaps[0].Broker, path, rec.Code)
			}
		}
		body := do(t, s, "GET", "/?tab=queues").Body.String()
		var links []string
		for _, l := range strings.Split(body, `class="tag" href="/dlq/`)[1:] {
			links = append(links, l[:strings.IndexByte(l, '"')])
		}
		// Only the RabbitMQ queue that its own poll lists as a DLQ gets the tag.
		if want := []string{"rabbitmq:demo:%2F:dead"}; !slices.Equal(links, want) {
			t.Errorf("first %s: queue table DLQ links %q; want %q", snaps[0].Broker, links, want)
		}
	}
}
