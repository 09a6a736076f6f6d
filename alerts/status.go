package alerts

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

const (
	defaultWindow = 10
	// minWindow is the fewest observations that show a trend: two steps.
	minWindow = 3
)

// StatusOptions tune status evaluation.
type StatusOptions struct {
	// Window is how many polls the sliding window holds, the latest included
	// (10 when 0 or negative; at least 3, because fewer cannot show a trend).
	Window int
}

func (o StatusOptions) window() int {
	switch {
	case o.Window <= 0:
		return defaultWindow
	case o.Window < minWindow:
		return minWindow
	}
	return o.Window
}

// Evaluate fills Status, StatusReason and ETA of every group in latest from
// history, the earlier snapshots of the same cluster, oldest first and not
// including latest. It mutates latest only. Callers that evaluate every poll
// should keep an Evaluator instead, which indexes each snapshot once.
func Evaluate(history []*queue.Snapshot, latest *queue.Snapshot, opts StatusOptions) {
	NewEvaluator(opts).Evaluate(history, latest)
}

// Evaluator evaluates successive snapshots of one cluster. It caches an index
// of each past snapshot's groups, keyed by the snapshot pointer, which is
// sound because published snapshots are immutable; entries are dropped as
// soon as their snapshot leaves the window. Use one Evaluator per cluster:
// snapshots of other clusters are ignored as history. It is safe for
// concurrent use, though calls are serialized.
type Evaluator struct {
	window int

	mu    sync.Mutex
	cache map[*queue.Snapshot]snapshotIndex
	// Scratch space reused across calls, so that evaluation does not
	// allocate per group or partition.
	past []*queue.Snapshot // usable history in the window, oldest first
	idx  []snapshotIndex   // idx[i] indexes past[i]
	refs []groupRef        // the evaluated group in each of past
	obs  []observation     // one partition's window, oldest first
}

// NewEvaluator returns an Evaluator with the given options.
func NewEvaluator(opts StatusOptions) *Evaluator {
	return &Evaluator{
		window: opts.window(),
		cache:  make(map[*queue.Snapshot]snapshotIndex),
	}
}

// snapshotIndex finds a snapshot's groups by name.
type snapshotIndex map[string]groupRef

// groupRef is a group of a past snapshot. sorted records whether its
// partitions are in (topic, partition) order, which permits binary search.
type groupRef struct {
	g      *queue.ConsumerGroup
	sorted bool
}

// observation is one partition as seen by one poll.
type observation struct {
	time      time.Time
	committed int64
	hasCommit bool
	end       int64
	lag       int64
	members   int
}

// Evaluate fills Status, StatusReason and ETA of every group in latest from
// history, the earlier snapshots of the cluster, oldest first and not
// including latest. Only the last Window-1 usable snapshots of history are
// read: those of latest's cluster, without a poll error, taken before latest.
// It mutates latest only.
func (e *Evaluator) Evaluate(history []*queue.Snapshot, latest *queue.Snapshot) {
	if latest == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cache == nil { // zero Evaluator
		e.window = StatusOptions{}.window()
		e.cache = make(map[*queue.Snapshot]snapshotIndex)
	}
	e.selectWindow(history, latest)
	for i := range latest.Groups {
		e.evaluateGroup(latest, &latest.Groups[i])
	}
	evaluateOutbox(e.past, latest, e.window)
	e.evaluateConsumers(latest)
}

// selectWindow picks the past snapshots of the window into e.past and their
// indexes into e.idx, building missing indexes and dropping stale ones.
func (e *Evaluator) selectWindow(history []*queue.Snapshot, latest *queue.Snapshot) {
	e.past = e.past[:0]
	for i := len(history) - 1; i >= 0 && len(e.past) < e.window-1; i-- {
		s := history[i]
		if s == nil || s == latest || s.Err != nil || s.Cluster != latest.Cluster || !s.Time.Before(latest.Time) {
			continue
		}
		e.past = append(e.past, s)
	}
	slices.Reverse(e.past)

	for s := range e.cache {
		if !slices.Contains(e.past, s) {
			delete(e.cache, s)
		}
	}
	e.idx = e.idx[:0]
	for _, s := range e.past {
		ix, ok := e.cache[s]
		if !ok {
			ix = indexSnapshot(s)
			e.cache[s] = ix
		}
		e.idx = append(e.idx, ix)
	}
}

func indexSnapshot(s *queue.Snapshot) snapshotIndex {
	ix := make(snapshotIndex, len(s.Groups))
	for i := range s.Groups {
		g := &s.Groups[i]
		if g.Err != "" {
			// A group that could not be read has no observations to give.
			continue
		}
		ix[g.Name] = groupRef{g: g, sorted: slices.IsSortedFunc(g.Partitions, comparePartitions)}
	}
	return ix
}

func comparePartitions(a, b queue.PartitionLag) int {
	return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// evaluateGroup sets g's status, reason and ETA.
func (e *Evaluator) evaluateGroup(latest *queue.Snapshot, g *queue.ConsumerGroup) {
	switch {
	case latest.Err != nil:
		setError(g, latest.Err.Error())
		return
	case g.Err != "":
		setError(g, g.Err)
		return
	}
	e.refs = e.refs[:0]
	for _, ix := range e.idx {
		e.refs = append(e.refs, ix[g.Name])
	}

	var (
		worst verdict
		same  int // other partitions sharing worst's status
		r     rates
	)
	for i := range g.Partitions {
		obs := e.observe(latest.Time, g, i)
		r.add(obs)
		v := judge(obs, e.window)
		v.topic, v.partition = g.Partitions[i].Topic, g.Partitions[i].Partition
		switch {
		case i == 0 || queue.Worse(worst.status, v.status) != worst.status:
			worst, same = v, 0
		case v.status == worst.status:
			same++
			if v.weight() > worst.weight() {
				worst = v
			}
		}
	}
	total := g.TotalLag()
	g.Status = cmp.Or(worst.status, queue.StatusOK)
	g.StatusReason = worst.reason(total, same)
	g.ETA = r.eta(total)
}

func setError(g *queue.ConsumerGroup, reason string) {
	g.Status = queue.StatusError
	g.StatusReason = reason
	g.ETA = queue.ETA{}
}

// observe returns the window of partition i of g: its observations in the
// past snapshots that have it, then the latest one.
func (e *Evaluator) observe(now time.Time, g *queue.ConsumerGroup, i int) []observation {
	p := &g.Partitions[i]
	e.obs = e.obs[:0]
	for k, ref := range e.refs {
		if ref.g == nil {
			continue
		}
		if pp := ref.find(i, p.Topic, p.Partition); pp != nil {
			e.obs = append(e.obs, observe(e.past[k].Time, pp, ref.g.Members))
		}
	}
	return append(e.obs, observe(now, p, g.Members))
}

func observe(t time.Time, p *queue.PartitionLag, members int) observation {
	return observation{
		time: t, committed: p.Committed, hasCommit: p.HasCommit && p.Committed >= 0,
		end: p.End, lag: p.Lag, members: members,
	}
}

// find returns the group's partition topic/partition, trying index hint
// first: partitions rarely change between polls, so they line up.
func (r groupRef) find(hint int, topic string, partition int32) *queue.PartitionLag {
	ps := r.g.Partitions
	if hint < len(ps) && ps[hint].Partition == partition && ps[hint].Topic == topic {
		return &ps[hint]
	}
	if r.sorted {
		i, ok := slices.BinarySearchFunc(ps, queue.PartitionLag{Topic: topic, Partition: partition}, comparePartitions)
		if ok {
			return &ps[i]
		}
		return nil
	}
	for i := range ps {
		if ps[i].Partition == partition && ps[i].Topic == topic {
			return &ps[i]
		}
	}
	return nil
}

// verdict is one partition's status with the facts its sentence needs.
type verdict struct {
	status    queue.Status
	topic     string
	partition int32
	lag       int64
	// span is how long the condition has lasted: no members for stop, no
	// movement for stall.
	span time.Duration
	// polls is how many polls lag rose over, for warn.
	polls int
	// back is the largest step backwards of the committed offset, for rewind.
	back int64
	// hasCommit tells a stall without any committed offset apart.
	hasCommit bool
}

// judge applies the window rules to one partition's observations, oldest
// first; the last one is the latest poll. Like Burrow, trends (stall, warn)
// are judged only over a full window, and a window in which lag touched zero
// is healthy: the consumer caught up at least once.
func judge(obs []observation, window int) verdict {
	last := obs[len(obs)-1]
	v := verdict{status: queue.StatusOK, lag: last.lag, hasCommit: last.hasCommit}
	if last.lag == 0 {
		return v
	}
	if last.members == 0 {
		v.status, v.span = queue.StatusStop, memberlessFor(obs)
		return v
	}
	moved, touchedZero := false, false
	for i := 1; i < len(obs); i++ {
		a, b := obs[i-1], obs[i]
		switch {
		case a.hasCommit && b.hasCommit && b.committed < a.committed:
			v.back = max(v.back, a.committed-b.committed)
		case b.hasCommit && (!a.hasCommit || b.committed > a.committed):
			moved = true
		}
		touchedZero = touchedZero || a.lag == 0
	}
	switch {
	case v.back > 0:
		v.status = queue.StatusRewind
	case len(obs) < window || touchedZero:
		// Too little history to tell a trend from noise, or caught up
		// within the window.
	case !moved:
		v.status, v.span = queue.StatusStall, last.time.Sub(obs[0].time)
	case lagRising(obs):
		v.status, v.polls = queue.StatusWarn, len(obs)
	}
	return v
}

// memberlessFor is how long the trailing run of polls without members lasts.
func memberlessFor(obs []observation) time.Duration {
	first := len(obs) - 1
	for first > 0 && obs[first-1].members == 0 {
		first--
	}
	return obs[len(obs)-1].time.Sub(obs[first].time)
}

// lagRising reports whether lag grew across the window: it never dipped
// below where the window started and ended higher by more than a tenth of
// what was produced meanwhile. Unlike Burrow, which sees lag at each commit,
// polls see a consumer's bursts, so a dip between them is not required to
// be absent; the margin keeps a healthy consumer whose small lag follows a
// rising produce rate from being flagged (it reads over 90% of what arrives).
func lagRising(obs []observation) bool {
	first, last := obs[0], obs[len(obs)-1]
	for _, o := range obs[1:] {
		if o.lag < first.lag {
			return false
		}
	}
	return (last.lag-first.lag)*10 > last.end-first.end
}

// weight orders partitions of the same status: the one with the biggest
// problem names the group's reason.
func (v verdict) weight() int64 {
	if v.status == queue.StatusRewind {
		return v.back
	}
	return v.lag
}

// reason is the group's status sentence when v is its worst partition and
// same other partitions share v's status. totalLag is the group's lag.
func (v verdict) reason(totalLag int64, same int) string {
	var s string
	switch v.status {
	case queue.StatusStop:
		// Membership is group-wide, so the sentence is too.
		if v.span > 0 {
			return "no members for " + queue.HumanDuration(v.span) + ", lag " + queue.ExactCount(totalLag)
		}
		return "no members, lag " + queue.ExactCount(totalLag)
	case queue.StatusRewind:
		s = "committed offset went back by " + queue.ExactCount(v.back)
	case queue.StatusStall:
		if v.hasCommit {
			s = "committed offset has not moved for " + queue.HumanDuration(v.span)
		} else {
			s = "nothing committed for " + queue.HumanDuration(v.span)
		}
		s += " while lag is " + queue.ExactCount(v.lag)
	case queue.StatusWarn:
		s = "lag rising for " + strconv.Itoa(v.polls) + " polls"
	default:
		return ""
	}
	s += " on " + v.topic + "/" + strconv.Itoa(int(v.partition))
	switch same {
	case 0:
	case 1:
		s += " and 1 more partition"
	default:
		s += " and " + strconv.Itoa(same) + " more partitions"
	}
	return s
}
