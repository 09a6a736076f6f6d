package components

import "testing"

func TestOverviewTabOf(t *testing.T) {
	for key, want := range map[string]string{
		"": TabGroups, "bogus": TabGroups, TabGroups: TabGroups, TabNATS: TabNATS, TabQueues: TabQueues, TabDLQs: TabDLQs,
	} {
		if got := OverviewTabOf(key).Key; got != want {
			t.Errorf("OverviewTabOf(%q) = %q; want %q", key, got, want)
		}
	}
	c := Counts{Groups: 1, Queues: 2, DLQs: 3, Consumers: 4}
	for key, want := range map[string]int{TabGroups: 1, TabQueues: 2, TabDLQs: 3, TabNATS: 4} {
		if got := c.Of(key); got != want {
			t.Errorf("Counts.Of(%q) = %d; want %d", key, got, want)
		}
	}
	for _, tab := range OverviewTabs {
		if tab.Label == "" || tab.Placeholder == "" {
			t.Errorf("tab %q lacks a label or a filter hint", tab.Key)
		}
	}
}

func TestOutcomeTarget(t *testing.T) {
	tests := []struct{ dlq, target, want string }{
		{"rabbitmq:main:/:orders.dlq", "/orders", "orders (default exchange)"},
		{"rabbitmq:main:/:orders.dlq", "events/orders.created", "events → orders.created"},
		{"rabbitmq:main:/:orders.dlq", "orders", "orders"},
		{"kafka:main::orders.DLT", "orders/x", "orders/x"}, // a topic name may hold a slash
		{"nats:main::worker", "orders.created", "orders.created"},
		{"not an id", "/orders", "/orders"},
	}
	for _, tt := range tests {
		if got := OutcomeTarget(tt.dlq, tt.target); got != tt.want {
			t.Errorf("OutcomeTarget(%q, %q) = %q; want %q", tt.dlq, tt.target, got, tt.want)
		}
	}
}
