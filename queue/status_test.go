package queue

import (
	"slices"
	"testing"
)

// TestSeverityOrder pins the one severity order: every sort, banner,
// "needs attention" list and dashboard ranks statuses by it.
func TestSeverityOrder(t *testing.T) {
	want := []Status{StatusOK, StatusWarn, StatusRewind, StatusError, StatusStall, StatusStop}
	if !slices.Equal(Statuses, want) {
		t.Fatalf("Statuses = %v; want %v", Statuses, want)
	}
	for i, s := range want {
		if got := s.Severity(); got != i {
			t.Errorf("%s.Severity() = %d; want %d", s, got, i)
		}
	}
	if got := Status("").Severity(); got != 0 {
		t.Errorf("zero Status severity = %d; want 0 (ok)", got)
	}
	if got := Status("bogus").Severity(); got != 0 {
		t.Errorf("unknown Status severity = %d; want 0 (ok)", got)
	}
}

func TestWorse(t *testing.T) {
	tests := []struct{ a, b, want Status }{
		{StatusOK, StatusStall, StatusStall},
		{StatusStop, StatusWarn, StatusStop},
		{"", StatusRewind, StatusRewind},
		{StatusRewind, StatusWarn, StatusRewind},
		{StatusError, StatusRewind, StatusError},
		{StatusError, StatusStall, StatusStall},
		{StatusOK, "", StatusOK},
	}
	for _, tt := range tests {
		if got := Worse(tt.a, tt.b); got != tt.want {
			t.Errorf("Worse(%q, %q) = %q; want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestGlyph(t *testing.T) {
	want := map[Status]string{
		StatusOK: "●", "": "●", StatusWarn: "▲", StatusRewind: "↺", StatusError: "?", StatusStall: "■", StatusStop: "■",
	}
	for s, g := range want {
		if got := s.Glyph(); got != g {
			t.Errorf("%q.Glyph() = %q; want %q", s, got, g)
		}
	}
}

func TestEffectiveStatus(t *testing.T) {
	tests := []struct {
		name       string
		g          ConsumerGroup
		want       Status
		wantReason string
	}{
		{"not evaluated", ConsumerGroup{}, StatusOK, ""},
		{"evaluated", ConsumerGroup{Status: StatusStall, StatusReason: "stuck"}, StatusStall, "stuck"},
		{"read error, not evaluated", ConsumerGroup{Err: "not authorized"}, StatusError, "not authorized"},
		{"read error wins over a stale evaluation", ConsumerGroup{Err: "timeout", Status: StatusStop, StatusReason: "no members"}, StatusError, "timeout"},
		{"evaluated error", ConsumerGroup{Status: StatusError, StatusReason: "poll failed"}, StatusError, "poll failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.g.EffectiveStatus(); got != tt.want {
				t.Errorf("EffectiveStatus() = %q; want %q", got, tt.want)
			}
			if got := tt.g.EffectiveReason(); got != tt.wantReason {
				t.Errorf("EffectiveReason() = %q; want %q", got, tt.wantReason)
			}
		})
	}
}
