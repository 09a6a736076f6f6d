package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestBodyReads: reads are kept with who, surface, clear and their message
// ids, listed newest first and by DLQ, on both engines.
func TestBodyReads(t *testing.T) { forEngines(t, testBodyReads) }

func testBodyReads(t *testing.T, e engine, db string) {
	ctx := context.Background()
	s := e.open(t, db)
	defer func() { _ = s.Close() }()
	at := time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)
	many := make([]string, 1500)
	for i := range many {
		many[i] = "0@" + string(rune('a'+i%26))
	}
	for i, r := range []BodyRead{
		{Who: "alice", DLQ: "kafka:prod::orders.DLT", Surface: "page", Messages: []string{"0@1", "0@2"}},
		{Who: "bob", DLQ: "rabbitmq:r:/:orders.dlq", Surface: "api", Messages: many},
		{Who: "admin", DLQ: "kafka:prod::orders.DLT", Surface: "message", Clear: true, Messages: []string{"0@2"}},
	} {
		r.At = at.Add(time.Duration(i) * time.Second)
		if err := s.RecordBodyRead(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.BodyReads(ctx, ReadQuery{})
	if err != nil || len(all) != 3 || all[0].Who != "admin" || all[2].Who != "alice" {
		t.Fatalf("all reads %+v, %v", all, err)
	}
	if len(all[1].Messages) != maxReadIDs {
		t.Errorf("a read of %d messages kept %d ids, want the first %d", len(many), len(all[1].Messages), maxReadIDs)
	}
	got, err := s.BodyReads(ctx, ReadQuery{DLQ: "kafka:prod::orders.DLT", Limit: 10})
	if err != nil || len(got) != 2 {
		t.Fatalf("orders.DLT reads %+v, %v", got, err)
	}
	if r := got[0]; !r.Clear || r.Surface != "message" || !slices.Equal(r.Messages, []string{"0@2"}) || !r.At.Equal(at.Add(2*time.Second)) {
		t.Errorf("clear read back as %+v", r)
	}
	if got[1].Clear {
		t.Error("a masked read reads back as clear")
	}
}
