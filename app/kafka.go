package app

import (
	"log/slog"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/config"
	dlqkafka "github.com/queuewatch/queuewatch/dlqreplay/kafka"
)

// kafkaClusters builds the access to every configured Kafka cluster, in
// config order. Each is built once and handed to both the cluster's
// collector and its replay backend, so TLS, SASL and the cursor group
// cannot differ between poll, browse and replay.
func kafkaClusters(cfg *config.Config) ([]*brokerkafka.Cluster, error) {
	out := make([]*brokerkafka.Cluster, len(cfg.Kafka))
	for i, k := range cfg.Kafka {
		kc, err := brokerkafka.New(k, cfg.DLQ)
		if err != nil {
			return nil, err
		}
		out[i] = kc
	}
	return out, nil
}

// kafkaSource is the collector of cluster kc, configured by k.
func kafkaSource(kc *brokerkafka.Cluster, k config.Kafka, log *slog.Logger) (*kafka.Source, error) {
	return kafka.New(kafka.Options{
		Cluster:       kc,
		IncludeGroup:  k.Groups.Match,
		ReadCommitted: k.Isolation == config.IsolationReadCommitted,
		DLQTopic:      kc.DLQTopic,
		Logger:        log,
	})
}

// kafkaBackend is the replay backend of cluster kc.
func kafkaBackend(kc *brokerkafka.Cluster, log *slog.Logger) (*dlqkafka.Backend, error) {
	return dlqkafka.New(dlqkafka.Options{Cluster: kc, Logger: log})
}
