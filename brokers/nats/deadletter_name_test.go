package nats

import "testing"

func TestSplitDLQName(t *testing.T) {
	for name, want := range map[string]bool{
		"ORDERS.billing": true,
		// A consumer name alone, as DLQs were once named, lists nothing.
		"billing": false,
		">":       false, "*": false, "*.billing": false, "ORDERS.>": false, "a.b.c": false,
		"": false, ".billing": false, "ORDERS.": false, "ORDERS.bill ing": false, "ORDERS.bill\ting": false,
	} {
		if _, _, got := SplitDLQName(name); got != want {
			t.Errorf("SplitDLQName(%q) ok = %v, want %v", name, got, want)
		}
	}
	if s, c, _ := SplitDLQName(DLQName("ORDERS", "billing")); s != "ORDERS" || c != "billing" {
		t.Errorf("SplitDLQName(DLQName) = %s, %s", s, c)
	}
	if DLQConsumer("ORDERS.billing") != "billing" {
		t.Error("DLQConsumer does not give the consumer part")
	}
}
