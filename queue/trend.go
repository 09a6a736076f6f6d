package queue

import "time"

// TrendWindow is the span a Trend measures a rate over (between one and
// two of it): long enough to see an offset that moves a segment at a time
// (a Kafka log start), short enough to follow a change in traffic within
// the hour.
const TrendWindow = 15 * time.Minute

// A Trend measures how fast an offset or sequence moves: from a base
// sample at most two TrendWindows old to the latest. It keeps two samples,
// not a history, because retention headroom keeps one per reader part
// (a Kafka group-partition, a JetStream consumer). The zero value is
// ready to use.
type Trend struct {
	base, mid trendSample
}

type trendSample struct {
	at    time.Time
	value int64
}

// Observe adds value at at and returns its rate per second since the base
// sample, false until there is a span to measure. A value that went
// backwards (a topic or stream re-created, offsets reset) starts over.
//
// Worked example: Observe(t0, 100) is (0, false); Observe(t0+100s, 120)
// is (0.2, true).
func (t *Trend) Observe(at time.Time, value int64) (float64, bool) {
	switch {
	case t.base.at.IsZero() || value < t.base.value || !at.After(t.base.at):
		t.base, t.mid = trendSample{at, value}, trendSample{}
		return 0, false
	case t.mid.at.IsZero() && at.Sub(t.base.at) >= TrendWindow:
		t.mid = trendSample{at, value}
	case !t.mid.at.IsZero() && at.Sub(t.base.at) >= 2*TrendWindow:
		t.base, t.mid = t.mid, trendSample{at, value}
	}
	return float64(value-t.base.value) / at.Sub(t.base.at).Seconds(), true
}
