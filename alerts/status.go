package alerts

import (
	"cmp"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/queuewatch/queuewatch/config"
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
	// HysteresisPolls is how many polls in a row must judge a reader's new
	// status before an Evaluator shows it (hysteresis.go):
	// config.DefaultHysteresisPolls when 0 or negative, 1 for none.
	HysteresisPolls int
	// HeadroomLow is the retention headroom below which a reader that is
	// otherwise ok is warn (config.Alerts.RetentionHeadroomLow; an hour
	// when 0 or negative).
	HeadroomLow time.Duration
}

func (o StatusOptions) headroomLow() time.Duration {
	if o.HeadroomLow <= 0 {
		return time.Hour
	}
	return o.HeadroomLow
}

func (o StatusOptions) hysteresis() int {
	if o.HysteresisPolls <= 0 {
		return config.DefaultHysteresisPolls
	}
	return o.HysteresisPolls
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

// Evaluate fills the Status and StatusReason of every reader in latest
// (consumer and share groups, JetStream consumers, RabbitMQ and SQS
// queues, outbox tables and replication slots) and each group's ETA from
// history, the earlier snapshots of the same source, oldest first and not
// including latest. It mutates latest only. Callers that evaluate every poll
// should keep an Evaluator instead, which remembers the window itself and
// the statuses it showed: Evaluate has none, so it shows each reader's
// judgement as it is, without hysteresis.
func Evaluate(history []*queue.Snapshot, latest *queue.Snapshot, opts StatusOptions) {
	if latest == nil {
		return
	}
	e := NewEvaluator(opts)
	key := keyOf(latest)
	for _, s := range history {
		if s != nil && s != latest && keyOf(s) == key && s.Time.Before(latest.Time) {
			e.polls[key] = e.remember(e.polls[key], s)
			e.learn(s)
		}
	}
	e.Evaluate(latest)
}

// learn has e judge a copy of s, an earlier poll, for what the readers
// judged against the read before (share and streams groups, SQS queues,
// Kinesis applications) keep of it, leaving s as it is.
func (e *Evaluator) learn(s *queue.Snapshot) {
	c := *s
	c.ShareGroups, c.SQSQueues = slices.Clone(s.ShareGroups), slices.Clone(s.SQSQueues)
	c.StreamsGroups, c.KinesisApps = slices.Clone(s.StreamsGroups), slices.Clone(s.KinesisApps)
	e.evaluateShares(&c)
	e.evaluateStreams(&c)
	e.evaluateSQS(&c)
	e.evaluateKinesis(&c)
}

// Evaluator evaluates the successive snapshots of its sources and remembers
// of each only what status needs later: per partition its offsets and lag,
// per group its member count, the small NATS and outbox parts, and the
// last read of share groups and SQS queues. A window
// of ten polls of 100,000 group-partitions so costs about 5 MB a poll rather
// than the 15 MB of a snapshot. It is safe for concurrent use, though calls
// are serialized.
type Evaluator struct {
	window, hysteresis int
	headroomLow        time.Duration

	mu    sync.Mutex
	polls map[sourceKey][]pastPoll // per source, oldest first, at most window-1
	// Scratch space reused across calls, so that evaluation does not
	// allocate per group or partition.
	past []*queue.Snapshot // the window's polls without their groups, oldest first
	idx  []map[string]*pastGroup
	refs []*pastGroup // the evaluated group in each of past
	obs  []observation

	// onsets are the onsets of each source's readers (onset.go), kept in
	// store when it is set; on is the evaluated source's while evaluation
	// runs, nil when its onsets are left as they are (a failed poll).
	onsets map[sourceKey]*sourceOnsets
	on     *sourceOnsets
	store  OnsetStore
	log    *slog.Logger
	// held are the hysteresis holds of each source's readers
	// (hysteresis.go); holds is the evaluated source's while evaluation
	// runs, nil when statuses are shown as judged (a failed poll).
	held  map[sourceKey]*sourceHolds
	holds *sourceHolds
	// shares are the share groups of each source as the last poll read
	// them (share.go), sqs the account reads of each SQS source (sqs.go):
	// both are judged against the read before, not over the window.
	shares map[sourceKey]shareReads
	// streams are the streams groups of each source as the last poll
	// read them (streams.go), judged like share groups.
	streams map[sourceKey]streamsReads
	sqs     map[sourceKey]*sqsReads
	// kinesis are the account reads of each Kinesis source (kinesis.go).
	kinesis map[sourceKey]*kinesisReads
}

// NewEvaluator returns an Evaluator with the given options.
func NewEvaluator(opts StatusOptions) *Evaluator {
	return &Evaluator{window: opts.window(), hysteresis: opts.hysteresis(), headroomLow: opts.headroomLow(), polls: make(map[sourceKey][]pastPoll)}
}

// sourceKey names a source: cluster names are unique per broker only.
type sourceKey struct {
	broker  queue.Broker
	cluster string
}

func keyOf(s *queue.Snapshot) sourceKey { return sourceKey{s.Broker, s.Cluster} }

// pastPoll is what the window keeps of one poll.
type pastPoll struct {
	// rest is the snapshot without its groups and partitions: its time and
	// the NATS and outbox parts, which are small.
	rest   *queue.Snapshot
	groups map[string]*pastGroup
}

// pastGroup is a group as a past poll saw it.
type pastGroup struct {
	members int
	topics  []string        // the distinct topics of parts
	parts   []pastPartition // in the snapshot's order
	// sorted records whether parts are in (topic, partition) order, which
	// permits binary search.
	sorted bool
}

// pastPartition is the part of a queue.PartitionLag status reads, in 32
// bytes: a poll of the status window keeps one per group-partition (18,000
// at 500 groups), so the window is most of queuewatch's live heap. The
// topic is an index into its group's topics; committed is -1 without a
// commit.
type pastPartition struct {
	committed, end, lag int64
	partition           int32
	topic               uint32
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

// Evaluate fills Status, StatusReason and ETA of every group (and the status
// of every other reader) in latest from the last Window-1 polls of its
// source this Evaluator saw before it (share groups and SQS queues from
// the read before), then remembers latest. A poll
// that failed as a whole is evaluated as an error and not remembered. It
// mutates latest only.
func (e *Evaluator) Evaluate(latest *queue.Snapshot) { e.evaluate(latest, false) }

// Complete is Evaluate for the poll run at once after the previous one of
// its source, to fill what that one left pending (Kafka lag seconds, NATS
// lag seconds after a start): it is evaluated without that poll and takes
// its place, so the window spans polling intervals.
func (e *Evaluator) Complete(latest *queue.Snapshot) { e.evaluate(latest, true) }

func (e *Evaluator) evaluate(latest *queue.Snapshot, completes bool) {
	if latest == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.polls == nil { // zero Evaluator
		e.window, e.hysteresis, e.headroomLow = StatusOptions{}.window(), StatusOptions{}.hysteresis(), StatusOptions{}.headroomLow()
		e.polls = make(map[sourceKey][]pastPoll)
	}
	key := keyOf(latest)
	polls := e.polls[key]
	if n := len(polls); completes && n > 0 {
		polls = polls[:n-1]
	}
	e.selectWindow(polls, latest)
	if latest.Err == nil {
		// A poll that failed as a whole says nothing of its readers'
		// conditions: their onsets stay as they were.
		e.on = e.onsetsOf(key)
		e.holds = e.holdsOf(key, completes)
	}
	for i := range latest.Groups {
		e.evaluateGroup(latest, &latest.Groups[i])
	}
	evaluateOutbox(e.past, latest, e.window, e.settle)
	e.evaluateConsumers(latest)
	e.evaluateQueues(latest)
	e.evaluateShares(latest)
	e.evaluateStreams(latest)
	e.evaluateConnectors(latest)
	e.evaluateSQS(latest)
	e.evaluateKinesis(latest)
	e.evaluatePubSub(latest)
	if e.on != nil {
		put, del := e.on.finish(len(e.past) >= e.window-1)
		e.save(key, e.on, put, del)
		e.holds.finish()
		e.on, e.holds = nil, nil
	}
	e.polls[key] = e.remember(polls, latest)
	// The scratch space must not keep a poll alive once it left the window.
	clear(e.past[:cap(e.past)])
	clear(e.idx[:cap(e.idx)])
	clear(e.refs[:cap(e.refs)])
}

// selectWindow picks the last window-1 polls taken before latest into e.past
// and their groups into e.idx.
func (e *Evaluator) selectWindow(polls []pastPoll, latest *queue.Snapshot) {
	e.past, e.idx = e.past[:0], e.idx[:0]
	for i := len(polls) - 1; i >= 0 && len(e.past) < e.window-1; i-- {
		if p := polls[i]; p.rest.Time.Before(latest.Time) {
			e.past = append(e.past, p.rest)
			e.idx = append(e.idx, p.groups)
		}
	}
	slices.Reverse(e.past)
	slices.Reverse(e.idx)
}

// remember appends what the window needs of s to polls, keeping the last
// window-1.
func (e *Evaluator) remember(polls []pastPoll, s *queue.Snapshot) []pastPoll {
	if s.Err != nil {
		return polls
	}
	rest := *s
	rest.Groups, rest.Partitions, rest.Queues, rest.DLQs = nil, nil, pastQueues(s.Queues), nil
	polls = append(polls, pastPoll{rest: &rest, groups: pastGroups(s)})
	if keep := e.window - 1; len(polls) > keep {
		// Copy rather than reslice, so the dropped polls can be freed.
		polls = append([]pastPoll(nil), polls[len(polls)-keep:]...)
	}
	return polls
}

func pastGroups(s *queue.Snapshot) map[string]*pastGroup {
	groups := make(map[string]*pastGroup, len(s.Groups))
	for i := range s.Groups {
		g := &s.Groups[i]
		if g.Err != "" {
			// A group that could not be read has no observations to give.
			continue
		}
		pg := &pastGroup{members: g.Members, parts: make([]pastPartition, len(g.Partitions))}
		for j := range g.Partitions {
			p := &g.Partitions[j]
			committed := p.Committed
			if !p.HasCommit || committed < 0 {
				committed = -1
			}
			pg.parts[j] = pastPartition{
				topic: pg.topicIndex(p.Topic), partition: p.Partition, committed: committed, end: p.End, lag: p.Lag,
			}
		}
		pg.sorted = slices.IsSortedFunc(pg.parts, func(a, b pastPartition) int { return pg.compare(a, pg.topics[b.topic], b.partition) })
		groups[g.Name] = pg
	}
	return groups
}

// topicIndex is topic's index in g.topics, added when new. Partitions come
// grouped by topic, so the last topic is nearly always the one.
func (g *pastGroup) topicIndex(topic string) uint32 {
	for i := len(g.topics) - 1; i >= 0; i-- {
		if g.topics[i] == topic {
			return uint32(i)
		}
	}
	g.topics = append(g.topics, topic)
	return uint32(len(g.topics) - 1)
}

// compare orders p against topic/partition.
func (g *pastGroup) compare(p pastPartition, topic string, partition int32) int {
	return cmp.Or(strings.Compare(g.topics[p.topic], topic), cmp.Compare(p.partition, partition))
}

// evaluateGroup sets g's status, reason and ETA.
func (e *Evaluator) evaluateGroup(latest *queue.Snapshot, g *queue.ConsumerGroup) {
	switch {
	case latest.Err != nil:
		e.setError(latest, g, latest.Err.Error())
		return
	case g.Err != "":
		e.setError(latest, g, g.Err)
		return
	}
	e.refs = e.refs[:0]
	for _, groups := range e.idx {
		e.refs = append(e.refs, groups[g.Name])
	}

	var (
		worst verdict
		same  int // other partitions sharing worst's status
		r     rates
	)
	g.Judged = nil // a snapshot evaluated again starts over
	for i := range g.Partitions {
		obs := e.observe(latest.Time, g, i)
		r.add(obs)
		v := judge(obs, e.window)
		v.topic, v.partition = g.Partitions[i].Topic, g.Partitions[i].Partition
		g.Judged = v.appendJudged(g.Judged)
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
	sortJudged(g.Judged)
	total := g.TotalLag()
	raw, reason := e.withHeadroom(cmp.Or(worst.status, queue.StatusOK), g.Headroom, "record", func(since time.Time) string {
		worst.since, worst.now = since, latest.Time
		return worst.reason(total, same)
	})
	g.Status, g.StatusSince, g.StatusReason = e.settle(groupOnset(g.Name), raw, latest.Time.Add(-worst.span), latest.Time, reason)
	g.ETA = r.eta(total)
}

func (e *Evaluator) setError(latest *queue.Snapshot, g *queue.ConsumerGroup, reason string) {
	g.Judged = nil
	g.ETA = queue.ETA{}
	g.Status, g.StatusSince, g.StatusReason = e.settle(groupOnset(g.Name), queue.StatusError, latest.Time, latest.Time,
		func(time.Time) string { return reason })
}

// since returns the onset of reader's condition, status, which began at
// start as far as the window shows (see onset.go): zero when the reader
// is ok, or while onsets are left as they are.
func (e *Evaluator) since(reader string, status queue.Status, start time.Time) time.Time {
	if e.on == nil {
		return time.Time{}
	}
	return e.on.see(reader, status, start)
}

// observe returns the window of partition i of g: its observations in the
// past polls that have it, then the latest one.
func (e *Evaluator) observe(now time.Time, g *queue.ConsumerGroup, i int) []observation {
	p := &g.Partitions[i]
	e.obs = e.obs[:0]
	for k, pg := range e.refs {
		if pg == nil {
			continue
		}
		if pp := pg.find(i, p.Topic, p.Partition); pp != nil {
			e.obs = append(e.obs, observation{
				time: e.past[k].Time, committed: pp.committed, hasCommit: pp.committed >= 0,
				end: pp.end, lag: pp.lag, members: pg.members,
			})
		}
	}
	return append(e.obs, observation{
		time: now, committed: p.Committed, hasCommit: p.HasCommit && p.Committed >= 0,
		end: p.End, lag: p.Lag, members: g.Members,
	})
}

// find returns the group's partition topic/partition, trying index hint
// first: partitions rarely change between polls, so they line up.
func (g *pastGroup) find(hint int, topic string, partition int32) *pastPartition {
	ps := g.parts
	if hint < len(ps) && ps[hint].partition == partition && g.topics[ps[hint].topic] == topic {
		return &ps[hint]
	}
	if g.sorted {
		i, ok := slices.BinarySearchFunc(ps, partition, func(p pastPartition, partition int32) int { return g.compare(p, topic, partition) })
		if ok {
			return &ps[i]
		}
		return nil
	}
	for i := range ps {
		if ps[i].partition == partition && g.topics[ps[i].topic] == topic {
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
	// span is how long the condition has lasted within the window: no
	// members for stop, no movement for stall, the window for warn.
	span time.Duration
	// since is the condition's onset, which may be before the window
	// (onset.go), and now the latest poll's time; the sentence says the
	// duration from the onset. A zero since falls back to span.
	since, now time.Time
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
		v.status, v.polls, v.span = queue.StatusWarn, len(obs), last.time.Sub(obs[0].time)
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

// appendJudged appends v to judged when its partition is not ok: the
// group's culprits and the partition table's statuses come from it.
func (v verdict) appendJudged(judged []queue.PartitionStatus) []queue.PartitionStatus {
	if v.status == queue.StatusOK {
		return judged
	}
	return append(judged, queue.PartitionStatus{
		Topic: v.topic, Partition: v.partition, Status: v.status,
		Lag: v.lag, Back: v.back, Polls: int32(min(v.polls, math.MaxInt32)), HasCommit: v.hasCommit,
	})
}

// sortJudged puts the worst partitions first: by severity, then by the
// weight that names a group's reason, then in partition order.
func sortJudged(judged []queue.PartitionStatus) {
	slices.SortStableFunc(judged, func(a, b queue.PartitionStatus) int {
		if c := cmp.Compare(b.Status.Severity(), a.Status.Severity()); c != 0 {
			return c
		}
		return cmp.Compare(judgedWeight(b), judgedWeight(a))
	})
}

func judgedWeight(p queue.PartitionStatus) int64 {
	if p.Status == queue.StatusRewind {
		return p.Back
	}
	return p.Lag
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
		if d := v.lasted(); d != "" {
			return "no members " + d + ", lag " + queue.ExactCount(totalLag)
		}
		return "no members, lag " + queue.ExactCount(totalLag)
	case queue.StatusRewind:
		s = "committed offset went back by " + queue.ExactCount(v.back)
	case queue.StatusStall:
		if v.hasCommit {
			s = "committed offset has not moved " + v.lasted()
		} else {
			s = "nothing committed " + v.lasted()
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

// lasted says how long v's condition has lasted: "since 05:09 UTC (1h
// 14m)" from its onset, "for 2m" within the window when the onset is not
// known, or "" when it began at this poll.
func (v verdict) lasted() string {
	switch {
	case !v.since.IsZero() && v.since.Before(v.now):
		return queue.HumanSince(v.since, v.now)
	case v.since.IsZero() && v.span > 0:
		return "for " + queue.HumanDuration(v.span)
	}
	return ""
}
