package app

import (
	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	brokerrabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
)

// brokers is the access to every configured cluster, each in config
// order. It is built once and shared by each cluster's collector and
// replay backend, so polls, browsing and replays connect with the same
// addresses, TLS settings and credentials.
type brokers struct {
	kafka  []*brokerkafka.Cluster
	rabbit []*brokerrabbit.Cluster
	nats   []*brokernats.Cluster
}

// newBrokers builds the access to every configured cluster; it loads TLS
// files but does not connect.
func newBrokers(cfg *config.Config) (brokers, error) {
	var b brokers
	for _, k := range cfg.Kafka {
		kc, err := brokerkafka.New(k, cfg.DLQ)
		if err != nil {
			return brokers{}, err
		}
		b.kafka = append(b.kafka, kc)
	}
	for _, r := range cfg.RabbitMQ {
		rc, err := brokerrabbit.New(r)
		if err != nil {
			return brokers{}, err
		}
		b.rabbit = append(b.rabbit, rc)
	}
	for _, n := range cfg.NATS {
		nc, err := brokernats.New(n)
		if err != nil {
			return brokers{}, err
		}
		b.nats = append(b.nats, nc)
	}
	return b, nil
}
