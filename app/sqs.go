package app

import (
	"fmt"
	"log/slog"

	brokersqs "github.com/queuewatch/queuewatch/brokers/sqs"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/sqs"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// sqsBroker registers Amazon SQS: the accounts of config sqs, each reached
// through one brokers/sqs.Cluster. It has no replay backend yet (browsing
// and redrive are the second half of SQS support), so its DLQs are listed
// and measured but cannot be opened.
var sqsBroker = broker{
	name: queue.SQS,
	section: func(cfg *config.Config) []string {
		return names(cfg.SQS, func(s config.SQS) string { return s.Name })
	},
	open: func(cfg *config.Config) (wired, error) {
		clusters, err := eachCluster(cfg.SQS, func(_ int, s config.SQS) (*brokersqs.Cluster, error) {
			return brokersqs.New(s)
		})
		if err != nil {
			return wired{}, err
		}
		return wired{
			sources: func(log *slog.Logger) ([]collectors.Source, func(), error) {
				return eachSource(cfg.SQS, func(i int, s config.SQS) (*sqs.Source, error) {
					return sqs.New(sqs.Options{
						Cluster: clusters[i], Include: s.Queues.Match,
						Interval: s.Interval(), Tick: cfg.PollInterval, Logger: log,
					})
				})
			},
		}, nil
	},
	noReplay: true,
	check:    checking{summary: sqsSummary},
}

// sqsSummary is check's ok line for an SQS account: what was found, and
// what reading it costs at its interval, since AWS bills every request.
func sqsSummary(snap *queue.Snapshot) string {
	s := fmt.Sprintf("%d queues, %d DLQs", len(snap.SQSQueues), len(snap.DLQs))
	if snap.SQS == nil {
		return s
	}
	perPoll := queue.SQSRequestsPerPoll(snap.SQS.Listed, len(snap.SQSQueues))
	month, usd := queue.SQSMonthlyCost(perPoll, snap.SQS.ReadEvery)
	return fmt.Sprintf("%s; %d requests a read every %s: about %s requests, $%.2f a month at $%.2f per million",
		s, perPoll, snap.SQS.ReadEvery, queue.ExactCount(month), usd, queue.SQSPricePerMillion)
}
