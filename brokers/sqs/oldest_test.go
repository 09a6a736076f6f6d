package sqs

import (
	"testing"
	"time"
)

// TestSQSOldestSent keeps the oldest send time per queue until it is
// forgotten, and reads SentTimestamp as epoch milliseconds.
func TestSQSOldestSent(t *testing.T) {
	c := &Cluster{}
	if _, ok := c.OldestSent("orders"); ok {
		t.Fatal("a queue nothing was received from has an oldest send time")
	}
	t1 := time.UnixMilli(1_700_000_000_000).UTC()
	c.SawSent("orders", t1.Add(time.Minute))
	c.SawSent("orders", t1)
	c.SawSent("orders", t1.Add(time.Hour))
	c.SawSent("other", t1.Add(time.Second))
	if got, ok := c.OldestSent("orders"); !ok || !got.Equal(t1) {
		t.Errorf("OldestSent(orders) = %v, %v; want %v", got, ok, t1)
	}
	c.ForgetSent("orders")
	if _, ok := c.OldestSent("orders"); ok {
		t.Error("ForgetSent left the queue's send time")
	}
	if got, ok := c.OldestSent("other"); !ok || !got.Equal(t1.Add(time.Second)) {
		t.Errorf("ForgetSent(orders) touched other: %v, %v", got, ok)
	}

	if got, ok := SentTimestamp(map[string]string{"SentTimestamp": "1700000000000"}); !ok || !got.Equal(t1) {
		t.Errorf("SentTimestamp = %v, %v; want %v", got, ok, t1)
	}
	for _, bad := range []string{"", "soon", "0", "-5"} {
		if got, ok := SentTimestamp(map[string]string{"SentTimestamp": bad}); ok {
			t.Errorf("SentTimestamp(%q) = %v, want none", bad, got)
		}
	}
}
