package store

import (
	"context"
	"testing"
	"time"
)

// TestSavedFilters: a filter saved through one Store (a replica) is
// listed by another on the same database, for its DLQ only; saving the
// same name replaces it; a delete removes it once.
func TestSavedFilters(t *testing.T) {
	forEngines(t, testSavedFilters)
}

func testSavedFilters(t *testing.T, e engine, db string) {
	ctx := context.Background()
	a, b := e.open(t, db), e.open(t, db)
	defer func() { _ = a.Close(); _ = b.Close() }()
	at := time.Date(2026, 12, 7, 15, 0, 0, 0, time.UTC)
	const dlq = "rabbitmq:main:/:orders.dlq"
	for _, f := range []SavedFilter{
		{DLQ: dlq, Name: "tenant acme", Where: `headers["x-tenant"] == "acme"`, Who: "alice", At: at},
		{DLQ: dlq, Name: "big orders", Where: `value.total > 100.0`, Who: "alice", At: at},
		{DLQ: "kafka:prod::orders.DLT", Name: "big orders", Where: `value.total > 1.0`, Who: "bob", At: at},
		{DLQ: dlq, Name: "big orders", Where: `value.total > 500.0`, Who: "bob", At: at.Add(time.Minute)},
	} {
		if err := a.SaveFilter(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.SavedFilters(ctx, dlq)
	if err != nil || len(got) != 2 {
		t.Fatalf("filters %+v, %v", got, err)
	}
	if f := got[0]; f.Name != "big orders" || f.Where != `value.total > 500.0` || f.Who != "bob" || !f.At.Equal(at.Add(time.Minute)) {
		t.Errorf("the replaced filter reads %+v", f)
	}
	if got[1].Name != "tenant acme" {
		t.Errorf("filters are not by name: %+v", got)
	}
	if ok, err := b.DeleteFilter(ctx, dlq, "big orders"); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if ok, err := a.DeleteFilter(ctx, dlq, "big orders"); ok || err != nil {
		t.Fatalf("a second delete: %v %v", ok, err)
	}
	if got, err := a.SavedFilters(ctx, "kafka:prod::orders.DLT"); err != nil || len(got) != 1 || got[0].Who != "bob" {
		t.Errorf("the other DLQ's filters %+v, %v", got, err)
	}
}
