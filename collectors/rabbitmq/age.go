package rabbitmq

import (
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// backlog is what polls learned about a DLQ's current backlog, for
// estimating its oldest age without reading the head (see doc.go).
type backlog struct {
	depth  int64     // at the last poll
	polled time.Time // when the last poll was
	// since is the estimated arrival of the backlog's first message: the
	// last poll that saw the queue empty, or the first poll that saw it
	// at all. Zero while the queue is empty.
	since time.Time
	// held is set when a poll saw the queue empty while a consumer (a
	// browse, a job) held its messages, and kept the backlog.
	held bool
}

// nextBacklog folds one poll (depth messages, consumers consumers, at now)
// into prev; known is false for a DLQ not seen by the previous poll.
//
// Example with polls every 10 s: depth 0 at 12:00:00, 2 at 12:00:10 and 5
// at 12:00:20 give since 12:00:00 (the oldest message arrived after the
// last empty poll, so at 12:00:20 it is at most 20 s old); 3 at 12:00:30
// keeps it (messages left but none arrived before 12:00:00); 0 forgets it.
// A DLQ first seen holding messages gets since = that poll: a lower bound.
// A depth of 0 while consumers hold messages (a browse takes them all for
// a moment) keeps the backlog for one poll.
func nextBacklog(prev backlog, known bool, depth int64, consumers int, now time.Time) backlog {
	next := backlog{depth: depth, polled: now}
	switch {
	case depth == 0 && known && prev.depth > 0 && consumers > 0 && !prev.held:
		prev.held = true
		return prev
	case depth == 0:
	case !known:
		next.since = now
	case prev.since.IsZero():
		next.since = prev.polled
	default:
		next.since = prev.since
	}
	return next
}

// estimateAge is the oldest age of a non-empty DLQ without a broker
// timestamp: from the last browse's sighting of the head while it is
// still believed to be there, else from the backlog. It also forgets a
// sighting the queue's depth shows to be stale: with no consumer holding
// messages, fewer ready messages than the browse saw mean some left, the
// head maybe among them.
func (s *Source) estimateAge(p *plan, b backlog, ready int64, consumers int, now time.Time) (time.Duration, queue.AgeBasis) {
	c := s.opts.Cluster
	h, ok := c.HeadSeen(p.vhost, p.name)
	if ok && consumers == 0 && ready < h.Ready {
		c.ForgetHead(p.vhost, p.name, now)
		ok = false
	}
	if ok {
		return ageSince(now, h.At), queue.AgeBrowsed
	}
	return ageSince(now, b.since), queue.AgeBacklog
}
