package alerts

import (
	"strings"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// Kafka share groups are judged over the whole group from two polls, the
// previous one and this, not per partition over the window: a share group
// has no committed offset whose steps show a trend, only start offsets
// that a held or failing record pins. From the most severe:
//
//   - stop: records wait and the group has no member to read them;
//   - stall: records wait, members are there, and no start offset moved
//     since the last poll (a member holds the oldest record, or fails it
//     over and over until the delivery limit);
//   - warn: the lag grew since the last poll while start offsets moved:
//     the members read, slower than producers write;
//
// and ok otherwise; the counts are in every sentence. A group read in
// error is shown as an error and the next poll is judged against its last
// good read. Shown statuses are held by hysteresis like every window's
// (hysteresis.go).

// shareReads are the share groups of one source as the last poll read
// them, each judged against by the next poll: a group read in error keeps
// its last good read.
type shareReads map[string]*queue.ShareGroup

// evaluateShares judges latest's share groups against the last poll, then
// settles their statuses, tracks their onsets and says since when a group
// has had no members or moved no start offset. A completing poll (Complete)
// is judged against the poll it replaces, which is the last one read.
func (e *Evaluator) evaluateShares(latest *queue.Snapshot) {
	if e.shares == nil {
		e.shares = make(map[sourceKey]shareReads)
	}
	key := keyOf(latest)
	if reads := judgeShares(e.shares[key], latest); latest.Err == nil {
		// A poll that failed as a whole is no read to judge the next against.
		e.shares[key] = reads
	}
	for i := range latest.ShareGroups {
		e.settleShare(latest, &latest.ShareGroups[i])
	}
}

// judgeShares fills the status of every share group of s read without
// error from its read in last, and returns what the next poll is judged
// against.
func judgeShares(last shareReads, s *queue.Snapshot) shareReads {
	for i := range s.ShareGroups {
		if g := &s.ShareGroups[i]; g.Err == "" {
			g.Status, g.StatusReason = shareGroupStatus(last[g.Name], g)
		}
	}
	return readShares(last, s)
}

// readShares is what the poll after s judges its share groups against:
// each as s read it (only what shareGroupStatus reads), or its read in
// last when s read it in error.
func readShares(last shareReads, s *queue.Snapshot) shareReads {
	next := make(shareReads, len(s.ShareGroups))
	for i := range s.ShareGroups {
		g := &s.ShareGroups[i]
		read := &queue.ShareGroup{Name: g.Name, Partitions: g.Partitions}
		if prev := last[g.Name]; g.Err != "" && prev != nil {
			read = prev
		}
		next[g.Name] = read
	}
	return next
}

// settleShare settles g's status (hysteresis), tracks its onset and writes
// how long its condition lasted into its sentence.
func (e *Evaluator) settleShare(latest *queue.Snapshot, g *queue.ShareGroup) {
	raw, reason := g.EffectiveStatus(), g.StatusReason
	start := latest.Time
	if n := len(e.past); raw == queue.StatusStall && n > 0 {
		start = e.past[n-1].Time // no start offset moved since that poll
	}
	st, since, text := e.settle(shareOnset(g.Name), raw, start, latest.Time, func(since time.Time) string {
		return shareReason(reason, raw, since, latest.Time)
	})
	g.StatusSince = since
	if g.Err == "" { // else the error is what it shows
		g.Status, g.StatusReason = st, text
	}
}

// shareGroupStatus judges a share group from two polls, prev (nil before
// the second poll) and cur, by the rules at the top of this file.
//
// With 7 records waiting, 1 member and the start offset at 10 in both
// polls: stall, "no start offset moved since the last poll: 7 records
// waiting, 1 member".
func shareGroupStatus(prev, cur *queue.ShareGroup) (queue.Status, string) {
	lag := cur.TotalLag()
	waiting := queue.ExactCount(lag) + " records waiting"
	switch {
	case lag > 0 && len(cur.Members) == 0:
		return queue.StatusStop, "no members: " + waiting
	case prev == nil || lag == 0:
	case !startMoved(prev, cur):
		return queue.StatusStall, "no start offset moved since the last poll: " + waiting + ", " + members(len(cur.Members))
	case lag > prev.TotalLag():
		return queue.StatusWarn, "lag rising: " + waiting + ", up from " + queue.ExactCount(prev.TotalLag()) + " at the last poll"
	}
	return queue.StatusOK, waiting + ", " + members(len(cur.Members))
}

// startMoved reports whether the start offset of some partition of cur
// that has lag differs from prev's.
func startMoved(prev, cur *queue.ShareGroup) bool {
	before := map[queue.TopicPartition]int64{}
	for _, p := range prev.Partitions {
		if p.Initialized {
			before[queue.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = p.Start
		}
	}
	for _, p := range cur.Partitions {
		if !p.Initialized || p.Lag == 0 {
			continue
		}
		if start, ok := before[queue.TopicPartition{Topic: p.Topic, Partition: p.Partition}]; !ok || start != p.Start {
			return true
		}
	}
	return false
}

// members is "1 member" or "n members".
func members(n int) string {
	if n == 1 {
		return "1 member"
	}
	return queue.ExactCount(int64(n)) + " members"
}

// shareReason is a share group's sentence, shareGroupStatus's, with how
// long its condition lasted (since its onset) in its head, which two polls
// cannot tell.
func shareReason(reason string, st queue.Status, since, now time.Time) string {
	if since.IsZero() || !since.Before(now) {
		return reason
	}
	d := queue.HumanSince(since, now)
	switch st {
	case queue.StatusStop:
		return strings.Replace(reason, "no members: ", "no members "+d+": ", 1)
	case queue.StatusStall:
		return strings.Replace(reason, "no start offset moved since the last poll: ", "no start offset moved "+d+": ", 1)
	}
	return reason
}
