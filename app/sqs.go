package app

import (
	"fmt"
	"log/slog"

	brokersqs "github.com/queuewatch/queuewatch/brokers/sqs"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/sqs"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	dlqsqs "github.com/queuewatch/queuewatch/dlqreplay/sqs"
	"github.com/queuewatch/queuewatch/queue"
)

// sqsBroker registers Amazon SQS: the accounts of config sqs, each reached
// through one brokers/sqs.Cluster, shared by its collector and its replay
// backend (dlqreplay/sqs).
var sqsBroker = broker{
	name: queue.SQS,
	section: func(cfg *config.Config) []string {
		return names(cfg.SQS, func(s config.SQS) string { return s.Name })
	},
	open: func(cfg *config.Config) (wired, error) {
		// An account whose access cannot be built (AWS_PROFILE names no
		// profile, a shared config file that does not parse) is that
		// account's error on every poll, never the process's.
		clusters := make([]*brokersqs.Cluster, len(cfg.SQS))
		errs := make([]error, len(cfg.SQS))
		for i, s := range cfg.SQS {
			clusters[i], errs[i] = brokersqs.New(s)
		}
		return wired{
			sources: func(log *slog.Logger) ([]collectors.Source, func(), error) {
				return sqsSources(cfg, clusters, errs, log)
			},
			backends: func(log *slog.Logger) ([]dlqreplay.Backend, error) { return sqsBackends(clusters, log) },
		}, nil
	},
	check: checking{summary: sqsSummary},
}

// sqsSources builds a source per configured account over its access, or
// a brokenSource saying why the access could not be built.
func sqsSources(cfg *config.Config, clusters []*brokersqs.Cluster, errs []error, log *slog.Logger) ([]collectors.Source, func(), error) {
	sources := make([]collectors.Source, 0, len(cfg.SQS))
	for i, s := range cfg.SQS {
		if errs[i] != nil {
			log.Error("sqs account cannot start", "sqs", s.Name, "err", errs[i])
			sources = append(sources, brokenSource{broker: queue.SQS, name: s.Name, err: errs[i]})
			continue
		}
		src, err := sqs.New(sqs.Options{
			Cluster: clusters[i], Include: s.Queues.Match,
			Interval: s.Interval(), Tick: cfg.PollInterval, Logger: log,
		})
		if err != nil {
			return nil, nil, err
		}
		sources = append(sources, src)
	}
	// The sources hold nothing to close: the SDK client keeps only idle
	// HTTP connections.
	return sources, func() {}, nil
}

// sqsBackends are the replay backends of the accounts whose access could
// be built; the DLQs of the others answer that there is no such account.
func sqsBackends(clusters []*brokersqs.Cluster, log *slog.Logger) ([]dlqreplay.Backend, error) {
	var out []dlqreplay.Backend
	for _, c := range clusters {
		if c == nil {
			continue
		}
		b, err := dlqsqs.New(dlqsqs.Options{Cluster: c, Logger: log})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// sqsSummary is check's ok line for an SQS account: what was found, and
// what reading it costs at its interval, since AWS bills every request.
func sqsSummary(snap *queue.Snapshot) string {
	s := counts(len(snap.SQSQueues), "queue", "queues") + ", " + counts(len(snap.DLQs), "DLQ", "DLQs")
	if snap.SQS == nil {
		return s
	}
	perPoll := queue.SQSRequestsPerPoll(snap.SQS.Listed, len(snap.SQSQueues))
	month, usd := queue.SQSMonthlyCost(perPoll, snap.SQS.ReadEvery)
	s = fmt.Sprintf("%s; %s a read every %s: about %s requests, $%.2f a month at $%.2f per million",
		s, counts(perPoll, "request", "requests"), snap.SQS.ReadEvery, queue.ExactCount(month), usd, queue.SQSPricePerMillion)
	if n := snap.SQS.OldestAgeMetrics; n > 0 {
		metrics, cwUSD := queue.CloudWatchMonthlyCost(n, snap.SQS.ReadEvery)
		s += fmt.Sprintf("; CloudWatch oldest age: %s a read, about %s metrics, $%.2f a month at $%.2f per 1,000",
			counts(n, "metric", "metrics"), queue.ExactCount(metrics), cwUSD, queue.CloudWatchPricePerThousandMetrics)
	}
	return s
}
