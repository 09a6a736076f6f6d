package queue

import (
	"math"
	"strconv"
	"time"
)

// This file is the one way queuewatch writes durations and counts for
// people: the UI, the JSON API's sentences, alert descriptions and the CLI
// all call it, so that the same lag reads the same everywhere.

// durationUnits are the units HumanDuration writes, largest first. Days start
// at 24 hours: "26h" and "1d 2h" must never both appear for the same span.
var durationUnits = [...]struct {
	size time.Duration
	name string
}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}}

// HumanDuration renders d for people with its two largest units, rounded to
// the second; a zero second unit is left out. A positive duration under half
// a second is "<1s", so that something never reads as nothing.
//
// Worked examples: 40s → "40s"; 90s → "1m 30s"; 6m → "6m"; 1h5m59s → "1h 5m"
// (the smaller units are cut, not rounded, so an age never reads older than
// it is); 26h → "1d 2h"; 300ms → "<1s"; −40s → "-40s".
func HumanDuration(d time.Duration) string {
	if d < 0 {
		if d == math.MinInt64 {
			d++
		}
		return "-" + HumanDuration(-d)
	}
	r := d.Round(time.Second)
	if r == 0 {
		if d > 0 {
			return "<1s"
		}
		return "0s"
	}
	for i, u := range durationUnits {
		if r < u.size {
			continue
		}
		s := strconv.FormatInt(int64(r/u.size), 10) + u.name
		if i+1 < len(durationUnits) {
			next := durationUnits[i+1]
			if n := (r % u.size) / next.size; n > 0 {
				s += " " + strconv.FormatInt(int64(n), 10) + next.name
			}
		}
		return s
	}
	return "0s" // unreachable: r >= 1s matches the seconds unit
}

// HumanSeconds is HumanDuration for a number of seconds, the unit metrics
// and lag seconds come in. Values beyond what a time.Duration holds (about
// 292 years) are clamped to it.
func HumanSeconds(sec float64) string {
	ns := sec * float64(time.Second)
	switch {
	case math.IsNaN(ns):
		return "—"
	case ns >= math.MaxInt64:
		return HumanDuration(math.MaxInt64)
	case ns <= math.MinInt64:
		return HumanDuration(math.MinInt64)
	}
	return HumanDuration(time.Duration(ns))
}

// HumanAgo says how long before now t was: "12s ago", "2h ago", "never" for
// the zero time. A t after now (clocks of two machines disagree) is "0s ago"
// rather than a negative age.
func HumanAgo(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return HumanDuration(max(now.Sub(t), 0)) + " ago"
}

// HumanETA renders a catch-up ETA for people: "caught up", "12m", "1h 5m",
// "falling behind", or "—" when it is not known.
func HumanETA(e ETA) string {
	switch {
	case !e.Known:
		return "—"
	case e.FallingBehind:
		return "falling behind"
	case e.In <= 0:
		return "caught up"
	}
	return HumanDuration(e.In)
}

// countUnits are the SI prefixes HumanCount uses above 10,000.
var countUnits = [...]struct {
	size uint64
	name string
}{{1e3, "k"}, {1e6, "M"}, {1e9, "G"}, {1e12, "T"}, {1e15, "P"}, {1e18, "E"}}

// HumanCount renders a count short enough for a table cell: exact (with
// thousands separators) below 10,000, where every digit still fits and
// matters, and above it one decimal of the largest SI prefix, rounded half
// up, with a trailing ".0" dropped. Show ExactCount beside it (on hover) for
// the exact value.
//
// Worked examples: 950 → "950"; 9999 → "9,999"; 12,400 → "12.4k"; 12,450 →
// "12.5k"; 100,000 → "100k"; 999,960 → "1M" (rounding carries into the next
// prefix rather than writing "1000k"); 3,100,000 → "3.1M"; −12,400 → "-12.4k".
func HumanCount(n int64) string {
	if n < 0 {
		return "-" + humanCount(uint64(-(n+1))+1) // -MinInt64 overflows int64
	}
	return humanCount(uint64(n))
}

func humanCount(n uint64) string {
	if n < 10_000 {
		return exact(n)
	}
	for i, u := range countUnits {
		if i+1 < len(countUnits) && n >= countUnits[i+1].size {
			continue
		}
		tenths := n/(u.size/10) + boolToUint(n%(u.size/10) >= u.size/20)
		if tenths >= 10_000 && i+1 < len(countUnits) {
			// 999,960 is 1000.0k: write it with the next prefix.
			u = countUnits[i+1]
			tenths = n/(u.size/10) + boolToUint(n%(u.size/10) >= u.size/20)
		}
		s := strconv.FormatUint(tenths/10, 10)
		if d := tenths % 10; d != 0 {
			s += "." + strconv.FormatUint(d, 10)
		}
		return s + u.name
	}
	return exact(n) // unreachable: the last prefix takes everything above it
}

func boolToUint(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Plural is the noun that goes with a count: one when n is 1, else many
// ("1 row", "0 rows", "2 rows").
func Plural[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ExactCount renders n with thousands separators: 12400 → "12,400",
// −1234567 → "-1,234,567". It is the exact value that goes with HumanCount,
// and what status sentences use ("while lag is 12,400").
func ExactCount(n int64) string {
	if n < 0 {
		return "-" + exact(uint64(-(n+1))+1)
	}
	return exact(uint64(n))
}

func exact(n uint64) string {
	s := strconv.FormatUint(n, 10)
	b := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}

// byteUnits are the binary prefixes HumanBytes writes, from KiB up.
const byteUnits = "KMGTPE"

// HumanBytes renders a size for people in binary (IEC) units, as Grafana's
// bytes unit does: bytes exact below 1 KiB, above it one decimal of the
// largest unit, rounded half up, with a trailing ".0" dropped, like
// HumanCount. Show the exact bytes beside it (on hover).
//
// Worked examples: 512 → "512 B"; 1024 → "1 KiB"; 1536 → "1.5 KiB"; 2047 →
// "2 KiB"; 1,048,575 → "1 MiB" (rounding carries into the next unit rather
// than writing "1024 KiB"); 1 << 30 → "1 GiB"; −2048 → "-2 KiB".
func HumanBytes(n int64) string {
	if n < 0 {
		return "-" + humanBytes(uint64(-(n+1))+1) // -MinInt64 overflows int64
	}
	return humanBytes(uint64(n))
}

func humanBytes(n uint64) string {
	if n < 1024 {
		return strconv.FormatUint(n, 10) + " B"
	}
	i, size := 0, uint64(1024)
	for i+1 < len(byteUnits) && n >= size*1024 {
		i, size = i+1, size*1024
	}
	// Tenths of the unit, rounded half up: n*10/size without overflow.
	tenths := n/size*10 + (n%size*10+size/2)/size
	if tenths >= 10240 && i+1 < len(byteUnits) {
		i, size = i+1, size*1024
		tenths = n/size*10 + (n%size*10+size/2)/size
	}
	s := strconv.FormatUint(tenths/10, 10)
	if d := tenths % 10; d != 0 {
		s += "." + strconv.FormatUint(d, 10)
	}
	return s + " " + byteUnits[i:i+1] + "iB"
}

// HumanSince says when a condition that still lasts at now began and for
// how long: "since 05:09 UTC (1h 14m)". Clock times are UTC, as everywhere
// a sentence may be read far from the UI (alerts, the API); an onset more
// than 20 hours before now carries its date, so that a clock time never
// reads as today's: "since Dec 2 05:09 UTC (2d 3h)".
func HumanSince(since, now time.Time) string {
	layout := "15:04 UTC"
	if now.Sub(since) > 20*time.Hour {
		layout = "Jan 2 15:04 UTC"
	}
	return "since " + since.UTC().Format(layout) + " (" + HumanDuration(max(now.Sub(since), 0)) + ")"
}
