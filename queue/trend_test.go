package queue

import (
	"testing"
	"time"
)

func TestTrend(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	var tr Trend
	steps := []struct {
		after time.Duration
		value int64
		rate  float64
		ok    bool
	}{
		{0, 100, 0, false},
		{100 * time.Second, 120, 0.2, true},
		{TrendWindow, 280, 180.0 / TrendWindow.Seconds(), true},
		// Past two windows the base moves to the sample at one window.
		{2 * TrendWindow, 280, 0, true},
		{2*TrendWindow + 10*time.Second, 250, 0, false}, // backwards: starts over
		{2*TrendWindow + 20*time.Second, 260, 1, true},
	}
	for i, s := range steps {
		rate, ok := tr.Observe(t0.Add(s.after), s.value)
		if ok != s.ok || rate != s.rate {
			t.Errorf("step %d: rate %v %v; want %v %v", i, rate, ok, s.rate, s.ok)
		}
	}
}
