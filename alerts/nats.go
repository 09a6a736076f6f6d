package alerts

import (
	"strconv"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// JetStream consumers are judged with the group vocabulary, on the facts a
// consumer's info gives, from the most to the least severe:
//
//   - stop: a push consumer with pending messages and no subscriber bound to
//     its deliver subject: nobody receives anything;
//   - stall: num_ack_pending reached max_ack_pending with messages pending
//     (the server delivers nothing more until some are acked); the
//     delivered sequence outside the stream's range (past its last
//     sequence after a purge or re-creation, or below its first, the
//     backlog removed by limits before delivery); a pull consumer with
//     pending messages, no pull request waiting and no delivery over a
//     full window;
//   - warn: pending rising over a full window, by the same rule as a
//     group's lag (never below where the window began, up by more than a
//     tenth of what was stored meanwhile);
//   - error: the consumer could not be read.
//
// Trends, as for groups, are judged only over a full window, and a window
// in which pending touched zero is healthy.

// consumerKey names a consumer within a cluster.
type consumerKey struct{ stream, name string }

// consumerObs is one consumer as seen by one poll.
type consumerObs struct {
	time      time.Time
	pending   uint64
	delivered uint64
	waiting   int
	bound     bool
	// lastSeq is the stream's last sequence: what was stored, for warn.
	lastSeq uint64
	// ackFloor is the stream sequence below which every message is
	// acknowledged: what was consumed, for the rates.
	ackFloor uint64
}

// evaluateConsumers fills Status and StatusReason of every consumer in
// latest from the window e.selectWindow chose. Past consumers are indexed
// per call: a few thousand map entries per poll, small next to the poll.
func (e *Evaluator) evaluateConsumers(latest *queue.Snapshot) {
	if len(latest.Consumers) == 0 {
		return
	}
	past := make([]map[consumerKey]consumerObs, len(e.past))
	for i, s := range e.past {
		past[i] = indexConsumers(s)
	}
	streams := lastSeqs(latest)
	var obs []consumerObs
	for i := range latest.Consumers {
		c := &latest.Consumers[i]
		switch {
		case latest.Err != nil:
			c.Status, c.StatusReason = queue.StatusError, latest.Err.Error()
			continue
		case c.Err != "":
			c.Status, c.StatusReason = queue.StatusError, c.Err
			continue
		}
		obs = obs[:0]
		k := consumerKey{c.Stream, c.Name}
		for _, ix := range past {
			if o, ok := ix[k]; ok {
				obs = append(obs, o)
			}
		}
		st := streams[c.Stream]
		obs = append(obs, observeConsumer(latest.Time, c, st.LastSeq))
		c.ETA = consumerRates(c, obs).eta(int64(min(c.Pending, 1<<63-1)))
		j := judgeConsumer(c, st, obs, e.window)
		raw, reason := e.withHeadroom(j.status, c.Headroom, "message", func(since time.Time) string { return j.reason(since, latest.Time) })
		c.Status, c.StatusSince, c.StatusReason = e.settle(consumerOnset(c.Stream, c.Name), raw, j.start, latest.Time, reason)
	}
	for i := range latest.Consumers {
		if c := &latest.Consumers[i]; c.Status == queue.StatusError {
			reason := c.StatusReason
			c.Status, c.StatusSince, _ = e.settle(consumerOnset(c.Stream, c.Name), c.Status, latest.Time, latest.Time,
				func(time.Time) string { return reason })
		}
	}
}

// consumerVerdict is a consumer's status, when its condition began as far
// as the window shows, and its sentence given the condition's onset.
type consumerVerdict struct {
	status queue.Status
	start  time.Time
	// lasting is the sentence around how long the condition lasted:
	// lasting(" since 05:09 UTC (1h 14m)"); nil when it says no duration.
	lasting func(d string) string
	fixed   string
}

// reason is v's sentence, the condition having begun at since (zero when
// not known) and lasted until now.
func (v consumerVerdict) reason(since, now time.Time) string {
	if v.lasting == nil {
		return v.fixed
	}
	switch {
	case !since.IsZero() && since.Before(now):
		return v.lasting(" " + queue.HumanSince(since, now))
	case since.IsZero():
		return v.lasting(forSpan(now.Sub(v.start)))
	}
	return v.lasting("")
}

func lastSeqs(s *queue.Snapshot) map[string]queue.Stream {
	out := make(map[string]queue.Stream, len(s.Streams))
	for _, st := range s.Streams {
		out[st.Name] = st
	}
	return out
}

func indexConsumers(s *queue.Snapshot) map[consumerKey]consumerObs {
	streams := lastSeqs(s)
	ix := make(map[consumerKey]consumerObs, len(s.Consumers))
	for i := range s.Consumers {
		c := &s.Consumers[i]
		if c.Err != "" {
			continue
		}
		ix[consumerKey{c.Stream, c.Name}] = observeConsumer(s.Time, c, streams[c.Stream].LastSeq)
	}
	return ix
}

func observeConsumer(t time.Time, c *queue.StreamConsumer, lastSeq uint64) consumerObs {
	return consumerObs{time: t, pending: c.Pending, delivered: c.DeliveredSeq, waiting: c.Waiting, bound: c.PushBound, lastSeq: lastSeq, ackFloor: c.AckFloorSeq}
}

// judgeConsumer applies the rules above to c, whose stream is st, over its
// observations (oldest first, the latest last).
func judgeConsumer(c *queue.StreamConsumer, st queue.Stream, obs []consumerObs, window int) consumerVerdict {
	pending := queue.ExactCount(int64(c.Pending))
	full := len(obs) >= window
	now := obs[len(obs)-1].time
	fixed := func(s queue.Status, reason string) consumerVerdict {
		return consumerVerdict{status: s, start: now, fixed: reason}
	}
	switch {
	case !c.Pull && !c.PushBound && c.Pending > 0:
		span := trailing(obs, func(o consumerObs) bool { return !o.bound })
		return consumerVerdict{status: queue.StatusStop, start: now.Add(-span), lasting: func(d string) string {
			return "no subscriber bound to its deliver subject" + d + ", " + pending + " pending"
		}}
	case c.MaxAckPending > 0 && c.AckPending >= c.MaxAckPending && c.Pending > 0:
		return fixed(queue.StatusStall, "max_ack_pending reached: "+strconv.Itoa(c.AckPending)+
			" delivered messages unacknowledged, so nothing more is delivered while "+pending+" are pending")
	case st.Name != "" && c.DeliveredSeq > st.LastSeq:
		return fixed(queue.StatusStall, "delivered sequence "+strconv.FormatUint(c.DeliveredSeq, 10)+
			" is past the stream's last sequence "+strconv.FormatUint(st.LastSeq, 10)+
			" (purged or re-created): new messages up to it are skipped")
	case st.Name != "" && c.Pending > 0 && st.FirstSeq > c.DeliveredSeq+1:
		return fixed(queue.StatusStall, "delivered sequence "+strconv.FormatUint(c.DeliveredSeq, 10)+
			" is below the stream's first sequence "+strconv.FormatUint(st.FirstSeq, 10)+
			": "+queue.ExactCount(int64(st.FirstSeq-c.DeliveredSeq-1))+" messages were removed by the stream's limits before delivery")
	case c.Pending == 0 || !full || touchedZero(obs):
		return fixed(queue.StatusOK, "")
	case c.Pull && !deliveredMoved(obs) && trailing(obs, func(o consumerObs) bool { return o.waiting == 0 }) == now.Sub(obs[0].time):
		return consumerVerdict{status: queue.StatusStall, start: obs[0].time, lasting: func(d string) string {
			return "no pull request waiting and nothing delivered" + d + " while " + pending + " are pending"
		}}
	case pendingRising(obs):
		v := fixed(queue.StatusWarn, "pending rising for "+strconv.Itoa(len(obs))+" polls, now "+pending)
		v.start = obs[0].time
		return v
	}
	return fixed(queue.StatusOK, "")
}

// trailing is how long the trailing run of observations satisfying cond
// lasts (0 when only the latest does, or none).
func trailing(obs []consumerObs, cond func(consumerObs) bool) time.Duration {
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

func forSpan(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return " for " + queue.HumanDuration(d)
}

func touchedZero(obs []consumerObs) bool {
	for _, o := range obs {
		if o.pending == 0 {
			return true
		}
	}
	return false
}

func deliveredMoved(obs []consumerObs) bool {
	for _, o := range obs[1:] {
		if o.delivered != obs[0].delivered {
			return true
		}
	}
	return false
}

// pendingRising is lagRising for a consumer: pending never dipped below
// where the window began and ended higher by more than a tenth of the
// messages the stream stored meanwhile.
func pendingRising(obs []consumerObs) bool {
	first, last := obs[0], obs[len(obs)-1]
	for _, o := range obs[1:] {
		if o.pending < first.pending {
			return false
		}
	}
	return last.pending > first.pending && (last.pending-first.pending)*10 > last.lastSeq-first.lastSeq
}

// consumerRates are a consumer's consume and produce rates over its
// window, from stream sequences its info and its stream's already give:
// produced is the stream's last sequence, consumed the consumer's ack
// floor. Both count the whole stream, so they are the consumer's own only
// when it has no filter subject; a filtered consumer's rates are unknown
// (queue.StreamConsumer.RatesUnknown says why). A sequence that went back
// (the stream re-created) starts the series again.
func consumerRates(c *queue.StreamConsumer, obs []consumerObs) rates {
	if c.RatesUnknown() != "" {
		return rates{}
	}
	from := 0
	for i := 1; i < len(obs); i++ {
		if obs[i].lastSeq < obs[i-1].lastSeq || obs[i].ackFloor < obs[i-1].ackFloor {
			from = i
		}
	}
	obs = obs[from:]
	if len(obs) < 2 {
		return rates{}
	}
	first, last := obs[0], obs[len(obs)-1]
	dt := last.time.Sub(first.time).Seconds()
	if dt <= 0 {
		return rates{}
	}
	produced := float64(last.lastSeq - first.lastSeq)
	return rates{
		consume: float64(last.ackFloor-first.ackFloor) / dt, produce: produced / dt,
		perPoll: produced / float64(len(obs)-1), partitions: 1,
	}
}
