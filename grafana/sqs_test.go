package grafana

import (
	"context"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// sqsSource is an SQS account with one queue, its DLQ and its request
// counts. The demo's SQS part needs an SQS server, so it stands in for
// collectors/sqs (tested against ElasticMQ and moto in its own package) to
// make the real collector export the queuewatch_sqs_* families and an SQS
// DLQ, which the SQS queue rules exclude by selecting
// queuewatch_dlq_messages{broker="sqs"}.
type sqsSource struct{}

func (sqsSource) Broker() queue.Broker { return queue.SQS }
func (sqsSource) Cluster() string      { return "aws" }
func (sqsSource) Poll(context.Context) (*queue.Snapshot, error) {
	return &queue.Snapshot{
		Broker: queue.SQS, Cluster: "aws", Time: time.Now(),
		SQSQueues: []queue.SQSQueue{
			{
				Cluster: "aws", Name: "orders", ARN: "arn:aws:sqs:us-east-1:000000000000:orders",
				Visible: 12, InFlight: 3, Delayed: 1, DeadLetterQueue: "orders-dlq", MaxReceiveCount: 3,
				Status: queue.StatusOK, StatusReason: "12 visible, 3 in flight",
			},
			{
				Cluster: "aws", Name: "orders-dlq", ARN: "arn:aws:sqs:us-east-1:000000000000:orders-dlq",
				Visible: 4, Status: queue.StatusOK, StatusReason: "4 visible, 0 in flight",
			},
		},
		DLQs: []queue.DLQ{{Broker: queue.SQS, Cluster: "aws", Name: "orders-dlq", Sources: []string{"orders"}, Messages: 4}},
		SQS: &queue.SQSAccount{
			ReadEvery: 4 * time.Minute, Listed: 2,
			Requests: []queue.SQSRequests{{Action: "GetQueueAttributes", Count: 2}, {Action: "ListQueues", Count: 1}},
		},
	}, nil
}

// shareSource is a Kafka cluster with two share groups. The demo has no
// share consumer, so it stands in for collectors/kafka's share groups
// (tested against kfake and Kafka 4.4 in their packages) to make the real
// collector export the queuewatch_kafka_sharegroup_* families.
type shareSource struct{}

func (shareSource) Broker() queue.Broker { return queue.Kafka }
func (shareSource) Cluster() string      { return "shares" }
func (shareSource) Poll(context.Context) (*queue.Snapshot, error) {
	return &queue.Snapshot{
		Broker: queue.Kafka, Cluster: "shares", Time: time.Now(),
		ShareGroups: []queue.ShareGroup{{
			Cluster: "shares", Name: "workers", State: "Stable", Members: []queue.ShareMember{{ID: "m1"}},
			Partitions: []queue.SharePartition{{Topic: "orders", Initialized: true, Start: 4, End: 10, Lag: 4, LagSource: queue.LagFromBroker}},
			Status:     queue.StatusOK, StatusReason: "4 records waiting, 1 member",
		}},
	}, nil
}

// kinesisSource is a Kinesis account with one stream and one KCL
// application. The demo has no Kinesis server, so it stands in for
// collectors/kinesis (tested against kinesis-local and moto in its own
// package) to make the real collector export the queuewatch_kinesis_*
// families.
type kinesisSource struct{}

func (kinesisSource) Broker() queue.Broker { return queue.Kinesis }
func (kinesisSource) Cluster() string      { return "aws" }
func (kinesisSource) Poll(context.Context) (*queue.Snapshot, error) {
	return &queue.Snapshot{
		Broker: queue.Kinesis, Cluster: "aws", Time: time.Now(),
		KinesisStreams: []queue.KinesisStream{{
			Cluster: "aws", Name: "orders", Retention: 24 * time.Hour,
			Shards: []queue.KinesisShard{{ID: "shardId-000000000000", Open: true}},
		}},
		KinesisApps: []queue.KinesisApplication{{
			Cluster: "aws", Name: "billing", Stream: "orders", LeaseTable: "billing",
			Leases: []queue.KinesisLease{{Shard: "shardId-000000000000", Owner: "w1", Checkpoint: "1", HasLag: true, Behind: 3 * time.Second, Open: true}},
			Status: queue.StatusOK, StatusReason: "1 lease held by 1 worker",
		}},
		Kinesis: &queue.KinesisAccount{ReadEvery: time.Minute, Requests: []queue.SQSRequests{{Action: "GetRecords", Count: 1}}},
	}, nil
}
