package nats

import "time"

// SetNow sets the clock s stamps its polls with, for tests of what
// depends on time between polls (headroom projected from a trend).
func SetNow(s *Source, now func() time.Time) { s.now = now }
