package offsets

import (
	"math"
	"strings"
	"testing"
	"time"
)

func ptr(n int64) *int64 { return &n }

func str(o *int64) string { return orDash(o) }

// TestResolve is Resolve's worked example and the edges of every spec.
func TestResolve(t *testing.T) {
	nine := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	base := Position{Topic: "orders", Partition: 0, Current: ptr(150), LogStart: 100, LogEnd: 200}
	with := func(f func(*Position)) Position { p := base; f(&p); return p }
	for _, tc := range []struct {
		name                 string
		spec                 Spec
		pos                  Position
		target, delta        string
		reprocess, skip, lag int64
		warning              string
	}{
		{"earliest", Spec{Kind: Earliest}, base, "100", "-50", 50, 0, 100, ""},
		{"latest", Spec{Kind: Latest}, base, "200", "50", 0, 50, 0, ""},
		{"shift back", Spec{Kind: Shift, N: -30}, base, "120", "-30", 30, 0, 80, ""},
		{"shift forward", Spec{Kind: Shift, N: 30}, base, "180", "30", 0, 30, 20, ""},
		{"shift clamped at the start", Spec{Kind: Shift, N: -80}, base, "100", "-50", 50, 0, 100, "before the log start: clamped to 100"},
		{"shift clamped at the end", Spec{Kind: Shift, N: 80}, base, "200", "50", 0, 50, 0, "past the log end: clamped to 200"},
		{"shift without a commit", Spec{Kind: Shift, N: -5}, with(func(p *Position) { p.Current = nil }), "-", "-", 0, 0, 100, "no committed offset to shift"},
		{"shift past int64", Spec{Kind: Shift, N: math.MaxInt64}, base, "200", "50", 0, 50, 0, "past the log end"},
		{"shift before int64", Spec{Kind: Shift, N: math.MinInt64}, base, "100", "-50", 50, 0, 100, "before the log start"},
		{"offset", Spec{Kind: Offset, N: 170}, base, "170", "20", 0, 20, 30, ""},
		{"offset before the start", Spec{Kind: Offset, N: 3}, base, "100", "-50", 50, 0, 100, "before the log start"},
		{"offset past the end", Spec{Kind: Offset, N: 999}, base, "200", "50", 0, 50, 0, "past the log end"},
		{"offset without a commit", Spec{Kind: Offset, N: 120}, with(func(p *Position) { p.Current = nil }), "120", "-", 0, 0, 80, ""},
		{"timestamp between records", Spec{Kind: Timestamp, Time: nine}, with(func(p *Position) { p.AfterTime = ptr(130) }), "130", "-20", 20, 0, 70, ""},
		{"timestamp after the last record", Spec{Kind: Timestamp, Time: nine}, base, "200", "50", 0, 50, 0, "no record at or after 2026-12-05T09:00:00Z: set to the log end"},
		// Before 1970 Kafka would read the time as a special offset: the
		// last millisecond of 1969 is -1 (the end), and a broker answers
		// any AfterTime; every record is after it.
		{"timestamp before 1970", Spec{Kind: Timestamp, Time: time.UnixMilli(-1)}, with(func(p *Position) { p.AfterTime = ptr(200) }), "100", "-50", 50, 0, 100, "before 1970, before every record: set to the log start"},
		{"timestamp long before 1970", Spec{Kind: Timestamp, Time: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)}, base, "100", "-50", 50, 0, 100, "set to the log start"},
		{"group copy", Spec{Kind: Group, Group: "old"}, with(func(p *Position) { p.Other = ptr(110) }), "110", "-40", 40, 0, 90, ""},
		{"group copy clamped", Spec{Kind: Group, Group: "old"}, with(func(p *Position) { p.Other = ptr(20) }), "100", "-50", 50, 0, 100, "before the log start"},
		{"group without a commit there", Spec{Kind: Group, Group: "old"}, base, "-", "-", 0, 0, 50, "group old has no committed offset here: left as it is"},
		// A commit retention passed reads from the log start: moving it to
		// the log start re-processes nothing.
		{"commit before the log start", Spec{Kind: Earliest}, with(func(p *Position) { p.Current = ptr(40) }), "100", "60", 0, 0, 100, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Resolve(tc.spec, tc.pos)
			if str(got.Target) != tc.target || str(got.Delta) != tc.delta || got.Reprocess != tc.reprocess || got.Skip != tc.skip || got.LagAfter != tc.lag {
				t.Errorf("target %s delta %s reprocess %d skip %d lag %d; want %s %s %d %d %d",
					str(got.Target), str(got.Delta), got.Reprocess, got.Skip, got.LagAfter, tc.target, tc.delta, tc.reprocess, tc.skip, tc.lag)
			}
			if tc.warning == "" && got.Warning != "" || !strings.Contains(got.Warning, tc.warning) {
				t.Errorf("warning %q, want %q", got.Warning, tc.warning)
			}
		})
	}
}

func TestPlanIDAndSeal(t *testing.T) {
	parts := func() []PartitionPlan {
		return []PartitionPlan{
			{Topic: "b", Partition: 0, Current: ptr(5), Target: ptr(0), Reprocess: 5, Warning: "w"},
			{Topic: "a", Partition: 1, Current: nil, Target: ptr(3)},
			{Topic: "a", Partition: 0, Current: ptr(7), Target: nil},
		}
	}
	p := Plan{Cluster: "prod", Group: "g", GroupState: "Empty", Partitions: parts()}
	p.Seal()
	// The documented input, computed by hand.
	if p.ID != PlanID("prod", "g", parts()) || len(p.ID) != 24 {
		t.Fatalf("ID %q", p.ID)
	}
	if p.Partitions[0].Topic != "a" || p.Partitions[0].Partition != 0 || p.Partitions[2].Topic != "b" {
		t.Errorf("not sorted: %+v", p.Partitions)
	}
	if p.Totals != (Totals{Partitions: 3, Changed: 2, Reprocess: 5}) {
		t.Errorf("totals %+v", p.Totals)
	}
	if len(p.Warnings) != 1 || p.Warnings[0] != "b[0]: w" || p.ApplyRefused != "" {
		t.Errorf("warnings %q, refused %q", p.Warnings, p.ApplyRefused)
	}
	for name, change := range map[string]func(*Plan){
		"cluster": func(p *Plan) { p.Cluster = "other" },
		"group":   func(p *Plan) { p.Group = "h" },
		"current": func(p *Plan) { p.Partitions[0].Current = ptr(8) },
		"target":  func(p *Plan) { p.Partitions[1].Target = ptr(4) },
		"none":    func(p *Plan) { p.Partitions[1].Target = nil },
	} {
		q := p
		q.Partitions = append([]PartitionPlan(nil), p.Partitions...)
		change(&q)
		if PlanID(q.Cluster, q.Group, q.Partitions) == p.ID {
			t.Errorf("changing the %s keeps the ID", name)
		}
	}
	p.GroupState, p.Members = "Stable", []Member{{ID: "m1", Host: "/10.0.0.1"}}
	p.Seal()
	if !strings.Contains(p.ApplyRefused, "Stable with 1 member(s) [m1@/10.0.0.1]") {
		t.Errorf("refusal %q", p.ApplyRefused)
	}
}
