package app

import (
	"errors"
	"log/slog"
	"strings"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	dlqkafka "github.com/queuewatch/queuewatch/dlqreplay/kafka"
	"github.com/queuewatch/queuewatch/offsets"
	offsetskafka "github.com/queuewatch/queuewatch/offsets/kafka"
	"github.com/queuewatch/queuewatch/queue"
)

// kafkaBroker registers Kafka: the clusters of config kafka, each reached
// through one brokers/kafka.Cluster.
var kafkaBroker = broker{
	name: queue.Kafka,
	section: func(cfg *config.Config) []string {
		return names(cfg.Kafka, func(k config.Kafka) string { return k.Name })
	},
	open: func(cfg *config.Config) (wired, error) {
		clusters, err := eachCluster(cfg.Kafka, func(_ int, k config.Kafka) (*brokerkafka.Cluster, error) {
			return brokerkafka.New(k, cfg.DLQ)
		})
		if err != nil {
			return wired{}, err
		}
		return wired{
			sources: func(log *slog.Logger) ([]collectors.Source, func(), error) {
				return eachSource(cfg.Kafka, func(i int, k config.Kafka) (*kafka.Source, error) {
					return kafkaSource(clusters[i], k, log)
				})
			},
			backends: func(log *slog.Logger) ([]dlqreplay.Backend, error) {
				return eachCluster(clusters, func(_ int, kc *brokerkafka.Cluster) (dlqreplay.Backend, error) {
					return kafkaBackend(kc, log)
				})
			},
			resets: func() ([]offsets.Broker, func(), error) {
				return joinResets(
					func() ([]offsets.Broker, func(), error) {
						return eachReset(clusters, func(kc *brokerkafka.Cluster) (*offsetskafka.Resets, error) {
							return kafkaResets(kc, cfg.Kafka)
						})
					},
					func() ([]offsets.Broker, func(), error) { return eachReset(clusters, offsetskafka.NewShare) },
				)
			},
		}, nil
	},
	check: checking{summary: kafkaSummary, failures: connectFailures},
}

// kafkaSummary is check's ok line for Kafka: groupsSummary, and the
// connectors of the cluster's Kafka Connect clusters when it has any.
func kafkaSummary(snap *queue.Snapshot) string {
	line := groupsSummary(snap)
	if n := len(snap.Connectors); n > 0 {
		line += ", " + counts(n, "connector", "connectors")
	}
	return line
}

// connectFailures fails check for a Kafka Connect cluster that did not
// answer: its read's error, which begins "connect <name>: ", is in the
// poll's Partial (collectors/kafka readConnects).
func connectFailures(snap *queue.Snapshot) error {
	var errs []error
	for _, p := range snap.Partial {
		if strings.HasPrefix(p, "connect ") {
			errs = append(errs, errors.New(p))
		}
	}
	return errors.Join(errs...)
}

// groupsSummary is check's ok line for Kafka and RabbitMQ.
func groupsSummary(snap *queue.Snapshot) string {
	return counts(len(snap.Groups), "group", "groups") + ", " + counts(len(snap.Queues), "queue", "queues") + ", " + counts(len(snap.DLQs), "DLQ", "DLQs")
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

// kafkaResets is the offset-reset access of cluster kc, reading target
// records with the isolation its config section (by name) sets.
func kafkaResets(kc *brokerkafka.Cluster, section []config.Kafka) (*offsetskafka.Resets, error) {
	var opts []offsetskafka.Option
	for _, k := range section {
		if k.Name == kc.Name() && k.Isolation == config.IsolationReadCommitted {
			opts = append(opts, offsetskafka.ReadCommitted())
		}
	}
	return offsetskafka.New(kc, opts...)
}

// kafkaBackend is the replay backend of cluster kc.
func kafkaBackend(kc *brokerkafka.Cluster, log *slog.Logger) (*dlqkafka.Backend, error) {
	return dlqkafka.New(dlqkafka.Options{Cluster: kc, Logger: log})
}
