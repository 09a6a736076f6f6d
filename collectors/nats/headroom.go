package nats

import (
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// fillHeadroom sets each consumer's retention headroom from its stream's
// limits: the soonest of
//
//   - max_age less the age of the next message the consumer has not been
//     delivered (its lag seconds);
//   - with max_msgs or max_bytes and discard: old, the messages the stream
//     holds before that one over the rate at which the stream's first
//     sequence gains on the consumer's (the first sequence's rate less
//     the consumer's), from the trend across polls: a projection.
//
// A consumer with nothing pending has no headroom: nothing of its can be
// lost. Messages delivered and not yet acknowledged are left out: the
// backlog, like the lag seconds, is what was not delivered.
func (s *Source) fillHeadroom(snap *queue.Snapshot, now time.Time) {
	streams := make(map[string]*queue.Stream, len(snap.Streams))
	firsts := make(map[string]float64, len(snap.Streams))
	nextFirsts := make(map[string]*queue.Trend, len(snap.Streams))
	for i := range snap.Streams {
		st := &snap.Streams[i]
		streams[st.Name] = st
		if !sizeLimited(st) {
			continue
		}
		t := s.firsts[st.Name]
		if t == nil {
			t = &queue.Trend{}
		}
		nextFirsts[st.Name] = t
		if rate, ok := t.Observe(now, int64(min(st.FirstSeq, 1<<63-1))); ok {
			firsts[st.Name] = rate
		}
	}
	s.firsts = nextFirsts
	nextReads := map[[2]string]*queue.Trend{}
	for i := range snap.Consumers {
		c := &snap.Consumers[i]
		st, ok := streams[c.Stream]
		if !ok || c.Err != "" || c.Pending == 0 {
			continue
		}
		var h queue.Headroom
		if st.MaxAge > 0 && c.HasLagSeconds {
			h = queue.AgeHeadroom(st.MaxAge, time.Duration(c.LagSeconds*float64(time.Second)), "max_age")
		}
		if sizeLimited(st) {
			k := [2]string{c.Stream, c.Name}
			t := s.reads[k]
			if t == nil {
				t = &queue.Trend{}
			}
			nextReads[k] = t
			next := max(c.DeliveredSeq+1, st.FirstSeq)
			read, ok := t.Observe(now, int64(min(next, 1<<63-1)))
			if first, known := firsts[c.Stream]; ok && known {
				h = h.Sooner(queue.ProjectedHeadroom(int64(next-st.FirstSeq), first-max(read, 0), sizeLimit(st)))
			}
		}
		c.Headroom = h
	}
	s.reads = nextReads
}

// sizeLimited reports whether st deletes its oldest messages when it is
// full: a count or size limit with discard: old.
func sizeLimited(st *queue.Stream) bool {
	return st.DiscardOld && (st.MaxMsgs > 0 || st.MaxBytes > 0)
}

// sizeLimit names st's count and size limits for a headroom sentence.
func sizeLimit(st *queue.Stream) string {
	var s string
	if st.MaxMsgs > 0 {
		s = "max_msgs " + queue.ExactCount(st.MaxMsgs)
	}
	if st.MaxBytes > 0 {
		if s != "" {
			s += ", "
		}
		s += "max_bytes " + queue.HumanBytes(st.MaxBytes)
	}
	return s + ", discard old"
}
