package components

import (
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 950: "950", 9999: "9,999", 12_400: "12.4k", 48_200: "48.2k",
		100_000: "100k", 999_960: "1M", 3_100_000: "3.1M", -12_400: "-12.4k", 2_000_000_000: "2G",
	} {
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
	// The same examples as queue.HumanSeconds: the UI writes a span the way
	// alert sentences and the CLI do (26h is "1d 2h", never "26h").
	for s, want := range map[float64]string{
		0: "0s", 0.4: "<1s", 41: "41s", 26 * 3600: "1d 2h", 26*3600 + 59: "1d 2h", 200: "3m 20s", 600: "10m", 850: "14m 10s",
		7500: "2h 5m", 3 * 86400: "3d", 3*86400 + 4*3600: "3d 4h",
	} {
		if got := Seconds(s); got != want {
			t.Errorf("Seconds(%v) = %q, want %q", s, got, want)
		}
	}
	now := time.Now()
	if got := Ago(now.Add(-90*time.Second), now); got != "1m 30s ago" {
		t.Errorf("Ago = %q", got)
	}
	if got := Ago(now.Add(-26*time.Hour), now); got != "1d 2h ago" {
		t.Errorf("Ago(26h) = %q", got)
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

func TestETA(t *testing.T) {
	for _, tt := range []struct {
		e    queue.ETA
		want string
	}{
		{queue.ETA{}, "—"},
		{queue.ETA{Known: true}, "caught up"},
		{queue.ETA{Known: true, FallingBehind: true}, "falling behind"},
		{queue.ETA{Known: true, In: 26 * time.Hour}, "1d 2h"},
	} {
		if got := ETA(tt.e); got != tt.want {
			t.Errorf("ETA(%+v) = %q, want %q", tt.e, got, tt.want)
		}
	}
}
