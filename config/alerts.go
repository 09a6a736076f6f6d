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
	t := a.Global()
	for _, o := range a.Overrides {
		if o.matches(group, dlq) {
			return o.Apply(t)
		}
	}
	return t
}

// Global returns the thresholds that apply where no override matches.
func (a Alerts) Global() Thresholds {
	return Thresholds{LagHigh: a.LagHigh, LagSecondsHigh: a.LagSecondsHigh, DLQAgeHigh: a.DLQAgeHigh}
}

// Apply returns t with o's thresholds in its place: what For returns for a
// name o matches first when t is Global. o's zero thresholds keep t's.
func (o Override) Apply(t Thresholds) Thresholds {
	if o.LagHigh > 0 {
		t.LagHigh = o.LagHigh
	}
	if o.LagSecondsHigh > 0 {
		t.LagSecondsHigh = o.LagSecondsHigh
	}
	if o.DLQAgeHigh > 0 {
		t.DLQAgeHigh = o.DLQAgeHigh
	}
	return t
}

// AppliesToGroups reports whether o can match some consumer group. For is
// asked about a group with an empty DLQ name, so o applies when its dlq
// pattern is empty or matches "" (its group pattern then says which groups).
// Rule generators use it to know which overrides select on the group label.
func (o Override) AppliesToGroups() bool {
	return o.set() && matchOne(o.DLQ, o.dlq, "")
}

// AppliesToDLQs reports whether o can match some DLQ, asked about with an
// empty group name: o's group pattern is empty or matches "".
func (o Override) AppliesToDLQs() bool {
	return o.set() && matchOne(o.Group, o.group, "")
}

// set reports whether o names anything; Validate rejects an override that
// names neither a group nor a DLQ, and it must never match everything.
func (o Override) set() bool { return o.Group != "" || o.DLQ != "" }

// CheckPatterns compiles o's group and dlq patterns the way For matches
// them, whole names only, for callers that got o without Validate. A
// pattern written into a PromQL =~ matcher as is means the same thing:
// Prometheus anchors it the same way.
func (o Override) CheckPatterns() error {
	for _, pat := range []string{o.Group, o.DLQ} {
		if pat == "" {
			continue
		}
		if _, err := compileAnchored(pat); err != nil {
			return err
		}
	}
	return nil
}

func (o Override) matches(group, dlq string) bool {
	return o.set() && matchOne(o.Group, o.group, group) && matchOne(o.DLQ, o.dlq, dlq)
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
