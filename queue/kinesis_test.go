package queue

import (
	"testing"
	"time"
)

// TestKinesisApplicationReader checks an application's reader: the
// largest time lag and its shard, the shards behind as the backlog, the
// distinct lease owners as members, and the retention headroom from the
// oldest checkpoint still behind.
func TestKinesisApplicationReader(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	a := KinesisApplication{
		Cluster: "prod", Name: "billing", Retention: 24 * time.Hour,
		Leases: []KinesisLease{
			{Shard: "shardId-0", Owner: "w1", HasLag: true, Behind: 3 * time.Second, Arrival: now.Add(-20 * time.Hour)},
			{Shard: "shardId-1", Owner: "w1", HasLag: true, Behind: 9 * time.Second, Arrival: now.Add(-time.Hour)},
			{Shard: "shardId-2", Owner: "w2", HasLag: true, Arrival: now.Add(-23 * time.Hour)}, // caught up: nothing to lose
			{Shard: "shardId-3", Checkpoint: "LATEST"},                                         // not read: nothing processed yet
		},
	}
	lag, shard, ok := a.Lag()
	if !ok || lag != 9*time.Second || shard != "shardId-1" {
		t.Errorf("Lag() = %s %s %v, want 9s on shardId-1", lag, shard, ok)
	}
	h := a.RetentionHeadroom(now)
	if !h.Known || h.Seconds != (4*time.Hour).Seconds() || h.Where != "shardId-0" {
		t.Errorf("headroom %+v, want 4h on shardId-0", h)
	}
	a.Headroom = h
	r := a.Reader()
	if r.Broker != Kinesis || r.LagSeconds != 9 || r.LagBasis != LagExact || r.Backlog != 2 || r.BacklogUnit != UnitShards ||
		r.Members != 2 || r.Page != "/kinesis/prod/applications/billing" || r.BacklogText() != "2 shards behind" || !r.Headroom.Known {
		t.Errorf("reader %+v", r)
	}
	a.Leases[3].LagErr = "throttled"
	if r := a.Reader(); r.BacklogKnown || r.LagBasis != LagEstimate {
		t.Errorf("a lease not read: %+v, want the backlog unknown and the lag a lower bound", r)
	}
	a.Err = "scan lease table: no such table"
	if r := a.Reader(); r.Status != StatusError || r.BacklogKnown || r.LagBasis != LagUnknown {
		t.Errorf("unread application's reader %+v", r)
	}
}
