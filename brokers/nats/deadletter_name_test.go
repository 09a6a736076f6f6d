package nats

import "testing"

func TestValidDLQName(t *testing.T) {
	for name, want := range map[string]bool{
		"billing": true, "ORDERS.billing": true,
		">": false, "*": false, "*.billing": false, "ORDERS.>": false, "a.b.c": false,
		"": false, ".billing": false, "ORDERS.": false, "bill ing": false, "bill\ting": false,
	} {
		if got := ValidDLQName(name); got != want {
			t.Errorf("ValidDLQName(%q) = %v, want %v", name, got, want)
		}
	}
	if DLQConsumer("ORDERS.billing") != "billing" || DLQConsumer("billing") != "billing" {
		t.Error("DLQConsumer does not give the consumer part")
	}
}
