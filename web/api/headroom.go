package api

import "github.com/queuewatch/queuewatch/queue"

// HeadroomJSON is a reader's retention headroom in the API, the one shape
// every reader kind answers with (queue.Headroom): how long until the
// broker deletes the oldest message the reader has not read. Readers
// leave it out while it is unknown — nothing pending, a retention that
// never deletes, or an age not read yet — so that no client takes an
// absent figure for 0 s.
type HeadroomJSON struct {
	Seconds float64 `json:"seconds"`
	// Projected: Seconds comes from the trend under a size or count limit
	// (retention.bytes, max_msgs, x-max-length), not from a clock.
	Projected bool `json:"projected"`
	// Limit names the setting that deletes, with its value.
	Limit string `json:"limit"`
	// Where is the part of the reader the figure is for (a Kafka
	// partition "orders/3"), or how its age was known.
	Where string `json:"where,omitempty"`
}

// toHeadroomJSON is h for a reader's retention_headroom: nil while
// unknown.
func toHeadroomJSON(h queue.Headroom) *HeadroomJSON {
	if !h.Known {
		return nil
	}
	return &HeadroomJSON{Seconds: h.Seconds, Projected: h.Projected, Limit: h.Limit, Where: h.Where}
}
