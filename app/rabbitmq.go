package app

import (
	"github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
)

// rabbitClusters is the access to each configured RabbitMQ cluster, in
// the order of cfg.RabbitMQ. It is built once and shared by each
// cluster's collector and replay backend, so both connect with the same
// URL, TLS settings and management credentials.
type rabbitClusters []*rabbitmq.Cluster

// newRabbitClusters builds the access to every configured RabbitMQ
// cluster; it loads TLS files but does not connect.
func newRabbitClusters(cfg *config.Config) (rabbitClusters, error) {
	out := make(rabbitClusters, len(cfg.RabbitMQ))
	for i, r := range cfg.RabbitMQ {
		c, err := rabbitmq.New(r)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}
