// Package alerts evaluates consumer-group health for queuewatch.
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
// sliding window of the last N polls (StatusOptions.Window, 10 by default)
// and given one of these statuses, checked in this order:
//
//   - ok: lag is 0 at the latest poll. A caught-up partition is healthy
//     whatever happened before, including when the group has no members.
//   - stop: lag > 0 and the group has no members: nobody will ever consume it.
//   - rewind: the committed offset went backwards at some step of the window
//     (an offset reset or a consumer committing stale positions): records are
//     being processed twice.
//   - stall: members are present but the committed offset did not move at any
//     step of the window while lag > 0: the consumer is alive but stuck.
//   - warn: the committed offset moves, but lag never shrank across the window
//     and ended higher than it started: the consumer is losing ground.
//   - ok: anything else (moving and keeping up, or lag going up and down).
//
// With fewer than 3 observations a trend cannot be told apart from noise, so
// only stop and rewind (facts of a single poll or step) are reported then;
// never stall or warn. A group's status is its worst partition's (queue.Worse)
// and its StatusReason is that partition's sentence, for example "committed
// offset has not moved for 6m while lag is 12,400 on orders/3". A group the
// collector could not read (ConsumerGroup.Err), or a snapshot whose poll
// failed, is StatusError with the error as the reason. A group with no
// partitions has nothing to be behind on and is ok.
//
// # Catch-up ETA
//
// The ETA compares the rate at which the group consumes (the offset lag is
// measured from, normally the committed offset) with the rate at which
// producers append (the end offset), each summed over the group's partitions
// across the same window. A caught-up group has an ETA of 0; a group that
// consumes no faster than producers produce is falling behind; otherwise the
// ETA is lag divided by the net drain rate. Fewer than two observations give
// no ETA. FormatETA renders it for people.
//
// # Cost
//
// The collector evaluates every poll against its whole history, so an
// Evaluator keeps, per past snapshot, an index of groups by name. Snapshots
// are immutable once published, so the index is built once per snapshot and
// dropped when the snapshot leaves the window. Partitions are matched by
// position first and by binary search second, since collectors keep them
// sorted by topic and partition. Besides the index of the one new snapshot,
// a call allocates only the reason sentences of unhealthy groups.
package alerts
