package app

import (
	"fmt"
	"log/slog"
	"regexp"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	brokerrabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/collectors/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// buildSources creates a source per configured cluster, RabbitMQ ones over
// rabbit. The returned func closes them all.
func buildSources(cfg *config.Config, rabbit rabbitClusters, log *slog.Logger) ([]collectors.Source, func(), error) {
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
	rabbitSrcs, closeRabbit, err := rabbitSources(cfg, rabbit, log)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	sources = append(sources, rabbitSrcs...)
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

// rabbitSources creates the RabbitMQ sources over the clusters' access;
// the returned func closes them.
func rabbitSources(cfg *config.Config, clusters rabbitClusters, log *slog.Logger) ([]collectors.Source, func(), error) {
	var sources []collectors.Source
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	var namePattern *regexp.Regexp
	if cfg.DLQ.NamePattern != "" {
		var err error
		if namePattern, err = regexp.Compile(cfg.DLQ.NamePattern); err != nil {
			return nil, nil, fmt.Errorf("dlq.name_pattern: %w", err)
		}
	}
	for i, r := range cfg.RabbitMQ {
		s, err := rabbitSource(r, clusters[i], namePattern, log)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		sources = append(sources, s)
		closers = append(closers, s.Close)
	}
	return sources, closeAll, nil
}

func rabbitSource(r config.RabbitMQ, cluster *brokerrabbit.Cluster, namePattern *regexp.Regexp, log *slog.Logger) (*rabbitmq.Source, error) {
	return rabbitmq.New(rabbitmq.Options{
		Cluster: cluster, VHosts: r.VHosts,
		IncludeQueue:   func(_, queue string) bool { return r.Queues.Match(queue) },
		ExplicitDLQ:    func(_, queue string) bool { return r.IsDLQQueue(queue) },
		DLQNamePattern: namePattern,
		ExplicitQueues: explicitQueues(r),
		Logger:         log,
	})
}

// explicitQueues are the dlq_queues entries that name one queue (no regex
// syntax), in each watched vhost ("/" when none is configured). They are
// measured over AMQP alone when there is no management API.
func explicitQueues(r config.RabbitMQ) []rabbitmq.QueueRef {
	vhosts := r.VHosts
	if len(vhosts) == 0 {
		vhosts = []string{"/"}
	}
	var refs []rabbitmq.QueueRef
	for _, q := range r.DLQQueues {
		if regexp.QuoteMeta(q) != q {
			continue
		}
		for _, vh := range vhosts {
			refs = append(refs, rabbitmq.QueueRef{VHost: vh, Name: q})
		}
	}
	return refs
}
