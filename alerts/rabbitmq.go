package alerts

import (
	"net/url"
	"strconv"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// RabbitMQ queues are judged by their consumers with the group vocabulary,
// from the facts one /api/queues listing gives (no request of their own),
// from the most to the least severe:
//
//   - stop: ready messages and no consumer: nobody receives anything (the
//     shipped rule QueuewatchRabbitMQQueueNoConsumers fires on the same);
//   - stall: consumers attached, ready messages over a full window that
//     never touched zero, and neither the deliveries nor the
//     acknowledgements counted in message_stats moved over it: the
//     consumers hold their prefetch and finish nothing;
//   - warn: ready rising over a full window, by the same rule as a group's
//     lag (never below where the window began, up by more than a tenth
//     of what was published meanwhile);
//
// and ok otherwise. A queue that is a DLQ is ok with queue.DLQReason (see
// queue.Snapshot.JudgedAsReader). The management API refreshes
// message_stats every statsInterval, so stall is judged only over a
// window at least twice that long: a shorter one may not see the counters
// move though messages flow.
const statsInterval = 5 * time.Second

// plainSpan is how long a window must span for a counter that changed at
// most once in it to give a rate (see stepRate): six refreshes, so that
// one refresh more or less is at most a sixth of the count.
const plainSpan = 6 * statsInterval

// queueKey names a queue within a cluster.
type queueKey struct{ vhost, name string }

// queueObs is one queue as seen by one poll.
type queueObs struct {
	time        time.Time
	ready       int64
	consumers   int
	counters    queue.MessageCounters
	hasCounters bool
	// countersAt is when the counters were read: the poll's time, or the
	// last listing's when the poll took only depths from rabbitmq_prometheus.
	countersAt time.Time
}

// pastQueues is what the window keeps of a poll's queues: no arguments or
// policies, which status does not read.
func pastQueues(qs []queue.Queue) []queue.Queue {
	if len(qs) == 0 {
		return nil
	}
	out := make([]queue.Queue, len(qs))
	for i := range qs {
		q := &qs[i]
		out[i] = queue.Queue{
			VHost: q.VHost, Name: q.Name, Ready: q.Ready, Consumers: q.Consumers,
			Counters: q.Counters, HasCounters: q.HasCounters, CountersAt: q.CountersAt,
		}
	}
	return out
}

func observeQueue(t time.Time, q *queue.Queue) queueObs {
	at := q.CountersAt
	if at.IsZero() {
		at = t
	}
	return queueObs{time: t, ready: q.Ready, consumers: q.Consumers, counters: q.Counters, hasCounters: q.HasCounters, countersAt: at}
}

// evaluateQueues fills Status, StatusReason, StatusSince and ETA of every
// RabbitMQ queue in latest from the window e.selectWindow chose.
func (e *Evaluator) evaluateQueues(latest *queue.Snapshot) {
	if len(latest.Queues) == 0 || latest.Err != nil {
		return
	}
	past := make([]map[queueKey]queueObs, len(e.past))
	for i, s := range e.past {
		ix := make(map[queueKey]queueObs, len(s.Queues))
		for j := range s.Queues {
			q := &s.Queues[j]
			ix[queueKey{q.VHost, q.Name}] = observeQueue(s.Time, q)
		}
		past[i] = ix
	}
	var obs []queueObs
	for i := range latest.Queues {
		q := &latest.Queues[i]
		obs = obs[:0]
		for _, ix := range past {
			if o, ok := ix[queueKey{q.VHost, q.Name}]; ok {
				obs = append(obs, o)
			}
		}
		obs = append(obs, observeQueue(latest.Time, q))
		q.ETA = queueRates(obs).eta(q.Ready)
		if !latest.JudgedAsReader(q.VHost, q.Name) {
			q.Status, q.StatusReason, q.StatusSince = queue.StatusOK, queue.DLQReason, time.Time{}
			continue
		}
		j := judgeQueue(q, obs, e.window)
		raw, reason := e.withHeadroom(j.status, q.RetentionHeadroom(), "message", func(since time.Time) string { return j.reason(since, latest.Time) })
		q.Status, q.StatusSince, q.StatusReason = e.settle(queueOnset(q.VHost, q.Name), raw, j.start, latest.Time, reason)
	}
}

// queueOnset names a queue in onsets; the vhost is escaped, as in IDs.
func queueOnset(vhost, name string) string { return "queue:" + url.PathEscape(vhost) + "/" + name }

// judgeQueue applies the rules above to q over its observations (oldest
// first, the latest last).
func judgeQueue(q *queue.Queue, obs []queueObs, window int) consumerVerdict {
	ready := queue.ExactCount(q.Ready)
	now := obs[len(obs)-1].time
	fixed := func(s queue.Status, reason string) consumerVerdict {
		return consumerVerdict{status: s, start: now, fixed: reason}
	}
	// The counters' own span: polls between listings carry a listing's
	// counters, and unchanged counters prove nothing over less than two
	// statistics refreshes.
	span := obs[len(obs)-1].countersAt.Sub(obs[0].countersAt)
	switch {
	case q.Ready > 0 && q.Consumers == 0:
		since := trailingQueue(obs, func(o queueObs) bool { return o.consumers == 0 })
		return consumerVerdict{status: queue.StatusStop, start: now.Add(-since), lasting: func(d string) string {
			return "no consumer" + d + ", " + ready + " ready"
		}}
	case q.Ready == 0 || len(obs) < window || readyTouchedZero(obs):
		return fixed(queue.StatusOK, "")
	case span >= 2*statsInterval && countersStill(obs):
		return consumerVerdict{status: queue.StatusStall, start: obs[0].time, lasting: func(d string) string {
			return consumersWord(q.Consumers) + " attached and nothing delivered or acknowledged" + d + " while " + ready + " are ready"
		}}
	case readyRising(obs):
		v := fixed(queue.StatusWarn, "ready messages rising for "+strconv.Itoa(len(obs))+" polls, now "+ready)
		v.start = obs[0].time
		return v
	}
	return fixed(queue.StatusOK, "")
}

func consumersWord(n int) string {
	if n == 1 {
		return "1 consumer"
	}
	return strconv.Itoa(n) + " consumers"
}

// trailingQueue is trailing for queue observations.
func trailingQueue(obs []queueObs, cond func(queueObs) bool) time.Duration {
	last := len(obs) - 1
	if !cond(obs[last]) {
		return 0
	}
	first := last
	for first > 0 && cond(obs[first-1]) {
		first--
	}
	return obs[last].time.Sub(obs[first].time)
}

func readyTouchedZero(obs []queueObs) bool {
	for _, o := range obs {
		if o.ready == 0 {
			return true
		}
	}
	return false
}

// countersStill reports whether every observation has counters and
// neither deliveries nor acknowledgements moved over them. Without
// counters nothing is known, so nothing is stalled.
func countersStill(obs []queueObs) bool {
	for _, o := range obs {
		if !o.hasCounters || o.counters.Delivered != obs[0].counters.Delivered || o.counters.Consumed != obs[0].counters.Consumed {
			return false
		}
	}
	return true
}

// readyRising is lagRising for a queue: ready never dipped below where the
// window began and ended higher by more than a tenth of what was published
// meanwhile (by any rise at all when the counters are unknown).
func readyRising(obs []queueObs) bool {
	first, last := obs[0], obs[len(obs)-1]
	for _, o := range obs[1:] {
		if o.ready < first.ready {
			return false
		}
	}
	if last.ready <= first.ready {
		return false
	}
	if !first.hasCounters || !last.hasCounters || last.counters.Published < first.counters.Published {
		return true
	}
	return (last.ready-first.ready)*10 > last.counters.Published-first.counters.Published
}

// queueRates are a queue's consume and produce rates over its window, from
// the message_stats counters of its polls (consumed: acknowledged or
// taken without ack; produced: published), for its ETA.
func queueRates(obs []queueObs) rates {
	// Only the run since the counters were last missing or restarted (the
	// queue re-created, its node restarted) is one series.
	from := 0
	for i := 1; i < len(obs); i++ {
		p, o := obs[i-1].counters, obs[i].counters
		if !obs[i].hasCounters || !obs[i-1].hasCounters || o.Published < p.Published || o.Consumed < p.Consumed {
			from = i
		}
	}
	obs = obs[from:]
	if len(obs) < 2 || !obs[0].hasCounters {
		return rates{}
	}
	times := make([]time.Time, len(obs))
	pub, con := make([]int64, len(obs)), make([]int64, len(obs))
	for i, o := range obs {
		times[i], pub[i], con[i] = o.countersAt, o.counters.Published, o.counters.Consumed
	}
	produce, ok1 := stepRate(times, pub)
	consume, ok2 := stepRate(times, con)
	if !ok1 || !ok2 {
		return rates{}
	}
	return rates{
		consume: consume, produce: produce, partitions: 1,
		perPoll: float64(pub[len(pub)-1]-pub[0]) / float64(len(obs)-1),
	}
}

// stepRate is the rate of a counter the broker refreshes in steps (every
// statsInterval for RabbitMQ's message_stats), read by polls at times.
// A poll sees the value of the last refresh, up to a refresh interval old,
// so the count between two polls is off by up to that interval's worth;
// measured between the polls that first saw the first and the last change
// in the window, the error is at most one polling interval at each end
// instead, which is smaller when polls come faster than refreshes. Without
// two changes it is the plain delta over the window (0 when nothing
// changed), but only once the window spans plainSpan: over a shorter one
// a single refresh would be most of the count, and the rate is not known.
//
// Worked example: polls every 1 s read 0, 0, 50, 50, 50, 50, 50, 300:
// the first change is seen at 2 s and the last at 7 s, so 250 in 5 s is
// 50/s (the plain delta, 300 in 7 s, would say 43/s).
func stepRate(times []time.Time, vals []int64) (float64, bool) {
	n := len(vals)
	if n < 2 {
		return 0, false
	}
	first, last := -1, -1
	for i := 1; i < n; i++ {
		if vals[i] != vals[i-1] {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	a, b := 0, n-1
	switch {
	case first >= 0 && last > first:
		a, b = first, last
	case times[b].Sub(times[a]) < plainSpan:
		return 0, false
	}
	dt := times[b].Sub(times[a]).Seconds()
	if dt <= 0 {
		return 0, false
	}
	return float64(vals[b]-vals[a]) / dt, true
}
