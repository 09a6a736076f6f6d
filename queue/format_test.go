package queue

import (
	"math"
	"testing"
	"time"
)

func TestHumanDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{300 * time.Millisecond, "<1s"},
		{700 * time.Millisecond, "1s"},
		{40 * time.Second, "40s"},
		{90 * time.Second, "1m 30s"},
		{200 * time.Second, "3m 20s"},
		{6 * time.Minute, "6m"},
		{6*time.Minute + 29*time.Second + 600*time.Millisecond, "6m 30s"},
		{time.Hour + 5*time.Minute, "1h 5m"},
		{time.Hour + 5*time.Minute + 59*time.Second, "1h 5m"},
		{time.Hour + 30*time.Second, "1h"},
		{23*time.Hour + 59*time.Minute, "23h 59m"},
		{24 * time.Hour, "1d"},
		{26 * time.Hour, "1d 2h"},
		{51 * time.Hour, "2d 3h"},
		{-40 * time.Second, "-40s"},
		{math.MinInt64, "-106751d 23h"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := HumanDuration(tt.d); got != tt.want {
				t.Errorf("HumanDuration(%v) = %q; want %q", tt.d, got, tt.want)
			}
		})
	}
}

func TestHumanSeconds(t *testing.T) {
	tests := []struct {
		sec  float64
		want string
	}{
		{0, "0s"},
		{0.4, "<1s"},
		{41, "41s"},
		{850, "14m 10s"},
		{7500, "2h 5m"},
		{26 * 3600, "1d 2h"},
		{3*86400 + 4*3600, "3d 4h"},
		{math.Inf(1), "106751d 23h"},
		{math.NaN(), "—"},
	}
	for _, tt := range tests {
		if got := HumanSeconds(tt.sec); got != tt.want {
			t.Errorf("HumanSeconds(%v) = %q; want %q", tt.sec, got, tt.want)
		}
	}
}

func TestHumanAgo(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		t    time.Time
		want string
	}{
		{now.Add(-90 * time.Second), "1m 30s ago"},
		{now.Add(-2 * time.Hour), "2h ago"},
		{now.Add(-26 * time.Hour), "1d 2h ago"},
		{now.Add(5 * time.Second), "0s ago"},
		{time.Time{}, "never"},
	}
	for _, tt := range tests {
		if got := HumanAgo(tt.t, now); got != tt.want {
			t.Errorf("HumanAgo(%v) = %q; want %q", tt.t, got, tt.want)
		}
	}
}

func TestHumanSince(t *testing.T) {
	now := time.Date(2026, 12, 3, 6, 23, 30, 0, time.UTC)
	tests := []struct {
		since time.Time
		want  string
	}{
		{now.Add(-74 * time.Minute), "since 05:09 UTC (1h 14m)"},
		{now.Add(-44 * time.Second), "since 06:22 UTC (44s)"},
		{now.Add(-51 * time.Hour), "since Dec 1 03:23 UTC (2d 3h)"},
		// Clocks of two replicas disagree: never a negative duration.
		{now.Add(time.Second), "since 06:23 UTC (0s)"},
		// The zone of the onset does not matter.
		{now.Add(-74 * time.Minute).In(time.FixedZone("CET", 3600)), "since 05:09 UTC (1h 14m)"},
	}
	for _, tt := range tests {
		if got := HumanSince(tt.since, now); got != tt.want {
			t.Errorf("HumanSince(%v) = %q; want %q", tt.since, got, tt.want)
		}
	}
}

func TestHumanETA(t *testing.T) {
	tests := []struct {
		eta  ETA
		want string
	}{
		{ETA{}, "—"},
		{ETA{FallingBehind: true}, "—"},
		{ETA{Known: true}, "caught up"},
		{ETA{Known: true, FallingBehind: true}, "falling behind"},
		{ETA{Known: true, In: 12 * time.Minute}, "12m"},
		{ETA{Known: true, In: time.Hour + 5*time.Minute + 10*time.Second}, "1h 5m"},
		{ETA{Known: true, In: 26 * time.Hour}, "1d 2h"},
	}
	for _, tt := range tests {
		if got := HumanETA(tt.eta); got != tt.want {
			t.Errorf("HumanETA(%+v) = %q; want %q", tt.eta, got, tt.want)
		}
	}
}

func TestHumanCount(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{950, "950"},
		{9999, "9,999"},
		{10_000, "10k"},
		{12_400, "12.4k"},
		{12_449, "12.4k"},
		{12_450, "12.5k"},
		{48_200, "48.2k"},
		{100_000, "100k"},
		{999_949, "999.9k"},
		{999_950, "1M"},
		{3_100_000, "3.1M"},
		{2_000_000_000, "2G"},
		{-12_400, "-12.4k"},
		{-950, "-950"},
		{math.MaxInt64, "9.2E"},
		{math.MinInt64, "-9.2E"},
	}
	for _, tt := range tests {
		if got := HumanCount(tt.n); got != tt.want {
			t.Errorf("HumanCount(%d) = %q; want %q", tt.n, got, tt.want)
		}
	}
}

func TestExactCount(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{999, "999"},
		{1000, "1,000"},
		{12400, "12,400"},
		{1234567, "1,234,567"},
		{-999, "-999"},
		{-1200, "-1,200"},
		{math.MinInt64, "-9,223,372,036,854,775,808"},
	}
	for _, tt := range tests {
		if got := ExactCount(tt.n); got != tt.want {
			t.Errorf("ExactCount(%d) = %q; want %q", tt.n, got, tt.want)
		}
	}
}

func TestHumanBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{512, "512 B"},
		{1023, "1023 B"},
		{1024, "1 KiB"},
		{1536, "1.5 KiB"},
		{2047, "2 KiB"},
		{12_697, "12.4 KiB"},
		{1<<20 - 52, "1023.9 KiB"},
		{1<<20 - 51, "1 MiB"}, // rounds into the next unit, not "1024 KiB"
		{3 << 20, "3 MiB"},
		{1 << 30, "1 GiB"},
		{1<<40 + 1<<39, "1.5 TiB"},
		{-2048, "-2 KiB"},
		{math.MaxInt64, "8 EiB"},
		{math.MinInt64, "-8 EiB"},
	}
	for _, tt := range tests {
		if got := HumanBytes(tt.n); got != tt.want {
			t.Errorf("HumanBytes(%d) = %q; want %q", tt.n, got, tt.want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{{0, "rows"}, {1, "row"}, {2, "rows"}, {-1, "rows"}} {
		if got := Plural(tt.n, "row", "rows"); got != tt.want {
			t.Errorf("Plural(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// TestBodyViewHonoursTextContentType: a JSON-looking body sent as text is
// shown as the text it is; a JSON or absent content type pretty-prints;
// the content type is read from AMQP properties and from NATS or SQS
// headers, parameters and case aside.
func TestBodyViewHonoursTextContentType(t *testing.T) {
	for _, tt := range []struct {
		name string
		m    Message
		kind string
		ct   string
	}{
		{"amqp text", Message{Body: []byte(`{"a":1}`), Properties: map[string]string{"content_type": "text/plain; charset=utf-8"}}, BodyText, "text/plain"},
		{"nats header", Message{Body: []byte(`42`), Headers: []Header{{Key: "Content-Type", Value: []byte("Text/CSV")}}}, BodyText, "text/csv"},
		{"sqs attribute", Message{Body: []byte(`[1]`), Headers: []Header{{Key: "contentType", Value: []byte("text/plain")}}}, BodyText, "text/plain"},
		{"json type", Message{Body: []byte(`{"a":1}`), Properties: map[string]string{"content_type": "application/json"}}, BodyJSON, "application/json"},
		{"none", Message{Body: []byte(`{"a":1}`)}, BodyJSON, ""},
	} {
		kind, text, _ := tt.m.BodyView(0)
		if kind != tt.kind || tt.m.ContentType() != tt.ct {
			t.Errorf("%s: kind %s (%q), content type %q; want %s, %q", tt.name, kind, text, tt.m.ContentType(), tt.kind, tt.ct)
		}
	}
}
