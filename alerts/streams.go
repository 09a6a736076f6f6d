package alerts

import (
	"strings"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// Kafka streams groups (KIP-1071) are judged like share groups, over the
// whole group from two polls, the previous one and this: their committed
// offsets move only every commit.interval.ms (30 s by default), so one
// unmoved pair of polls means little, and hysteresis holds a status for
// several polls before it shows. From the most severe:
//
//   - stop: records wait and the group has no member to run its tasks;
//   - stall: the lag grew since the last poll and no committed offset with
//     lag moved: the tasks hold a record they cannot get past;
//   - warn: the group did not settle (NotReady, Assigning, Reconciling) in
//     two polls in a row — a missing source topic, a rebalance that does not
//     finish — or the lag grew while offsets moved: the tasks run, slower
//     than producers write;
//
// and ok otherwise; tasks and members are in every sentence. A group read
// in error is shown as an error and the next poll is judged against its
// last good read.

// streamsReads are the streams groups of one source as the last poll read
// them: a group read in error keeps its last good read.
type streamsReads map[string]*queue.StreamsGroup

// evaluateStreams judges latest's streams groups against the last poll,
// then settles their statuses and tracks their onsets, as evaluateShares.
func (e *Evaluator) evaluateStreams(latest *queue.Snapshot) {
	if e.streams == nil {
		e.streams = make(map[sourceKey]streamsReads)
	}
	key := keyOf(latest)
	if reads := judgeStreams(e.streams[key], latest); latest.Err == nil {
		e.streams[key] = reads
	}
	for i := range latest.StreamsGroups {
		e.settleStreams(latest, &latest.StreamsGroups[i])
	}
}

// judgeStreams fills the status of every streams group of s read without
// error from its read in last, and returns what the next poll is judged
// against.
func judgeStreams(last streamsReads, s *queue.Snapshot) streamsReads {
	next := make(streamsReads, len(s.StreamsGroups))
	for i := range s.StreamsGroups {
		g := &s.StreamsGroups[i]
		read := &queue.StreamsGroup{Name: g.Name, State: g.State, Partitions: g.Partitions}
		if g.Err == "" {
			g.Status, g.StatusReason = streamsGroupStatus(last[g.Name], g)
		} else if prev := last[g.Name]; prev != nil {
			read = prev
		}
		next[g.Name] = read
	}
	return next
}

// settleStreams settles g's status (hysteresis), tracks its onset and
// writes how long its condition lasted into its sentence.
func (e *Evaluator) settleStreams(latest *queue.Snapshot, g *queue.StreamsGroup) {
	raw, reason := g.EffectiveStatus(), g.StatusReason
	start := latest.Time
	if n := len(e.past); raw != queue.StatusOK && raw != queue.StatusStop && n > 0 {
		start = e.past[n-1].Time // unmoved, or unsettled, since that poll
	}
	st, since, text := e.settle(streamsOnset(g.Name), raw, start, latest.Time, func(since time.Time) string {
		return streamsReason(reason, raw, since, latest.Time)
	})
	g.StatusSince = since
	if g.Err == "" { // else the error is what it shows
		g.Status, g.StatusReason = st, text
	}
}

// unsettled are the states of a group whose tasks are not all running:
// its topology waits for topics (NotReady), or the broker is computing or
// handing out an assignment.
var unsettled = map[string]bool{"NotReady": true, "Assigning": true, "Reconciling": true}

// streamsGroupStatus judges a streams group from two polls, prev (nil
// before the second poll) and cur, by the rules at the top of this file.
//
// With 40 records waiting, up from 25, and no committed offset moved, 6
// active tasks on 1 member: stall, "no committed offset moved since the
// last poll: 40 records waiting, up from 25; 6 active tasks on 1 member".
func streamsGroupStatus(prev, cur *queue.StreamsGroup) (queue.Status, string) {
	lag := cur.TotalLag()
	waiting := queue.ExactCount(lag) + " records waiting"
	work := streamsWork(cur)
	switch {
	case lag > 0 && len(cur.Members) == 0:
		return queue.StatusStop, "no members: " + waiting + ", no task running"
	case prev == nil:
	case lag > prev.TotalLag() && !committedMoved(prev, cur):
		return queue.StatusStall, "no committed offset moved since the last poll: " + waiting + ", up from " +
			queue.ExactCount(prev.TotalLag()) + "; " + work
	case unsettled[cur.State] && unsettled[prev.State]:
		return queue.StatusWarn, "state " + cur.State + " since the last poll: " + waiting + "; " + work
	case lag > prev.TotalLag():
		return queue.StatusWarn, "lag rising: " + waiting + ", up from " + queue.ExactCount(prev.TotalLag()) + " at the last poll; " + work
	}
	return queue.StatusOK, waiting + "; " + work
}

// committedMoved reports whether the committed offset of some partition of
// cur that has lag differs from prev's.
func committedMoved(prev, cur *queue.StreamsGroup) bool {
	before := map[queue.TopicPartition]int64{}
	for _, p := range prev.Partitions {
		before[queue.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = p.Committed
	}
	for _, p := range cur.Partitions {
		if p.Lag == 0 {
			continue
		}
		if c, ok := before[queue.TopicPartition{Topic: p.Topic, Partition: p.Partition}]; !ok || c != p.Committed {
			return true
		}
	}
	return false
}

// streamsWork says what runs the group's tasks: "6 active tasks on 1
// member", with standby and warm-up tasks when there are, and the
// processes when they are fewer than the members (one per stream thread).
func streamsWork(g *queue.StreamsGroup) string {
	active, standby, warmup := g.Tasks()
	parts := []string{taskCount(active, "active")}
	if standby > 0 {
		parts = append(parts, taskCount(standby, "standby"))
	}
	if warmup > 0 {
		parts = append(parts, taskCount(warmup, "warm-up"))
	}
	s := strings.Join(parts, ", ") + " on " + members(len(g.Members))
	if p := g.Processes(); p > 0 && p < len(g.Members) {
		s += " in " + queue.ExactCount(int64(p)) + " processes"
		if p == 1 {
			s = strings.TrimSuffix(s, "es") // "in 1 process"
		}
	}
	return s
}

// taskCount is "1 active task" or "n active tasks".
func taskCount(n int, kind string) string {
	if n == 1 {
		return "1 " + kind + " task"
	}
	return queue.ExactCount(int64(n)) + " " + kind + " tasks"
}

// streamsReason is a streams group's sentence with how long its condition
// lasted (since its onset) in its head, which two polls cannot tell.
func streamsReason(reason string, st queue.Status, since, now time.Time) string {
	if since.IsZero() || !since.Before(now) {
		return reason
	}
	d := queue.HumanSince(since, now)
	switch st {
	case queue.StatusStop:
		return strings.Replace(reason, "no members: ", "no members "+d+": ", 1)
	case queue.StatusStall:
		return strings.Replace(reason, "no committed offset moved since the last poll: ", "no committed offset moved "+d+": ", 1)
	case queue.StatusWarn:
		return strings.Replace(reason, " since the last poll: ", " "+d+": ", 1)
	}
	return reason
}
