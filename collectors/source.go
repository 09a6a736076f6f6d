package collectors

import (
	"context"

	"github.com/queuewatch/queuewatch/queue"
)

// Source is one broker cluster (or outbox source) that can be polled. Each
// broker's collector package implements it (collectors/<broker>: kafka,
// rabbitmq, nats, outbox); app builds one per configured cluster.
type Source interface {
	Broker() queue.Broker
	Cluster() string
	// Poll reads the cluster once. It returns an error only when nothing
	// could be read; parts that failed are listed in Snapshot.Partial and
	// marked on the affected items. The returned snapshot is never
	// modified by the source afterwards.
	Poll(ctx context.Context) (*queue.Snapshot, error)
}
