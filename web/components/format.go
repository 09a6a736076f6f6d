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
