package alerts

import (
	"cmp"
	"strconv"
	"strings"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// Kinesis KCL applications are judged, like SQS queues, from two reads of
// their account a poll_interval apart (a read at a checkpoint costs the
// shard's reads, so reads are a minute apart by default), not over the
// window: polls between reads serve the last read and are judged the same
// way again. KinesisStatus is the rule; the retention headroom is added
// as for every reader. Statuses are not held by hysteresis: two reads a
// minute apart are already what hysteresis waits for.

// kinesisReads are what the next reads of one Kinesis source are judged
// against: the applications of the last two reads and when they were.
type kinesisReads struct {
	last, prev   time.Time
	read, before map[string]*queue.KinesisApplication
}

// evaluateKinesis judges latest's applications against the read before.
func (e *Evaluator) evaluateKinesis(latest *queue.Snapshot) {
	if latest.Kinesis == nil {
		return
	}
	if e.kinesis == nil {
		e.kinesis = make(map[sourceKey]*kinesisReads)
	}
	key := keyOf(latest)
	r := e.kinesis[key]
	if r == nil {
		r = &kinesisReads{}
		e.kinesis[key] = r
	}
	if at := latest.Kinesis.ReadAt; at.After(r.last) {
		r.prev, r.last = r.last, at
		r.before, r.read = r.read, kinesisRead(latest)
	}
	for i := range latest.KinesisApps {
		a := &latest.KinesisApps[i]
		if a.Err != "" {
			a.StatusSince = e.since(kinesisOnset(a.Name), queue.StatusError, latest.Time)
			continue
		}
		raw, reason := KinesisStatus(r.before[a.Name], r.prev, a, r.last)
		raw, text := e.withHeadroom(raw, a.Headroom, "record", func(time.Time) string { return reason })
		start := latest.Time
		if (raw == queue.StatusStop || raw == queue.StatusStall) && !r.prev.IsZero() {
			start = r.prev // nothing moved since that read
		}
		a.StatusSince = e.since(kinesisOnset(a.Name), raw, start)
		a.Status, a.StatusReason = raw, text(a.StatusSince)
	}
}

// kinesisRead is the applications of s read without error, by name.
func kinesisRead(s *queue.Snapshot) map[string]*queue.KinesisApplication {
	out := make(map[string]*queue.KinesisApplication, len(s.KinesisApps))
	for i := range s.KinesisApps {
		if a := s.KinesisApps[i]; a.Err == "" {
			out[a.Name] = &a
		}
	}
	return out
}

// KinesisStatus judges a KCL application from the read before, prev (nil
// at the first read) made at prevAt, and this one, cur, made at at. From
// the most severe:
//
//   - stop: no lease's counter moved between reads further apart than the
//     failover time (a live worker renews every failover time / 3), or no
//     worker holds any lease while a shard is behind: no worker runs;
//   - stall: a shard's checkpoint did not move between reads while its
//     checkpointed record is behind the shard's newest one;
//   - warn: a closed shard whose checkpoint is neither SHARD_END nor
//     moving (its children are not read until it is), a lease changing
//     hands between reads that changed owner twice or more since its
//     checkpoint (workers taking it from each other: lease ping-pong), or
//     an open shard no lease covers;
//
// and ok otherwise, with the furthest-behind shard as the reason.
//
// With shard 0's checkpoint at 4960 in both reads, 12 s behind: stall,
// "checkpoint of shardId-0 unmoved since the last read, 12s behind the
// newest record".
func KinesisStatus(prev *queue.KinesisApplication, prevAt time.Time, cur *queue.KinesisApplication, at time.Time) (queue.Status, string) {
	if len(cur.Leases) == 0 {
		if len(cur.Unleased) > 0 {
			return queue.StatusStop, "no lease in " + cur.LeaseTable + ": no worker reads " + cur.Stream
		}
		return queue.StatusOK, "no leases"
	}
	before := map[string]*queue.KinesisLease{}
	if prev != nil {
		for i := range prev.Leases {
			before[prev.Leases[i].Shard] = &prev.Leases[i]
		}
	}
	if prev != nil && at.Sub(prevAt) > cur.FailoverTime && !renewed(before, cur.Leases) {
		return queue.StatusStop, "no lease renewed in " + queue.HumanDuration(at.Sub(prevAt)) +
			" (failover time " + queue.HumanDuration(cur.FailoverTime) + "): no worker runs"
	}
	if cur.Owners() == 0 && cur.ShardsBehind() > 0 {
		return queue.StatusStop, "no worker holds a lease while " + queue.ExactCount(cur.ShardsBehind()) + " " + queue.Plural(cur.ShardsBehind(), "shard is", "shards are") + " behind"
	}
	if s, why := kinesisStalled(before, cur.Leases); s != "" {
		return queue.StatusStall, why
	}
	for _, check := range []func(map[string]*queue.KinesisLease, *queue.KinesisApplication) string{kinesisBlocked, kinesisPingPong, kinesisUnleased} {
		if why := check(before, cur); why != "" {
			return queue.StatusWarn, why
		}
	}
	return queue.StatusOK, kinesisOKReason(cur)
}

// renewed reports whether some lease's counter moved since the read before.
func renewed(before map[string]*queue.KinesisLease, leases []queue.KinesisLease) bool {
	for _, l := range leases {
		if p := before[l.Shard]; p == nil || p.Counter != l.Counter {
			return true
		}
	}
	return false
}

// kinesisStalled names the shards whose checkpoint stayed while behind.
func kinesisStalled(before map[string]*queue.KinesisLease, leases []queue.KinesisLease) (string, string) {
	var stalled []*queue.KinesisLease
	for i := range leases {
		l := &leases[i]
		if p := before[l.Shard]; p != nil && !l.Finished() && p.Checkpoint == l.Checkpoint && l.HasLag && l.Behind > 0 {
			stalled = append(stalled, l)
		}
	}
	if len(stalled) == 0 {
		return "", ""
	}
	worst := stalled[0]
	for _, l := range stalled {
		if l.Behind > worst.Behind {
			worst = l
		}
	}
	why := "checkpoint of " + worst.Shard + " unmoved since the last read, " + queue.HumanDuration(worst.Behind) + " behind the newest record"
	if n := len(stalled) - 1; n > 0 {
		why += " (and " + strconv.Itoa(n) + " more " + queue.Plural(n, "shard", "shards") + ")"
	}
	return worst.Shard, why
}

// kinesisBlocked finds a closed shard not read to its end whose
// checkpoint did not move: its children wait for it.
func kinesisBlocked(before map[string]*queue.KinesisLease, a *queue.KinesisApplication) string {
	for _, l := range a.Leases {
		p := before[l.Shard]
		if l.Open || l.Finished() || len(l.Children) == 0 || p == nil || p.Checkpoint != l.Checkpoint {
			continue
		}
		return "closed shard " + l.Shard + " not read to SHARD_END: its " + queue.Plural(len(l.Children), "child", "children") +
			" " + strings.Join(l.Children, ", ") + " wait"
	}
	return ""
}

// kinesisPingPong finds a lease that changed hands between reads after
// changing owner at least twice since its checkpoint.
func kinesisPingPong(before map[string]*queue.KinesisLease, a *queue.KinesisApplication) string {
	for _, l := range a.Leases {
		if p := before[l.Shard]; p != nil && p.Owner != l.Owner && l.OwnerSwitches >= 2 {
			return "lease of " + l.Shard + " changed owner " + strconv.FormatInt(l.OwnerSwitches, 10) +
				" times since its last checkpoint (now " + cmp.Or(l.Owner, "no one") + "): workers take it from each other"
		}
	}
	return ""
}

// kinesisUnleased names an open shard that no lease covers.
func kinesisUnleased(_ map[string]*queue.KinesisLease, a *queue.KinesisApplication) string {
	if len(a.Unleased) == 0 {
		return ""
	}
	return "open " + queue.Plural(len(a.Unleased), "shard", "shards") + " " + strings.Join(a.Unleased, ", ") + " " +
		queue.Plural(len(a.Unleased), "has", "have") + " no lease: no worker reads " + queue.Plural(len(a.Unleased), "it", "them")
}

func kinesisOKReason(a *queue.KinesisApplication) string {
	why := queue.ExactCount(int64(len(a.Leases))) + " " + queue.Plural(len(a.Leases), "lease", "leases") + " held by " +
		queue.ExactCount(int64(a.Owners())) + " " + queue.Plural(a.Owners(), "worker", "workers")
	if lag, shard, ok := a.Lag(); ok && lag > 0 {
		why += "; " + shard + " is " + queue.HumanDuration(lag) + " behind the newest record"
	}
	return why
}
