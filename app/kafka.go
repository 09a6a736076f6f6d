package app

import (
	"log/slog"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/config"
	dlqkafka "github.com/queuewatch/queuewatch/dlqreplay/kafka"
)

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
