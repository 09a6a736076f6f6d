package app

import (
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// buildSources creates a source per configured cluster. The returned func
// closes them all.
func buildSources(cfg *config.Config, log *slog.Logger) ([]collectors.Source, func(), error) {
	var sources []collectors.Source
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, k := range cfg.Kafka {
		s, err := kafkaSource(cfg, k, log)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		sources = append(sources, s)
		closers = append(closers, s.Close)
	}
	rabbit, closeRabbit, err := rabbitSources(cfg, log)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	sources = append(sources, rabbit...)
	closers = append(closers, closeRabbit)
	return sources, closeAll, nil
}

func kafkaSource(cfg *config.Config, k config.Kafka, log *slog.Logger) (*kafka.Source, error) {
	tlsCfg, err := k.TLS.Config()
	if err != nil {
		return nil, fmt.Errorf("kafka %s: tls: %w", k.Name, err)
	}
	mech, err := saslMechanism(k.SASL)
	if err != nil {
		return nil, fmt.Errorf("kafka %s: %w", k.Name, err)
	}
	return kafka.New(kafka.Options{
		Name: k.Name, Brokers: k.Brokers, ClientID: k.ClientID, TLS: tlsCfg, SASL: mech,
		IncludeGroup:  k.Groups.Match,
		ReadCommitted: k.Isolation == config.IsolationReadCommitted,
		CursorGroup:   cfg.DLQ.KafkaCursorGroup,
		DLQTopic: func(topic string) (queue.DLQDetection, bool) {
			switch {
			case k.IsDLQTopic(topic):
				return queue.DetectedConfig, true
			case cfg.DLQ.IsDLQName(topic):
				return queue.DetectedName, true
			}
			return "", false
		},
		Logger: log,
	})
}

func saslMechanism(s *config.SASL) (sasl.Mechanism, error) {
	if s == nil {
		return nil, nil
	}
	switch s.Mechanism {
	case "PLAIN":
		return plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("unsupported sasl mechanism %q", s.Mechanism)
}

// rabbitSources creates the RabbitMQ sources.
func rabbitSources(cfg *config.Config, log *slog.Logger) ([]collectors.Source, func(), error) {
	return nil, func() {}, nil
}
