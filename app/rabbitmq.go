package app

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	brokerrabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	dlqrabbit "github.com/queuewatch/queuewatch/dlqreplay/rabbitmq"
	"github.com/queuewatch/queuewatch/queue"
)

// rabbitBroker registers RabbitMQ: the clusters of config rabbitmq, each
// reached through one brokers/rabbitmq.Cluster (AMQP and the management
// API).
var rabbitBroker = broker{
	name: queue.RabbitMQ,
	section: func(cfg *config.Config) []string {
		return names(cfg.RabbitMQ, func(r config.RabbitMQ) string { return r.Name })
	},
	open: func(cfg *config.Config) (wired, error) {
		clusters, err := eachCluster(cfg.RabbitMQ, func(_ int, r config.RabbitMQ) (*brokerrabbit.Cluster, error) {
			return brokerrabbit.New(r)
		})
		if err != nil {
			return wired{}, err
		}
		return wired{
			sources: func(log *slog.Logger) ([]collectors.Source, func(), error) {
				return rabbitSources(cfg, clusters, log)
			},
			backends: func(log *slog.Logger) ([]dlqreplay.Backend, error) {
				return eachCluster(cfg.RabbitMQ, func(i int, r config.RabbitMQ) (dlqreplay.Backend, error) {
					b, err := dlqrabbit.New(dlqrabbit.Options{Cluster: clusters[i], Logger: log})
					if err != nil {
						return nil, fmt.Errorf("rabbitmq %s: %w", r.Name, err)
					}
					return b, nil
				})
			},
		}, nil
	},
	check: checking{
		// RabbitMQ answers a wrong password only after 3 s, and check
		// must say why it cannot log in rather than that the poll timed
		// out.
		minTimeout: 5 * time.Second,
		summary:    groupsSummary,
		failures:   listedDLQErrors,
	},
}

// listedDLQErrors names each DLQ the config lists (dlq_queues) that the
// poll could not read: it is configured by name, so it must exist.
func listedDLQErrors(snap *queue.Snapshot) error {
	var msgs []string
	for _, d := range snap.DLQs {
		if d.Detection == queue.DetectedConfig && d.Err != "" {
			msgs = append(msgs, fmt.Sprintf("queue %s in vhost %s: %s", d.Name, d.VHost, d.Err))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
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
		ListEvery:      r.ListEvery,
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
