package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestOffsetResets: resets are kept in order with their JSON entry as given,
// listed newest first and filtered by cluster and group, and survive a
// reopen (the CLI writes, a server reads).
func TestOffsetResets(t *testing.T) { forEngines(t, testOffsetResets) }

func testOffsetResets(t *testing.T, e engine, db string) {
	ctx := context.Background()
	s := e.open(t, db)
	at := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	for i, r := range []OffsetReset{
		{Who: "cli:alice", Cluster: "prod", Group: "billing", PlanID: "a1", Result: "ok", Entry: json.RawMessage(`{"plan":{"group":"billing"}}`)},
		{Who: "cli:bob", Cluster: "prod", Group: "mailer", PlanID: "b2", Result: "stale", Entry: json.RawMessage(`{}`)},
		{Who: "cli:alice", Cluster: "dev", Group: "billing", PlanID: "c3", Result: "refused", Entry: json.RawMessage(`{}`)},
	} {
		r.At, r.Broker = at.Add(time.Duration(i)*time.Minute), "kafka"
		if _, err := s.RecordOffsetReset(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RecordOffsetReset(ctx, OffsetReset{Cluster: "prod", Group: "x", Entry: json.RawMessage(`{not json`)}); err == nil {
		t.Error("an entry that is not JSON was recorded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = e.open(t, db)
	defer func() { _ = s.Close() }()
	all, err := s.OffsetResets(ctx, "", "", 0)
	if err != nil || len(all) != 3 || all[0].PlanID != "c3" || all[2].PlanID != "a1" {
		t.Fatalf("all resets: %+v, %v; want c3, b2, a1", all, err)
	}
	got, err := s.OffsetResets(ctx, "prod", "billing", 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("prod/billing: %+v, %v", got, err)
	}
	r := got[0]
	if r.Who != "cli:alice" || r.Broker != "kafka" || r.Result != "ok" || !r.At.Equal(at) || string(r.Entry) != `{"plan":{"group":"billing"}}` {
		t.Errorf("prod/billing reset read back as %+v", r)
	}
}

// TestFinishOffsetReset: a reset recorded as applying before its commit
// reads back with its end result and entry once finished.
func TestFinishOffsetReset(t *testing.T) { forEngines(t, testFinishOffsetReset) }

func testFinishOffsetReset(t *testing.T, e engine, db string) {
	ctx := context.Background()
	s := e.open(t, db)
	defer func() { _ = s.Close() }()
	at := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	id, err := s.RecordOffsetReset(ctx, OffsetReset{At: at, Who: "cli:alice", Broker: "kafka", Cluster: "prod", Group: "billing", PlanID: "a1", Result: "applying", Entry: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FinishOffsetReset(ctx, id, "ok", json.RawMessage(`{"receipt":{"result":"ok"}}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishOffsetReset(ctx, id+1, "ok", json.RawMessage(`{}`)); err == nil {
		t.Error("finished a reset that was never recorded")
	}
	if err := s.FinishOffsetReset(ctx, id, "ok", json.RawMessage(`{not json`)); err == nil {
		t.Error("finished with an entry that is not JSON")
	}
	got, err := s.OffsetResets(ctx, "prod", "billing", 10)
	if err != nil || len(got) != 1 || got[0].Result != "ok" || string(got[0].Entry) != `{"receipt":{"result":"ok"}}` || !got[0].At.Equal(at) {
		t.Fatalf("finished reset read back as %+v, %v", got, err)
	}
}
