package components

import "testing"

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
