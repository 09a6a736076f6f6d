package kafka

import (
	"testing"
	"time"
)

func TestLease(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_123)
	tests := []struct {
		meta string
		want lease
	}{
		{"queuewatch-job:job-1;until=1700000000123", lease{job: "job-1", until: at}},
		{"queuewatch-job:job-1", lease{job: "job-1"}},
		{"queuewatch-job:job-1;until=garbage", lease{job: "job-1"}},
		{"something else", lease{}},
		{"", lease{}},
	}
	for _, tt := range tests {
		got := parseLease(tt.meta)
		if got.job != tt.want.job || !got.until.Equal(tt.want.until) {
			t.Errorf("parseLease(%q) = %+v, want %+v", tt.meta, got, tt.want)
		}
		if tt.want.job != "" && parseLease(got.String()).String() != got.String() {
			t.Errorf("%+v does not round-trip through %q", got, got.String())
		}
	}
	held := lease{job: "a", until: at}
	if !held.held(at.Add(-time.Millisecond)) || held.held(at) {
		t.Error("a lease holds strictly before its until")
	}
	if got := latest(lease{job: "old", until: at}, lease{job: "new", until: at.Add(time.Second)}); got.job != "new" {
		t.Errorf("latest = %+v", got)
	}
	if got := latest(lease{}, lease{job: "released"}); got.job != "released" {
		t.Errorf("latest of nothing and a released lease = %+v", got)
	}
}
