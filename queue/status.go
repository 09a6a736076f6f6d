package queue

import (
	"slices"
	"time"
)

// Status is a consumer group's health, evaluated Burrow-style over a window
// of polls. The zero value is StatusOK.
type Status string

// Statuses. Severity orders them; Worse picks the more severe of two.
const (
	StatusOK     Status = "ok"
	StatusWarn   Status = "warn"
	StatusRewind Status = "rewind"
	StatusStall  Status = "stall"
	StatusStop   Status = "stop"
	StatusError  Status = "error"
)

// Statuses lists every status from healthy to broken: the one severity order
// that every sort, banner, "needs attention" list, stateset metric and
// dashboard uses. Each step is worse than the one before because:
//
//   - warn: lag is rising, but the group commits and may still recover alone;
//   - rewind: the group moves, but reprocesses records it already handled;
//   - error: queuewatch cannot read the group, so it could be anything,
//     which ranks it above every problem that is seen to be moving;
//   - stall: members are present and nothing moves;
//   - stop: nobody consumes at all.
var Statuses = []Status{StatusOK, StatusWarn, StatusRewind, StatusError, StatusStall, StatusStop}

// Severity ranks s by harm: its index in Statuses, 0 (ok) to 5 (stop). The
// zero Status and unknown values rank as ok. Sort by descending Severity to
// put what needs a person first.
func (s Status) Severity() int {
	return max(slices.Index(Statuses, s), 0)
}

// Worse returns whichever of a and b is more severe, a when they tie.
func Worse(a, b Status) Status {
	if b.Severity() > a.Severity() {
		return b
	}
	return a
}

// Lagging reports whether a reader of status s is behind and not catching
// up: warn, stall or stop. Rewind moves and error is unknown, so neither
// counts.
func (s Status) Lagging() bool {
	switch s {
	case StatusWarn, StatusStall, StatusStop:
		return true
	}
	return false
}

// Stopped reports whether nothing moves for a reader of status s: stall's
// severity or above.
func (s Status) Stopped() bool { return s.Severity() >= StatusStall.Severity() }

// Glyph is the shape that goes with a status in the UI and the dashboards,
// so that status never relies on colour alone: ● ok, ▲ warn, ↺ rewind,
// ? error, ■ stall and stop.
func (s Status) Glyph() string {
	switch s {
	case StatusWarn:
		return "▲"
	case StatusStall, StatusStop:
		return "■"
	case StatusRewind:
		return "↺"
	case StatusError:
		return "?"
	}
	return "●"
}

// EffectiveStatus is the status g shows everywhere: the one rule of
// EffectiveStatus over its read error and evaluated status.
func (g *ConsumerGroup) EffectiveStatus() Status { return EffectiveStatus(g.Err, g.Status) }

// EffectiveReason is the sentence that goes with g's EffectiveStatus: the
// read error of a group that could not be read, else the evaluated reason
// ("" for a healthy group).
func (g *ConsumerGroup) EffectiveReason() string { return EffectiveReason(g.Err, g.StatusReason) }

// ETA is the expected time for a group to catch up.
type ETA struct {
	// Known is false when there is not enough history to tell.
	Known bool
	// FallingBehind is set when the group consumes slower than producers
	// produce: it will never catch up at the current rates.
	FallingBehind bool
	// In is the time to reach zero lag at current rates (0 when caught up).
	In time.Duration
	// Rates tells whether ConsumeRate and ProduceRate are known: at
	// least one partition was seen by two polls of the window.
	Rates bool
	// ConsumeRate and ProduceRate are messages per second over the status
	// window, from the offsets and end offsets of its polls (no extra
	// broker request): consumed at the offset lag counts from, produced
	// at the log end. They answer "slow consumer or traffic spike?".
	ConsumeRate, ProduceRate float64
}

// Onset is when a reader's current non-ok condition began. Status
// evaluation judges a window of polls, but remembers an onset for as long
// as the condition lasts, and keeps it in the shared store so that a
// restart or another replica goes on from it: "no members since 05:09 UTC
// (1h 14m)" rather than the window's length.
type Onset struct {
	// Reader names the reader within its source (a broker's cluster), with
	// its kind: "group:billing", "consumer:ORDERS/shipper".
	Reader string
	// Condition is what began: the reader's status.
	Condition string
	Since     time.Time
}
