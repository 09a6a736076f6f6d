package collectors

import (
	"context"

	"github.com/queuewatch/queuewatch/queue"
)

// Source is one broker cluster that can be polled. Implementations live in
// the broker subpackages (collectors/kafka, collectors/rabbitmq).
type Source interface {
	Broker() queue.Broker
	Cluster() string
	// Poll reads the cluster once. It returns an error only when nothing
	// could be read; parts that failed are listed in Snapshot.Partial and
	// marked on the affected items. The returned snapshot is never
	// modified by the source afterwards.
	Poll(ctx context.Context) (*queue.Snapshot, error)
}
