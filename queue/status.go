package queue

import "time"

// Status is a consumer group's health, evaluated Burrow-style over a window
// of polls. The zero value is StatusOK.
type Status string

// Statuses, from healthy to broken. Worse returns the more severe of two.
const (
	StatusOK     Status = "ok"
	StatusWarn   Status = "warn"
	StatusRewind Status = "rewind"
	StatusStall  Status = "stall"
	StatusStop   Status = "stop"
	StatusError  Status = "error"
)

// Statuses lists every status, for stateset metrics.
var Statuses = []Status{StatusOK, StatusWarn, StatusStall, StatusStop, StatusRewind, StatusError}

var severity = map[Status]int{
	"": 0, StatusOK: 0, StatusWarn: 1, StatusRewind: 2, StatusError: 3, StatusStall: 4, StatusStop: 5,
}

// Worse returns whichever of a and b is more severe.
func Worse(a, b Status) Status {
	if severity[b] > severity[a] {
		return b
	}
	return a
}

// ETA is the expected time for a group to catch up.
type ETA struct {
	// Known is false when there is not enough history to tell.
	Known bool
	// FallingBehind is set when the group consumes slower than producers
	// produce: it will never catch up at the current rates.
	FallingBehind bool
	// In is the time to reach zero lag at current rates (0 when caught up).
	In time.Duration
}
