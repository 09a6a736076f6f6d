// Package kinesis is the one way queuewatch reaches Amazon Kinesis Data
// Streams and the DynamoDB lease tables of the Kinesis Client Library
// (KCL) applications reading them.
//
// app builds one Cluster per configured kinesis section and hands it to
// that account's collector. Its credentials are the AWS chain SQS uses
// (brokers/awsaccess); every request to Kinesis and DynamoDB is counted
// per action, because AWS bills them and, above all, because a shard
// serves only five reads a second to everyone reading it.
//
// The KCL facts are decided here once (lease.go): a lease item's fields
// in the 2.x and 3.x layouts (2.x names one child childShardId, 3.x
// lists childShardIds), 3.x's WORKER_METRIC_STATS items that share the
// table and are no leases, multi-stream lease keys
// ("account:stream:creationEpoch:shardId") and the sentinel checkpoints
// (TRIM_HORIZON, LATEST, AT_TIMESTAMP, SHARD_END).
//
// An application's time lag is read per shard at its checkpoint: one
// GetShardIterator AT_SEQUENCE_NUMBER and one GetRecords with Limit 1,
// whose MillisBehindLatest says how far the checkpointed record is behind
// the shard's newest and whose ApproximateArrivalTimestamp says when it
// arrived (the retention clock). That is two of the shard's five reads a
// second, which is why the default poll interval is a minute.
//
// New does no network I/O: the SDK resolves credentials on the first
// request, so a missing credential or an unreachable endpoint is that
// request's error, reported on the account's source.
package kinesis
