package config

import (
	"slices"
	"testing"
	"time"
)

func TestFilterMatch(t *testing.T) {
	tests := []struct {
		name   string
		filter Filter
		in     map[string]bool
	}{
		{"zero filter matches all", Filter{}, map[string]bool{"orders": true, "": true}},
		{"include is anchored", Filter{Include: []string{"orders"}}, map[string]bool{
			"orders": true, "orders-eu": false, "old-orders": false,
		}},
		{"include alternatives", Filter{Include: []string{"orders-.*", "billing|payments"}}, map[string]bool{
			"orders-eu": true, "billing": true, "payments": true, "payments-x": false, "inventory": false,
		}},
		{"exclude only", Filter{Exclude: []string{".*-tmp", "console-consumer-.*"}}, map[string]bool{
			"orders": true, "orders-tmp": false, "console-consumer-42": false, "tmp-orders": true,
		}},
		{"exclude wins over include", Filter{Include: []string{"orders-.*"}, Exclude: []string{"orders-test"}}, map[string]bool{
			"orders-eu": true, "orders-test": false,
		}},
		{"bad include fails closed", Filter{Include: []string{"orders-("}}, map[string]bool{"orders-(": false, "x": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Unvalidated: patterns compile on the fly.
			for name, want := range tt.in {
				if got := tt.filter.Match(name); got != want {
					t.Errorf("unvalidated Match(%q) = %v, want %v", name, got, want)
				}
			}
			var p problems
			f := tt.filter
			f.compile(&p, "groups")
			if len(p) > 0 {
				return
			}
			for name, want := range tt.in {
				if got := f.Match(name); got != want {
					t.Errorf("compiled Match(%q) = %v, want %v", name, got, want)
				}
			}
		})
	}
}

func TestIsDLQName(t *testing.T) {
	d := Default().DLQ
	tests := map[string]bool{
		"orders.dlq": true, "orders-DLQ": true, "orders_dlt": true, "orders.deadletter": true,
		"orders-dead-letters": true, "payments.error": true, "parking-lot": true, "billing.parkinglot": true,
		"orders": false, "dlq-orders": false, "error-handler": false, "orders-errors": false,
	}
	for name, want := range tests {
		if got := d.IsDLQName(name); got != want {
			t.Errorf("IsDLQName(%q) = %v, want %v", name, got, want)
		}
	}
	if (DLQ{}).IsDLQName("orders.dlq") {
		t.Error("empty name_pattern matched; it should disable name detection")
	}
}

func TestAlertsFor(t *testing.T) {
	a := Default().Alerts
	a.Overrides = []Override{
		{Group: "batch-.*", LagHigh: 500000, LagSecondsHigh: 2 * time.Hour},
		{Group: "batch-nightly", LagHigh: 1}, // shadowed: first match wins
		{DLQ: `payments\..*`, DLQAgeHigh: 5 * time.Minute},
		{Group: "orders", DLQ: "orders.dlq", DLQAgeHigh: time.Minute},
	}
	global := Thresholds{LagHigh: 10000, LagSecondsHigh: 5 * time.Minute, DLQAgeHigh: time.Hour}
	tests := []struct {
		name, group, dlq string
		want             Thresholds
	}{
		{"no match keeps globals", "orders-eu", "", global},
		{"group override, unset keeps global", "batch-nightly", "", Thresholds{500000, 2 * time.Hour, time.Hour}},
		{"group regex is anchored", "my-batch-job", "", global},
		{"dlq override", "", "payments.dlq", Thresholds{10000, 5 * time.Minute, 5 * time.Minute}},
		{"both must match", "orders", "orders.dlq", Thresholds{10000, 5 * time.Minute, time.Minute}},
		{"group alone does not match a both-override", "orders", "", global},
		{"dlq alone does not match a both-override", "", "orders.dlq", global},
	}
	for _, withValidate := range []bool{false, true} {
		if withValidate {
			var p problems
			a.validate(&p)
			if len(p) > 0 {
				t.Fatalf("validate: %v", p[0])
			}
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if got := a.For(tt.group, tt.dlq); got != tt.want {
					t.Errorf("For(%q, %q) = %+v, want %+v (validated %v)", tt.group, tt.dlq, got, tt.want, withValidate)
				}
			})
		}
	}
}

func TestOverrideWithoutThreshold(t *testing.T) {
	_, err := Parse([]byte("alerts:\n  overrides:\n    - group: x\n"), "q.yml")
	want := "q.yml:3: alerts.overrides[0]: sets no threshold (lag_high, lag_seconds_high or dlq_age_high)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

// TestDLQQueues checks that a dlq_queues entry is a name unless it says
// "re:", and that the old unprefixed regexes keep working.
func TestDLQQueues(t *testing.T) {
	tests := []struct {
		name    string
		entries []string
		in      map[string]bool
		names   []string
		legacy  []string
	}{
		{"a dotted name is a name", []string{"rc.work.dlq"}, map[string]bool{
			"rc.work.dlq": true, "rcXworkXdlq": false, "rc.work.dlq2": false,
		}, []string{"rc.work.dlq"}, nil},
		{"re: is an anchored regex", []string{`re:.*\.dlq`}, map[string]bool{
			"rc.work.dlq": true, "a.dlq": true, "a.dlq.x": false,
		}, nil, nil},
		{"legacy regex without re:", []string{`.*\.failed`, "payments.failed"}, map[string]bool{
			"orders.failed": true, "payments.failed": true, "paymentsXfailed": false,
		}, []string{"payments.failed"}, []string{`.*\.failed`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := RabbitMQ{DLQQueues: tt.entries}
			check := func(what string) {
				for name, want := range tt.in {
					if got := r.IsDLQQueue(name); got != want {
						t.Errorf("%s IsDLQQueue(%q) = %v, want %v", what, name, got, want)
					}
				}
			}
			check("unvalidated")
			var p problems
			r.dlqQueues = compileDLQQueues(&p, "dlq_queues", r.DLQQueues)
			if len(p) > 0 {
				t.Fatalf("problems: %v", p)
			}
			check("validated")
			if got := r.DLQQueueNames(); !slices.Equal(got, tt.names) {
				t.Errorf("DLQQueueNames() = %q, want %q", got, tt.names)
			}
			if got := r.LegacyDLQPatterns(); !slices.Equal(got, tt.legacy) {
				t.Errorf("LegacyDLQPatterns() = %q, want %q", got, tt.legacy)
			}
		})
	}
}
