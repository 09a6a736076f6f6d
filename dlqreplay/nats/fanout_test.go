package nats

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

func TestSubjectMatches(t *testing.T) {
	for _, c := range []struct {
		filter, subject string
		want            bool
	}{
		{"orders", "orders", true},
		{"orders", "orders.new", false},
		{"orders.*", "orders.new", true},
		{"orders.*", "orders", false},
		{"orders.*", "orders.new.eu", false},
		{"orders.>", "orders.new.eu", true},
		{"orders.>", "orders", false},
		{"*.new", "orders.new", true},
		{">", "a.b.c", true},
		{"orders.new", "orders.old", false},
	} {
		if got := subjectMatches(c.filter, c.subject); got != c.want {
			t.Errorf("subjectMatches(%q, %q) = %v, want %v", c.filter, c.subject, got, c.want)
		}
	}
}

func TestSubjectConsumers(t *testing.T) {
	w := newWorld(t).(*world)
	ctx := context.Background()
	for _, c := range []jetstream.ConsumerConfig{
		{Durable: "audit"}, {Durable: "paid", FilterSubject: "orders.paid"}, {Durable: "wild", FilterSubjects: []string{"x", "order*"}},
	} {
		if _, err := w.js.CreateStream(ctx, jetstream.StreamConfig{Name: "WIDE", Subjects: []string{"orders.>", "x"}}); err != nil && c.Durable == "audit" {
			t.Fatal(err)
		}
		if _, err := w.js.CreateOrUpdateConsumer(ctx, "WIDE", c); err != nil {
			t.Fatal(err)
		}
	}
	be, err := New(Options{Cluster: w.cl})
	if err != nil {
		t.Fatal(err)
	}
	got, err := be.SubjectConsumers(ctx, "WIDE", "orders.new")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[audit]" {
		t.Fatalf("consumers of orders.new: %v, want [audit]", got)
	}
	if got, _ := be.SubjectConsumers(ctx, "WIDE", "orders.paid"); fmt.Sprint(got) != "[audit paid]" {
		t.Fatalf("consumers of orders.paid: %v", got)
	}
}
