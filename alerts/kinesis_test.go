package alerts

import (
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// TestKinesisStatus judges applications from two reads a minute apart,
// one case per rule of KinesisStatus.
func TestKinesisStatus(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	lease := func(shard, owner string, counter int64, checkpoint string, behind time.Duration) queue.KinesisLease {
		return queue.KinesisLease{Shard: shard, Owner: owner, Counter: counter, Checkpoint: checkpoint, Behind: behind, HasLag: true, Open: true}
	}
	app := func(leases ...queue.KinesisLease) *queue.KinesisApplication {
		return &queue.KinesisApplication{Name: "billing", Stream: "orders", LeaseTable: "billing", FailoverTime: 10 * time.Second, Leases: leases}
	}
	closed := lease("shardId-0", "w1", 9, "100", 0)
	closed.Open, closed.Children = false, []string{"shardId-2", "shardId-3"}
	unleased := app(lease("shardId-0", "w1", 2, "100", 0))
	unleased.Unleased = []string{"shardId-1"}
	pingPong := lease("shardId-0", "w2", 30, "100", 0)
	pingPong.OwnerSwitches = 4

	for _, tt := range []struct {
		name      string
		prev, cur *queue.KinesisApplication
		want      queue.Status
		reason    string
	}{
		{
			"first read", nil, app(lease("shardId-0", "w1", 5, "100", 2*time.Second)), queue.StatusOK,
			"1 lease held by 1 worker; shardId-0 is 2s behind the newest record",
		},
		{
			"moving", app(lease("shardId-0", "w1", 5, "100", 2*time.Second)), app(lease("shardId-0", "w1", 11, "200", time.Second)), queue.StatusOK,
			"1 lease held by 1 worker; shardId-0 is 1s behind the newest record",
		},
		{
			"no renewal: stop", app(lease("shardId-0", "w1", 5, "100", 0)), app(lease("shardId-0", "w1", 5, "100", 0)), queue.StatusStop,
			"no lease renewed in 1m (failover time 10s): no worker runs",
		},
		{
			"no owner while behind: stop", nil, app(lease("shardId-0", "", 5, "100", 3*time.Second)), queue.StatusStop,
			"no worker holds a lease while 1 shard is behind",
		},
		{
			"checkpoint unmoved while behind: stall",
			app(lease("shardId-0", "w1", 5, "100", 12*time.Second), lease("shardId-1", "w1", 5, "7", time.Second)),
			app(lease("shardId-0", "w1", 11, "100", 12*time.Second), lease("shardId-1", "w1", 11, "7", 3*time.Second)), queue.StatusStall,
			"checkpoint of shardId-0 unmoved since the last read, 12s behind the newest record (and 1 more shard)",
		},
		{
			"caught up and unmoved: ok", app(lease("shardId-0", "w1", 5, "100", 0)), app(lease("shardId-0", "w1", 11, "100", 0)), queue.StatusOK,
			"1 lease held by 1 worker",
		},
		{
			"parent not at SHARD_END: warn", app(closed), app(func() queue.KinesisLease { c := closed; c.Counter = 15; return c }()), queue.StatusWarn,
			"closed shard shardId-0 not read to SHARD_END: its children shardId-2, shardId-3 wait",
		},
		{
			"lease ping-pong: warn", app(lease("shardId-0", "w1", 20, "100", 0)), app(pingPong), queue.StatusWarn,
			"lease of shardId-0 changed owner 4 times since its last checkpoint (now w2): workers take it from each other",
		},
		{"open shard without lease: warn", nil, unleased, queue.StatusWarn, "open shard shardId-1 has no lease: no worker reads it"},
		{
			"no lease at all: stop", nil, &queue.KinesisApplication{Stream: "orders", LeaseTable: "billing", Unleased: []string{"shardId-0"}}, queue.StatusStop,
			"no lease in billing: no worker reads orders",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, reason := KinesisStatus(tt.prev, t0, tt.cur, t1)
			if st != tt.want || reason != tt.reason {
				t.Errorf("got %s %q, want %s %q", st, reason, tt.want, tt.reason)
			}
		})
	}
}

// TestEvaluateKinesis runs two account reads through an Evaluator: the
// second, whose lease counters did not move, is stop since the first
// read, and a poll serving that read again is judged the same.
func TestEvaluateKinesis(t *testing.T) {
	e := NewEvaluator(StatusOptions{})
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	read := func(at, poll time.Time) *queue.Snapshot {
		return &queue.Snapshot{
			Broker: queue.Kinesis, Cluster: "prod", Time: poll, Kinesis: &queue.KinesisAccount{ReadAt: at},
			KinesisApps: []queue.KinesisApplication{{
				Cluster: "prod", Name: "billing", FailoverTime: 10 * time.Second,
				Leases: []queue.KinesisLease{{Shard: "shardId-0", Owner: "w1", Counter: 3, Checkpoint: "1", HasLag: true, Open: true}},
			}},
		}
	}
	first := read(t0, t0)
	e.Evaluate(first)
	if a := first.KinesisApps[0]; a.Status != queue.StatusOK {
		t.Fatalf("first read: %s %q", a.Status, a.StatusReason)
	}
	t1 := t0.Add(time.Minute)
	for _, poll := range []time.Time{t1, t1.Add(15 * time.Second)} {
		s := read(t1, poll)
		e.Evaluate(s)
		if a := s.KinesisApps[0]; a.Status != queue.StatusStop || !a.StatusSince.Equal(t0) {
			t.Errorf("poll at %s: %s since %s %q, want stop since the first read", poll, a.Status, a.StatusSince, a.StatusReason)
		}
	}
}

// TestEvaluateKinesisFromHistory: the stateless Evaluate learns the read
// before from history, so an application whose leases did not move
// between two reads is stop, as the Evaluator that saw both says.
func TestEvaluateKinesisFromHistory(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	read := func(at time.Time) *queue.Snapshot {
		return &queue.Snapshot{
			Broker: queue.Kinesis, Cluster: "prod", Time: at, Kinesis: &queue.KinesisAccount{ReadAt: at},
			KinesisApps: []queue.KinesisApplication{{
				Cluster: "prod", Name: "billing", FailoverTime: 10 * time.Second,
				Leases: []queue.KinesisLease{{Shard: "shardId-0", Owner: "w1", Counter: 3, Checkpoint: "1", HasLag: true, Open: true}},
			}},
		}
	}
	before, latest := read(t0), read(t0.Add(time.Minute))
	Evaluate([]*queue.Snapshot{before}, latest, StatusOptions{})
	if a := latest.KinesisApps[0]; a.Status != queue.StatusStop {
		t.Errorf("with the read before in history: %s %q, want stop", a.Status, a.StatusReason)
	}
	if a := before.KinesisApps[0]; a.Status != "" {
		t.Errorf("Evaluate changed the history's snapshot: %s", a.Status)
	}
}
