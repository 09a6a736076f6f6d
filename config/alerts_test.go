package config

import (
	"testing"
	"time"
)

func TestOverrideApply(t *testing.T) {
	global := Thresholds{LagHigh: 10_000, LagSecondsHigh: 5 * time.Minute, DLQAgeHigh: time.Hour}
	o := Override{Group: "batch-.*", LagHigh: 500_000}
	want := Thresholds{LagHigh: 500_000, LagSecondsHigh: 5 * time.Minute, DLQAgeHigh: time.Hour}
	if got := o.Apply(global); got != want {
		t.Errorf("Apply = %+v; want %+v (zero thresholds keep the global ones)", got, want)
	}
	a := Alerts{LagHigh: 10_000, LagSecondsHigh: 5 * time.Minute, DLQAgeHigh: time.Hour, Overrides: []Override{o}}
	if got := a.For("batch-x", ""); got != o.Apply(a.Global()) {
		t.Errorf("For = %+v; want Apply(Global) = %+v", got, o.Apply(a.Global()))
	}
}

func TestOverrideAppliesTo(t *testing.T) {
	for _, tc := range []struct {
		name         string
		o            Override
		groups, dlqs bool
		patternsOK   bool
	}{
		{"group only", Override{Group: "g"}, true, false, true},
		{"dlq only", Override{DLQ: "d"}, false, true, true},
		{"both", Override{Group: "g", DLQ: "d"}, false, false, true},
		{"dlq pattern matching empty", Override{Group: "g", DLQ: ".*"}, true, false, true},
		{"group pattern matching empty", Override{Group: "x?", DLQ: "d"}, false, true, true},
		{"neither", Override{}, false, false, true},
		{"bad pattern", Override{Group: "("}, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.o.AppliesToGroups(); got != tc.groups {
				t.Errorf("AppliesToGroups = %v; want %v", got, tc.groups)
			}
			if got := tc.o.AppliesToDLQs(); got != tc.dlqs {
				t.Errorf("AppliesToDLQs = %v; want %v", got, tc.dlqs)
			}
			if err := tc.o.CheckPatterns(); (err == nil) != tc.patternsOK {
				t.Errorf("CheckPatterns = %v; want ok %v", err, tc.patternsOK)
			}
		})
	}
}
