// Package kafka polls one Kafka cluster's consumer groups with franz-go and
// turns them into a queue.Snapshot.
//
// One poll costs a number of requests that grows with brokers and groups,
// never with groups × partitions:
//
//  1. ListGroups (one request per broker), filtered by the configured regexes;
//  2. DescribeGroups for classic groups and ConsumerGroupDescribe for KIP-848
//     groups (batched per coordinator), so state and members are right for both;
//     ShareGroupDescribe and DescribeShareGroupOffsets for share groups
//     (KIP-932), only when the listing has some, so a broker without share
//     groups is never asked about them;
//  3. OffsetFetch for all groups at once (batched per coordinator);
//  4. one Metadata request, then ListOffsets for log start, high watermark and
//     last stable offset of the union of all consumed topics (batched per
//     partition leader);
//  5. Fetch, one request per leader (all leaders at once), of the records at
//     committed offsets whose timestamp is not cached yet, for lag in
//     seconds. A partition is read once from its lowest wanted offset, and
//     every group whose offset the returned batches cover is served by it;
//  6. DescribeConfigs, at most once per five minutes (and for topics new
//     since), of retention.ms, retention.bytes and cleanup.policy of the
//     topics groups lag on, for each group's retention headroom: the
//     soonest of retention.ms less the age of the next record it reads and,
//     with retention.bytes, the gap from the log start projected from how
//     fast the log start gains on the committed offset (retention.go).
//
// The first poll after a start does not wait for step 5: it publishes lag
// at once with lag seconds marked pending, and Finish, which the scheduler
// calls once that snapshot is published, reads the timestamps; the poll
// right after it carries them.
//
// Record timestamps are cached by (topic, partition, offset): a group that does
// not move costs no fetch on the next poll. When the record is gone (deleted by
// retention, or too large for the small fetch), lag seconds is interpolated
// from the end offsets this collector observed over time, and marked as
// estimated.
//
// The connection (seeds, TLS, SASL, client id) and the replay cursor group
// come from brokers/kafka, the same access value the replay backend uses,
// so the depth measured here and the cursor a replay moves always agree.
//
// A share group has no committed offsets: its position on a partition is
// the share-partition start offset, and its lag is the broker's (KIP-1226,
// DescribeShareGroupOffsets v1, Kafka 4.2 and later) or, from an older
// broker, end offset − start offset, marked as an estimate. Its status is
// judged by alerts evaluation against the previous poll, like every
// reader's.
//
// A failing group (authorization, coordinator error) is reported on that group
// only; a failing cluster fails the poll and the scheduler keeps the others.
package kafka
