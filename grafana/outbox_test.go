package grafana

import (
	"context"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// outboxSource is an outbox source with one table and one replication
// slot. The demo has no PostgreSQL, so it stands in for collectors/outbox
// (tested against real PostgreSQL and MariaDB in its own package) to make
// the real collector export the queuewatch_outbox_* families the outbox
// rules query.
type outboxSource struct{}

func (outboxSource) Broker() queue.Broker { return queue.Outbox }
func (outboxSource) Cluster() string      { return "orders-db" }
func (outboxSource) Poll(context.Context) (*queue.Snapshot, error) {
	return &queue.Snapshot{
		Broker: queue.Outbox, Cluster: "orders-db", Time: time.Now(),
		OutboxTables: []queue.OutboxTable{{
			Source: "orders-db", Table: "outbox", Pending: 5, OldestPendingAge: time.Second,
			PublishRate: 1, HasPublishRate: true,
		}},
		Slots: []queue.ReplicationSlot{{Source: "orders-db", Slot: "debezium", LagBytes: 4096, Active: true}},
	}, nil
}
