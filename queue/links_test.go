package queue

import (
	"slices"
	"testing"
)

func TestReadersOfAndDLQsOf(t *testing.T) {
	kafka := &Snapshot{
		Broker: Kafka, Cluster: "prod",
		Groups: []ConsumerGroup{
			{Cluster: "prod", Name: "orders-processor", Partitions: []PartitionLag{{Topic: "orders"}, {Topic: "orders", Partition: 1}}},
			{Cluster: "prod", Name: "audit", Partitions: []PartitionLag{{Topic: "orders"}, {Topic: "payments"}}},
			{Cluster: "prod", Name: "billing", Partitions: []PartitionLag{{Topic: "invoices"}}},
		},
		ShareGroups: []ShareGroup{{Cluster: "prod", Name: "orders-processor", Partitions: []SharePartition{{Topic: "payments"}}}},
		DLQs: []DLQ{
			{Broker: Kafka, Cluster: "prod", Name: "orders.DLT", Sources: []string{"orders"}},
			{Broker: Kafka, Cluster: "prod", Name: "payments.DLQ", Sources: []string{"payments"}},
			{Broker: Kafka, Cluster: "prod", Name: "unknown.dlq"},
		},
	}
	rabbit := &Snapshot{
		Broker: RabbitMQ, Cluster: "main",
		Queues: []Queue{{Cluster: "main", VHost: "/", Name: "orders"}, {Cluster: "main", VHost: "eu", Name: "orders"}},
		DLQs:   []DLQ{{Broker: RabbitMQ, Cluster: "main", VHost: "eu", Name: "orders.dlq", Sources: []string{"orders"}}},
	}
	nats := &Snapshot{
		Broker: NATS, Cluster: "n",
		Consumers: []StreamConsumer{{Cluster: "n", Stream: "ORDERS", Name: "shipper"}, {Cluster: "n", Stream: "OTHER", Name: "x"}},
		DLQs:      []DLQ{{Broker: NATS, Cluster: "n", Name: "QW_DEAD_LETTERS.ORDERS", Sources: []string{"ORDERS"}}},
	}
	sqs := &Snapshot{
		Broker: SQS, Cluster: "acct",
		SQSQueues: []SQSQueue{{Cluster: "acct", Name: "orders"}, {Cluster: "acct", Name: "orders-dlq"}},
		DLQs:      []DLQ{{Broker: SQS, Cluster: "acct", Name: "orders-dlq", Sources: []string{"orders"}}},
	}
	titles := func(rs []Reader) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Scope+"/"+r.Title)
		}
		return out
	}
	names := func(ds []DLQ) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Name)
		}
		return out
	}
	readers := []struct {
		snap *Snapshot
		dlq  int
		want []string
	}{
		{kafka, 0, []string{"/orders-processor", "/audit"}},
		{kafka, 1, []string{"/audit", "/share orders-processor"}},
		{kafka, 2, nil},
		{rabbit, 0, []string{"eu/orders"}}, // not the queue of the same name in another vhost
		{nats, 0, []string{"ORDERS/shipper"}},
		{sqs, 0, []string{"/orders"}},
	}
	for _, tt := range readers {
		d := &tt.snap.DLQs[tt.dlq]
		if got := titles(tt.snap.ReadersOf(d)); !slices.Equal(got, tt.want) {
			t.Errorf("readers of %s: %q; want %q", d.Name, got, tt.want)
		}
	}
	dlqs := []struct {
		snap   *Snapshot
		reader Reader
		want   []string
	}{
		{kafka, kafka.Groups[0].Reader(), []string{"orders.DLT"}},
		{kafka, kafka.Groups[1].Reader(), []string{"orders.DLT", "payments.DLQ"}},
		{kafka, kafka.ShareGroups[0].Reader(), []string{"payments.DLQ"}}, // not the consumer group of its name
		{kafka, kafka.Groups[2].Reader(), nil},
		{rabbit, rabbit.Queues[0].Reader(), nil},
		{rabbit, rabbit.Queues[1].Reader(), []string{"orders.dlq"}},
		{nats, nats.Consumers[0].Reader(), []string{"QW_DEAD_LETTERS.ORDERS"}},
		{sqs, sqs.SQSQueues[0].Reader(), []string{"orders-dlq"}},
		{sqs, sqs.SQSQueues[1].Reader(), nil},
	}
	for _, tt := range dlqs {
		if got := names(tt.snap.DLQsOf(tt.reader)); !slices.Equal(got, tt.want) {
			t.Errorf("DLQs of %s: %q; want %q", tt.reader.Title, got, tt.want)
		}
	}
}
