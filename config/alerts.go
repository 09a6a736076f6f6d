package config

import (
	"regexp"
	"time"
)

// Thresholds are the alert thresholds in effect for one consumer group or
// DLQ after overrides.
type Thresholds struct {
	LagHigh        int64
	LagSecondsHigh time.Duration
	DLQAgeHigh     time.Duration
}

// For returns the thresholds for a consumer group and/or DLQ name (either
// may be empty). The first override that matches wins; its zero thresholds
// keep the global values. An override naming both group and dlq matches only
// when both match.
//
// For example, with lag_high 10000 and the overrides
// [{group: "batch-.*", lag_high: 500000}, {group: ".*", lag_seconds_high: 1m}],
// For("batch-nightly", "") has LagHigh 500000 and the global LagSecondsHigh:
// the second override is never consulted.
func (a Alerts) For(group, dlq string) Thresholds {
	t := Thresholds{LagHigh: a.LagHigh, LagSecondsHigh: a.LagSecondsHigh, DLQAgeHigh: a.DLQAgeHigh}
	for _, o := range a.Overrides {
		if !o.matches(group, dlq) {
			continue
		}
		if o.LagHigh > 0 {
			t.LagHigh = o.LagHigh
		}
		if o.LagSecondsHigh > 0 {
			t.LagSecondsHigh = o.LagSecondsHigh
		}
		if o.DLQAgeHigh > 0 {
			t.DLQAgeHigh = o.DLQAgeHigh
		}
		break
	}
	return t
}

func (o Override) matches(group, dlq string) bool {
	if o.Group == "" && o.DLQ == "" {
		return false // Validate rejects it; never let it match everything
	}
	return matchOne(o.Group, o.group, group) && matchOne(o.DLQ, o.dlq, dlq)
}

// matchOne matches name against the anchored pattern pat (pre-compiled as
// re when validated); an empty pattern matches anything.
func matchOne(pat string, re *regexp.Regexp, name string) bool {
	if pat == "" {
		return true
	}
	if re == nil {
		var err error
		if re, err = compileAnchored(pat); err != nil {
			return false
		}
	}
	return re.MatchString(name)
}
