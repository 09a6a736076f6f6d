package components

import (
	"fmt"
	"strconv"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// Count humanizes a count: 950, 12.4k, 3.1M.
func Count(n int64) string {
	switch {
	case n < 0:
		return "-" + Count(-n)
	case n < 10_000:
		return Exact(n)
	case n < 1_000_000:
		return trim(fmt.Sprintf("%.1f", float64(n)/1e3)) + "k"
	case n < 1_000_000_000:
		return trim(fmt.Sprintf("%.1f", float64(n)/1e6)) + "M"
	}
	return trim(fmt.Sprintf("%.1f", float64(n)/1e9)) + "G"
}

func trim(s string) string {
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}

// Exact formats a count with thousands separators: 12,400.
func Exact(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// Seconds humanizes a duration in seconds: 0s, 41s, 3m 20s, 2h 5m, 3d 4h.
func Seconds(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	switch {
	case d < time.Second:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return two(int(d.Minutes()), "m", int(d.Seconds())%60, "s")
	case d < 48*time.Hour:
		return two(int(d.Hours()), "h", int(d.Minutes())%60, "m")
	}
	return two(int(d.Hours())/24, "d", int(d.Hours())%24, "h")
}

func two(a int, au string, b int, bu string) string {
	if b == 0 {
		return fmt.Sprintf("%d%s", a, au)
	}
	return fmt.Sprintf("%d%s %d%s", a, au, b, bu)
}

// Ago says how long ago t was, relative to now: "12s ago", "never".
func Ago(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return Seconds(now.Sub(t).Seconds()) + " ago"
}

// StatusGlyph is the shape that goes with a status, so status never relies on
// colour alone.
func StatusGlyph(s queue.Status) string {
	switch s {
	case queue.StatusWarn:
		return "▲"
	case queue.StatusStall, queue.StatusStop:
		return "■"
	case queue.StatusRewind:
		return "↺"
	case queue.StatusError:
		return "?"
	}
	return "●"
}

// StatusOf is a group's status, defaulting to ok.
func StatusOf(s queue.Status) queue.Status {
	if s == "" {
		return queue.StatusOK
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
