// Package alerts evaluates the health of every reader queuewatch watches
// (Kafka consumer and share groups, JetStream consumers, RabbitMQ queues,
// SQS queues, outbox tables and replication slots) and generates the
// Prometheus rule file from the same thresholds. It is the one place where
// a reader's status is judged: collectors read facts into a
// queue.Snapshot, and the scheduler has an Evaluator judge each snapshot
// before it is published. The sections below describe consumer groups;
// the comments at the top of connect.go, nats.go, rabbitmq.go, share.go and sqs.go and
// the doc comment of EvaluateOutbox say how the other readers' statuses
// differ. Most are judged over the sliding window of polls; share groups
// against the previous poll and SQS queues against the account's previous
// read, whose memory the Evaluator keeps beside the window; Kafka Connect
// connectors from the states Connect reports at the poll alone.
//
// # Lag status
//
// Status is judged the way LinkedIn's Burrow judges it: from the shape of the
// recent history, not from fixed thresholds. A lag of 50,000 is healthy for a
// batch consumer that drains it every few minutes and alarming for a payment
// service that is usually at zero; no single number fits every group, and a
// threshold someone has to tune per group is a threshold nobody tunes. What is
// true of every healthy consumer is that its committed offset moves forward and
// its lag does not grow without end. So each partition is looked at over a
// sliding window of the last N polls (StatusOptions.Window, 10 by default and
// never below 3) and given one of these statuses, checked in this order:
//
//   - ok: lag is 0 at the latest poll. A caught-up partition is healthy
//     whatever happened before, including when the group has no members.
//   - stop: lag > 0 and the group has no members at the latest poll: nobody
//     will ever consume it. Its sentence says how long the polls have seen
//     the group without members.
//   - rewind: the committed offset went backwards at some step of the window
//     (an offset reset or a consumer committing stale positions): records are
//     being processed twice. Losing the commit altogether is not a rewind.
//   - ok, when the partition was not seen in a full window of polls, or when
//     its lag was 0 at some earlier poll of the window: a trend needs a full
//     window, and a consumer that caught up within it is keeping up.
//   - stall: the committed offset did not move forward at any step of the
//     window (a first commit counts as movement) while lag > 0 and members
//     are present: the consumer is alive but stuck.
//   - warn: the committed offset moves, lag never fell below where the window
//     started, and it ended higher by more than a tenth of what producers
//     appended meanwhile: the consumer is losing ground. Lag may dip between
//     polls (a consumer reads in bursts); the margin keeps a consumer whose
//     small lag follows a rising produce rate from being flagged.
//   - ok: anything else (moving and keeping up, or lag going up and down).
//
// So only stop and rewind, facts of a single poll or step, are reported
// before the window is full; never stall or warn.
//
// A group's status is its worst partition's, in queue's one severity order
// (queue.Statuses: ok, warn, rewind, error, stall, stop), and its
// StatusReason is that partition's sentence, for example "committed offset
// has not moved for 6m while lag is 12,400 on orders/3 and 2 more
// partitions"; among partitions of the same status the one with the most lag
// (for rewind: the largest step back) names the group. The sentence of stop
// is group-wide: "no members for 9m, lag 48,200". A group the collector
// could not read (ConsumerGroup.Err), or a snapshot whose poll failed, is
// StatusError with the error as the reason. A group with no partitions has
// nothing to be behind on and is ok. What a group shows in the UI, the API
// and the status metric is queue.ConsumerGroup.EffectiveStatus, which also
// makes a group with a read error StatusError when nobody evaluated it.
//
// Durations and counts in sentences are written by queue.HumanDuration and
// queue.ExactCount, as everywhere else in queuewatch.
//
// # Retention headroom
//
// Lag is about delay; a reader can also be about to lose data. Every
// reader whose broker deletes unread messages (retention, TTL, max_age,
// size and count limits) carries a queue.Headroom, filled by its
// collector. A reader the window finds ok whose headroom is below
// StatusOptions.HeadroomLow is warn with the headroom as its sentence
// ("oldest pending record (orders/3) is deleted in 42m (retention.ms
// 1d)"), and a reader already not ok adds it to its own sentence, so the
// pages and "Needs attention" show a coming loss before it happens
// (headroom.go). QueuewatchDataLossImminent alerts on the same figure.
//
// # Catch-up ETA
//
// The ETA compares the rate at which the group consumes (the offset lag is
// measured from, normally the committed offset) with the rate at which
// producers append (the end offset), each summed over the group's partitions
// across the same window. A group with no lag, or with less lag than
// producers append between two polls (it reads what arrives as it arrives),
// is caught up; a group that consumes no faster than producers produce is
// falling behind; otherwise the ETA is lag divided by the net drain rate. A
// group none of whose partitions has two observations has no ETA.
// queue.HumanETA renders it for people.
//
// # Alert rules
//
// Rules generates the Prometheus rule file from the same config. Threshold
// overrides become extra rules over disjoint label selections; which
// override applies to groups or DLQs and what thresholds it sets come from
// config (Override.AppliesToGroups, Override.Apply), so every group and DLQ is
// judged by the threshold config.Alerts.For gives it. The status alerts
// (stall, stop, a growing outbox) fire on the status metric, that is on
// exactly the status the UI shows.
//
// The alert shapes every kind of reader shares (in a status for two polls,
// backlog or lag seconds over a threshold for the window) are written once,
// by the readers type; each broker describes its readers (status metric,
// identity labels, backlog, page) and words its alerts in its own file, and
// registers its rule set with one line of ruleSets, whose order is the rule
// file's.
//
// # Cost
//
// The collector evaluates every poll against the window before it. An
// Evaluator remembers, per source, only what the window needs of each poll:
// per partition its offsets and lag (48 bytes, against a snapshot's 104),
// per group its member count, and the small NATS and outbox parts; of
// share groups and SQS queues it keeps their last read (start offsets;
// visible and in-flight counts). Ten polls of 100,000 group-partitions so
// cost about 50 MB rather than the 145 MB of ten snapshots. Partitions
// are matched by position first and by binary search second, since
// collectors keep them sorted by topic and partition. The first poll after
// a start, published before its lag seconds were read, is replaced by the
// poll that completes it, so the window spans polling intervals.
package alerts
