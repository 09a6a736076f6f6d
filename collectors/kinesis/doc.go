// Package kinesis polls one Amazon Kinesis Data Streams account (or a
// local server) and the lease tables of its Kinesis Client Library (KCL)
// applications, through the brokers/kinesis access.
//
// A read lists the streams, describes those the streams filter selects
// and every application's stream (summary, shards, enhanced fan-out
// consumers), scans each application's lease table, and reads each
// leased, unfinished shard once at its checkpoint (GetShardIterator
// AT_SEQUENCE_NUMBER + GetRecords Limit 1) for MillisBehindLatest and the
// checkpointed record's arrival time. A shard serves five reads a second
// to everyone, so the account is read every kinesis[].poll_interval (a
// minute by default) and polls in between serve the last read.
//
// No status is judged here: alerts evaluation judges each application from
// this read and the previous one (alerts.KinesisStatus). A read marks what
// that needs: which open shards have no lease (Unleased: those whose
// parents have no unfinished lease, since the KCL leases a child only when
// its parents are done), which leased shards are open, and when the
// account was read.
//
// One application whose table cannot be read is that application's error;
// one shard that cannot be read at its checkpoint is that lease's; a
// stream that cannot be described is a partial failure. Only a failed
// listing of the streams fails the poll.
package kinesis
