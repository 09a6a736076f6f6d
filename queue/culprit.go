package queue

import "strconv"

// PartitionStatus is one partition of a consumer group as the group's
// status evaluation judged it, with the facts its sentence needs. Burrow
// names the same per partition (OK, WARN, STALL, STOP, REWIND) and lists
// the partitions in error with the group; queuewatch keeps only the
// partitions that are not ok, so a healthy group of 100,000 partitions
// costs nothing.
type PartitionStatus struct {
	Topic  string
	Status Status
	// Lag is the partition's lag at the poll judged.
	Lag int64
	// Back is the largest step backwards of the committed offset (rewind).
	Back int64
	// Polls is how many polls lag rose over (warn).
	Polls int32
	// Partition and HasCommit come last, so that they pack together:
	// a group of stalled partitions keeps one of these per partition.
	Partition int32
	// HasCommit tells a stall without any committed offset apart.
	HasCommit bool
}

// Reason is the partition's own sentence, without a duration: how long a
// condition has lasted is tracked per group (the group's StatusSince), not
// per partition.
func (p PartitionStatus) Reason() string {
	switch p.Status {
	case StatusStop:
		return "no members, lag " + ExactCount(p.Lag)
	case StatusRewind:
		return "committed offset went back by " + ExactCount(p.Back)
	case StatusStall:
		if !p.HasCommit {
			return "nothing committed over the status window while lag is " + ExactCount(p.Lag)
		}
		return "committed offset has not moved over the status window while lag is " + ExactCount(p.Lag)
	case StatusWarn:
		return "lag rising for " + strconv.Itoa(int(p.Polls)) + " polls, now " + ExactCount(p.Lag)
	}
	return ""
}

// Culprits are the partitions whose evaluation made g's status: those of
// g's status among its judged partitions, worst first. When the status is
// ok or error (which is the group's, not a partition's) there are none;
// when no partition has the status the group shows (a status held while
// it settles), the partitions of the worst status judged now.
func (g *ConsumerGroup) Culprits() []PartitionStatus {
	st := g.EffectiveStatus()
	if st == StatusOK || st == StatusError || len(g.Judged) == 0 {
		return nil
	}
	want := st
	if !g.hasJudged(st) {
		want = g.Judged[0].Status
	}
	var out []PartitionStatus
	for _, p := range g.Judged {
		if p.Status == want {
			out = append(out, p)
		}
	}
	return out
}

func (g *ConsumerGroup) hasJudged(st Status) bool {
	for _, p := range g.Judged {
		if p.Status == st {
			return true
		}
	}
	return false
}
