package collectors

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/queue"
)

// Amazon Kinesis families. A KCL application (a reader) is named by
// cluster (the configured account) and application, a stream by cluster
// and stream. Per-shard lag is exported per application and shard: a
// stream's shards are tens, not the thousands of a Kafka cluster's
// partitions.
var (
	kinesisAppLabels    = []string{"cluster", "application"}
	kinesisStreamLabels = []string{"cluster", "stream"}

	descKinesisStatus       = statusDesc("kinesis_application_status", "KCL application", kinesisAppLabels...)
	descKinesisLagSeconds   = desc("kinesis_application_lag_seconds", "The largest MillisBehindLatest read at the application's checkpoints, in seconds: how far its furthest-behind shard's checkpointed record is behind that shard's newest.", kinesisAppLabels...)
	descKinesisShardLag     = desc("kinesis_shard_lag_seconds", "MillisBehindLatest read at the application's checkpoint of the shard, in seconds.", append(kinesisAppLabels, "shard")...)
	descKinesisShardsBehind = desc("kinesis_application_shards_behind", "Leased shards whose checkpoint is behind the shard's newest record.", kinesisAppLabels...)
	descKinesisWorkers      = desc("kinesis_application_workers", "Distinct workers holding a lease of the application.", kinesisAppLabels...)
	descKinesisUnleased     = desc("kinesis_application_unleased_shards", "Open shards of the stream no lease of the application covers (their parents done): no worker reads them.", kinesisAppLabels...)
	descKinesisShards       = desc("kinesis_stream_shards", "Shards of the stream by state: open, or closed by a reshard.", append(kinesisStreamLabels, "state")...)
	descKinesisRetention    = desc("kinesis_stream_retention_seconds", "The stream's retention period.", kinesisStreamLabels...)
	descKinesisConsumers    = desc("kinesis_stream_consumers", "Enhanced fan-out consumers registered on the stream.", kinesisStreamLabels...)
	descKinesisRequests     = counterDesc("kinesis_api_requests_total", "Requests queuewatch sent to the account's Kinesis and DynamoDB since it started, by action, retries included: a read at a checkpoint takes two of the shard's five reads a second.", "cluster", "action")

	kinesisFamilies = []*family{
		descKinesisStatus, descKinesisLagSeconds, descKinesisShardLag, descKinesisShardsBehind, descKinesisWorkers,
		descKinesisUnleased, descKinesisShards, descKinesisRetention, descKinesisConsumers, descKinesisRequests,
	}
)

// describeKinesis sends the Kinesis descriptors.
func describeKinesis(ch chan<- *prometheus.Desc) {
	for _, f := range kinesisFamilies {
		ch <- f.desc
	}
}

// collectKinesis emits the snapshot's applications, streams and request
// counts. An application that could not be read has only its status
// series (error); a shard not read at its checkpoint has no lag series.
func collectKinesis(ch sink, snap *queue.Snapshot) {
	cl := snap.Cluster
	for i := range snap.KinesisApps {
		a := &snap.KinesisApps[i]
		emitStatus(ch, descKinesisStatus, a.EffectiveStatus(), cl, a.Name)
		if a.Err != "" {
			continue
		}
		if lag, _, ok := a.Lag(); ok {
			ch.gauge(descKinesisLagSeconds, lag.Seconds(), cl, a.Name)
		}
		for _, l := range a.Leases {
			if l.HasLag {
				ch.gauge(descKinesisShardLag, l.Behind.Seconds(), cl, a.Name, l.Shard)
			}
		}
		ch.gauge(descKinesisShardsBehind, float64(a.ShardsBehind()), cl, a.Name)
		ch.gauge(descKinesisWorkers, float64(a.Owners()), cl, a.Name)
		ch.gauge(descKinesisUnleased, float64(len(a.Unleased)), cl, a.Name)
		emitHeadroom(ch, a.Headroom, snap.Broker, cl, "", a.Name)
	}
	for i := range snap.KinesisStreams {
		s := &snap.KinesisStreams[i]
		if s.Err != "" {
			continue
		}
		ch.gauge(descKinesisShards, float64(s.OpenShards()), cl, s.Name, "open")
		ch.gauge(descKinesisShards, float64(len(s.Shards)-s.OpenShards()), cl, s.Name, "closed")
		ch.gauge(descKinesisRetention, s.Retention.Seconds(), cl, s.Name)
		ch.gauge(descKinesisConsumers, float64(len(s.Consumers)), cl, s.Name)
	}
	if snap.Kinesis == nil {
		return
	}
	// The sink emits a counter family as a counter.
	for _, r := range snap.Kinesis.Requests {
		ch.gauge(descKinesisRequests, float64(r.Count), cl, r.Action)
	}
}
