package app

import (
	"fmt"
	"log/slog"

	brokerkinesis "github.com/queuewatch/queuewatch/brokers/kinesis"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/kinesis"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// kinesisBroker registers Amazon Kinesis Data Streams: the accounts of
// config kinesis, each reached through one brokers/kinesis.Cluster. No
// replay backend yet: a stream has no DLQ of its own.
var kinesisBroker = broker{
	name: queue.Kinesis,
	section: func(cfg *config.Config) []string {
		return names(cfg.Kinesis, func(k config.Kinesis) string { return k.Name })
	},
	noReplay: true,
	open: func(cfg *config.Config) (wired, error) {
		return wired{sources: func(log *slog.Logger) ([]collectors.Source, func(), error) {
			return kinesisSources(cfg, log)
		}}, nil
	},
	check: checking{summary: kinesisSummary},
}

// kinesisSources builds a source per configured account; an account whose
// access cannot be built is that account's error on every poll, as for
// SQS, never the process's.
func kinesisSources(cfg *config.Config, log *slog.Logger) ([]collectors.Source, func(), error) {
	sources := make([]collectors.Source, 0, len(cfg.Kinesis))
	for _, k := range cfg.Kinesis {
		c, err := brokerkinesis.New(k)
		if err != nil {
			log.Error("kinesis account cannot start", "kinesis", k.Name, "err", err)
			sources = append(sources, brokenSource{broker: queue.Kinesis, name: k.Name, err: err})
			continue
		}
		src, err := kinesis.New(kinesis.Options{Cluster: c, Interval: k.Interval(), Tick: cfg.PollInterval, Logger: log})
		if err != nil {
			return nil, nil, err
		}
		sources = append(sources, src)
	}
	// The SDK clients keep only idle HTTP connections.
	return sources, func() {}, nil
}

// kinesisSummary is check's ok line for a Kinesis account: what was found,
// and what a read takes of the shards' read budget (five reads a second
// per shard, shared with the applications themselves).
func kinesisSummary(snap *queue.Snapshot) string {
	s := counts(len(snap.KinesisStreams), "stream", "streams") + ", " + counts(len(snap.KinesisApps), "application", "applications")
	read := 0
	for _, a := range snap.KinesisApps {
		for _, l := range a.Leases {
			if l.HasLag && !l.Finished() || l.LagErr != "" {
				read++
			}
		}
	}
	if snap.Kinesis == nil || read == 0 {
		return s
	}
	every := snap.Kinesis.ReadEvery
	return fmt.Sprintf("%s; %s at checkpoints every %s (GetShardIterator and GetRecords): %.2f%% of a shard's %d GetRecords a second",
		s, counts(read, "shard read", "shard reads"), every, queue.KinesisReadShare(every)*100, queue.KinesisShardReadsPerSecond)
}
