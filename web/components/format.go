package components

import (
	"strconv"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// Count humanizes a count for a table cell (12.4k); see queue.HumanCount.
// Put Exact beside it on hover.
func Count(n int64) string { return queue.HumanCount(n) }

// Plural is queue.Plural: one when n is 1, else many.
func Plural[N ~int | ~int64](n N, one, many string) string { return queue.Plural(n, one, many) }

// Exact formats a count with thousands separators (12,400); see
// queue.ExactCount.
func Exact(n int64) string { return queue.ExactCount(n) }

// Bytes is queue.HumanBytes for a size in bytes.
func Bytes(n int) string { return queue.HumanBytes(int64(n)) }

// Seconds humanizes a duration in seconds (3m 20s, 1d 2h); see
// queue.HumanSeconds.
func Seconds(sec float64) string { return queue.HumanSeconds(sec) }

// Ago says how long ago t was, relative to now: "12s ago", "never"; see
// queue.HumanAgo.
func Ago(t, now time.Time) string { return queue.HumanAgo(t, now) }

// ETA renders a catch-up ETA: "caught up", "12m", "falling behind"; see
// queue.HumanETA.
func ETA(e queue.ETA) string { return queue.HumanETA(e) }

// StatusGlyph is the shape that goes with a status, so status never relies on
// colour alone; see queue.Status.Glyph.
func StatusGlyph(s queue.Status) string { return s.Glyph() }

// trim drops a trailing ".0" from a one-decimal number: "16.0" → "16".
func trim(s string) string {
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}

// Itoa formats an int.
func Itoa(n int) string { return strconv.Itoa(n) }

// Millis formats a poll duration: "340ms", "2.1s".
func Millis(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
}

// BarWidth is a fraction as an SVG width in a 100-unit box; a non-zero
// share gets at least one unit so it stays visible.
func BarWidth(frac float64) string {
	w := frac * 100
	switch {
	case frac <= 0:
		return "0"
	case w < 1:
		w = 1
	case w > 100:
		w = 100
	}
	return strconv.FormatFloat(w, 'f', 1, 64)
}

// Percent formats a fraction as a whole percentage, "<1%" for tiny shares.
func Percent(frac float64) string {
	switch {
	case frac <= 0:
		return "0%"
	case frac < 0.01:
		return "<1%"
	}
	return strconv.Itoa(int(frac*100+0.5)) + "%"
}

func lastPoll(sources []queue.SourceStatus) time.Time {
	var t time.Time
	for _, s := range sources {
		if s.LastPoll.After(t) {
			t = s.LastPoll
		}
	}
	return t
}

// HasOldest reports whether d has a head message to date: an empty DLQ
// has no oldest message, whatever its last reading said ("—", not "0s").
func HasOldest(d *queue.DLQ) bool { return d.HasOldestAge && d.Messages > 0 }

// OldestAge renders a DLQ's oldest age, prefixed with "≈" when it is an
// estimate rather than read from the broker.
func OldestAge(d *queue.DLQ) string {
	s := Seconds(d.OldestAge.Seconds())
	if d.OldestAgeBasis.Estimated() {
		return "≈ " + s
	}
	return s
}

// OldestAgeTitle is the hover text of OldestAge: the exact seconds and,
// for an estimate, how it was made.
func OldestAgeTitle(d *queue.DLQ) string {
	s := Exact(int64(d.OldestAge.Seconds())) + " s"
	switch d.OldestAgeBasis {
	case queue.AgeBrowsed:
		return s + ", estimated: when the head message was dead-lettered, as the last browse saw it (queuewatch never reads a DLQ to poll it)"
	case queue.AgeBacklog:
		return s + ", estimated: since polls first saw the current backlog (at most one poll interval high, or more if it was already there when queuewatch started; browse the DLQ to date its head)"
	}
	return s
}
