package app

import (
	"fmt"
	"log/slog"
	"regexp"

	brokerrabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
)

// buildSources creates a source per configured cluster, through access.
// The returned func closes them all.
func buildSources(cfg *config.Config, access brokers, log *slog.Logger) ([]collectors.Source, func(), error) {
	var sources []collectors.Source
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for i, k := range cfg.Kafka {
		s, err := kafkaSource(access.kafka[i], k, log)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		sources = append(sources, s)
		closers = append(closers, s.Close)
	}
	rabbitSrcs, closeRabbit, err := rabbitSources(cfg, access.rabbit, log)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	sources = append(sources, rabbitSrcs...)
	closers = append(closers, closeRabbit)
	outboxSrcs, closeOutbox, err := outboxSources(cfg, log)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	sources = append(sources, outboxSrcs...)
	closers = append(closers, closeOutbox)
	for i, n := range cfg.NATS {
		s, err := natsSource(access.nats[i], n, log)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		sources = append(sources, s)
		closers = append(closers, s.Close)
	}
	return sources, closeAll, nil
}

// rabbitSources creates the RabbitMQ sources over the clusters' access;
// the returned func closes them.
func rabbitSources(cfg *config.Config, clusters []*brokerrabbit.Cluster, log *slog.Logger) ([]collectors.Source, func(), error) {
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
	for _, pat := range r.LegacyDLQPatterns() {
		log.Warn("dlq_queues entry read as a regex: prefix it with re: (entries without it are queue names)",
			"cluster", r.Name, "entry", pat, "write", config.RegexPrefix+pat)
	}
	return rabbitmq.New(rabbitmq.Options{
		Cluster: cluster, VHosts: r.VHosts,
		IncludeQueue:   func(_, queue string) bool { return r.Queues.Match(queue) },
		ExplicitDLQ:    func(_, queue string) bool { return r.IsDLQQueue(queue) },
		DLQNamePattern: namePattern,
		ExplicitQueues: explicitQueues(r, cluster.VHost()),
		Logger:         log,
	})
}

// explicitQueues are the dlq_queues entries that name one queue, in each
// watched vhost (the AMQP URL's vhost when none is configured). Each must
// exist, and they are measured over AMQP alone when there is no
// management API.
func explicitQueues(r config.RabbitMQ, urlVHost string) []rabbitmq.QueueRef {
	vhosts := r.VHosts
	if len(vhosts) == 0 {
		vhosts = []string{urlVHost}
	}
	var refs []rabbitmq.QueueRef
	for _, q := range r.DLQQueueNames() {
		for _, vh := range vhosts {
			refs = append(refs, rabbitmq.QueueRef{VHost: vh, Name: q})
		}
	}
	return refs
}
