package components

import (
	"testing"
	"time"
)

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 950: "950", 9999: "9,999", 12_400: "12.4k", 48_200: "48.2k",
		100_000: "100k", 3_100_000: "3.1M", -12_400: "-12.4k", 2_000_000_000: "2G"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestExact(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 12400: "12,400", -1234567: "-1,234,567"} {
		if got := Exact(n); got != want {
			t.Errorf("Exact(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSeconds(t *testing.T) {
	for s, want := range map[float64]string{0: "0s", 0.4: "0s", 41: "41s", 200: "3m 20s", 600: "10m", 850: "14m 10s",
		7500: "2h 5m", 3 * 86400: "3d", 3*86400 + 4*3600: "3d 4h"} {
		if got := Seconds(s); got != want {
			t.Errorf("Seconds(%v) = %q, want %q", s, got, want)
		}
	}
	now := time.Now()
	if got := Ago(now.Add(-90*time.Second), now); got != "1m 30s ago" {
		t.Errorf("Ago = %q", got)
	}
	if got := Ago(time.Time{}, now); got != "never" {
		t.Errorf("Ago(zero) = %q", got)
	}
}

func TestGroupURL(t *testing.T) {
	if got := GroupURL("prod eu", "a/b?c#d"); got != "/kafka/prod%20eu/groups/a%2Fb%3Fc%23d" {
		t.Errorf("GroupURL = %q", got)
	}
}
