package alerts

import (
	"math"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// rates accumulates a group's consume and produce rates, in records per
// second, over its partitions' windows.
type rates struct {
	consume, produce float64
	// perPoll is how many records producers add between two polls.
	perPoll float64
	// partitions counts partitions with enough history to give a rate.
	partitions int
}

// add adds one partition's rates from the first and last observations of its
// window. Consumption is measured at the offset lag counts from (end − lag):
// the committed offset normally, the log start when nothing is committed or
// retention deleted records unread. That keeps consume − produce equal to how
// fast lag shrinks, which is what an ETA needs.
func (r *rates) add(obs []observation) {
	if len(obs) < 2 {
		return
	}
	first, last := obs[0], obs[len(obs)-1]
	dt := last.time.Sub(first.time).Seconds()
	if dt <= 0 {
		return
	}
	r.consume += float64((last.end-last.lag)-(first.end-first.lag)) / dt
	r.produce += float64(last.end-first.end) / dt
	r.perPoll += float64(last.end-first.end) / float64(len(obs)-1)
	r.partitions++
}

// eta is the time for lag to reach zero at the accumulated rates. A lag of
// less than one poll's worth of production is caught up: the group is
// reading what arrives as it arrives.
//
// Worked example: lag 2,400, consuming 30 records/s while producers add
// 10/s: the group drains 20/s and catches up in 2m.
func (r rates) eta(lag int64) queue.ETA {
	e := r.until(lag)
	if r.partitions > 0 {
		e.Rates, e.ConsumeRate, e.ProduceRate = true, max(r.consume, 0), max(r.produce, 0)
	}
	return e
}

// until is the ETA's verdict alone: when lag reaches zero, if ever.
func (r rates) until(lag int64) queue.ETA {
	switch {
	case lag <= 0:
		return queue.ETA{Known: true}
	case r.partitions == 0:
		return queue.ETA{}
	case float64(lag) <= r.perPoll:
		return queue.ETA{Known: true}
	case r.consume <= r.produce:
		return queue.ETA{Known: true, FallingBehind: true}
	}
	secs := float64(lag) / (r.consume - r.produce)
	if secs*float64(time.Second) >= math.MaxInt64 {
		// A drain rate this close to zero will not catch up in any time
		// worth telling apart from never.
		return queue.ETA{Known: true, FallingBehind: true}
	}
	return queue.ETA{Known: true, In: time.Duration(secs * float64(time.Second))}
}
