package collectors

import (
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// countSink counts the gauges emitted per family.
type countSink map[string]int

func (c countSink) gauge(f *family, _ float64, _ ...string) { c[f.name]++ }

// TestHeadroomSeries: a headroom series only for a reader whose headroom
// is known and within HeadroomHorizon.
func TestHeadroomSeries(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    queue.Headroom
		want int
	}{
		{"an hour", queue.AgeHeadroom(2*time.Hour, time.Hour, "retention.ms"), 1},
		{"due now", queue.AgeHeadroom(time.Hour, 2*time.Hour, "retention.ms"), 1},
		{"a week (Kafka's default, fresh records)", queue.AgeHeadroom(7*24*time.Hour, time.Minute, "retention.ms"), 0},
		{"unknown", queue.Headroom{}, 0},
	} {
		c := countSink{}
		emitHeadroom(c, tc.h, queue.Kafka, "prod", "", "billing")
		if got := c[descHeadroom.name]; got != tc.want {
			t.Errorf("%s: %d series, want %d", tc.name, got, tc.want)
		}
	}
}
