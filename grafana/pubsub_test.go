package grafana

import (
	"context"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// pubsubSource is a Pub/Sub project read with Cloud Monitoring: a
// subscription with a backlog and a trap, its DLQ subscription, one whose
// dead letters are dropped and an export in RESOURCE_ERROR. The
// demo has no Pub/Sub part, so it stands in for collectors/pubsub (tested
// against the emulator in its own package) to make the real collector
// export the queuewatch_pubsub_* families and a Pub/Sub DLQ.
type pubsubSource struct{}

func (pubsubSource) Broker() queue.Broker { return queue.PubSub }
func (pubsubSource) Cluster() string      { return "gcp" }
func (pubsubSource) Poll(context.Context) (*queue.Snapshot, error) {
	return &queue.Snapshot{
		Broker: queue.PubSub, Cluster: "gcp", Time: time.Now(),
		PubSubSubscriptions: []queue.PubSubSubscription{
			{
				Cluster: "gcp", Name: "orders", Topic: "orders", Delivery: "pull", DeadLetterTopic: "orders-dl", MaxDeliveryAttempts: 5,
				DeadLetterQueues: []string{"orders-dlq"}, Status: queue.StatusWarn, StatusReason: "maxDeliveryAttempts is 5, its floor",
				Lints:      []queue.PubSubLint{{Kind: "max_delivery_attempts_floor", Sentence: "maxDeliveryAttempts is 5, its floor"}},
				Monitoring: &queue.PubSubMetrics{Undelivered: 40, HasUndelivered: true, OldestAge: time.Minute, HasOldestAge: true},
			},
			{
				Cluster: "gcp", Name: "orders-dlq", Topic: "orders-dl", Delivery: "pull", DLQ: true, Status: queue.StatusOK, StatusReason: queue.DLQReason,
				Monitoring: &queue.PubSubMetrics{Undelivered: 3, HasUndelivered: true},
			},
			{
				Cluster: "gcp", Name: "pay", Topic: "pay", Delivery: "push", DeadLetterTopic: "pay-dl", MaxDeliveryAttempts: 20, Status: queue.StatusWarn,
				StatusReason: "dead-letter topic pay-dl has no subscription: dead letters are dropped",
				Lints:        []queue.PubSubLint{{Kind: "dead_letters_dropped", Sentence: "dead-letter topic pay-dl has no subscription: dead letters are dropped"}},
			},
			{
				Cluster: "gcp", Name: "to-bq", Topic: "orders", Delivery: "bigquery", State: "RESOURCE_ERROR", Status: queue.StatusStop, StatusReason: "in RESOURCE_ERROR",
				Lints: []queue.PubSubLint{{Kind: "resource_error", Sentence: "in RESOURCE_ERROR"}},
			},
		},
		DLQs:   []queue.DLQ{{Broker: queue.PubSub, Cluster: "gcp", Name: "orders-dlq", Sources: []string{"orders"}, Messages: 3}},
		PubSub: &queue.PubSubProject{Project: "gcp-orders", Monitoring: true, MonitoringCalls: 5},
	}, nil
}
