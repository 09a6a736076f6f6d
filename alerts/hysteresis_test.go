package alerts

import (
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// flapReader is one kind of reader, made bad (stop) or good (ok) at a poll,
// and read back from the evaluated snapshot.
type flapReader struct {
	name string
	poll func(i int, bad bool) *queue.Snapshot
	read func(s *queue.Snapshot) (queue.Status, time.Time, string)
}

var flapReaders = []flapReader{
	{
		name: "consumer group",
		poll: func(i int, bad bool) *queue.Snapshot {
			members := 2
			if bad {
				members = 0
			}
			// Consuming, 500 behind, whenever it has members.
			return snap(i, group(members, part("orders", 3, int64(1000+10*i), int64(1500+10*i))))
		},
		read: func(s *queue.Snapshot) (queue.Status, time.Time, string) {
			g := s.Groups[0]
			return g.Status, g.StatusSince, g.StatusReason
		},
	},
	{
		name: "JetStream consumer",
		poll: func(i int, bad bool) *queue.Snapshot {
			return &queue.Snapshot{
				Broker: queue.NATS, Cluster: "prod", Time: t0.Add(time.Duration(i) * time.Minute),
				Streams:   []queue.Stream{{Name: "LEDGER", FirstSeq: 1, LastSeq: 100}},
				Consumers: []queue.StreamConsumer{{Stream: "LEDGER", Name: "ledger-reader", Pending: 10, DeliveredSeq: 90, PushBound: !bad}},
			}
		},
		read: func(s *queue.Snapshot) (queue.Status, time.Time, string) {
			c := s.Consumers[0]
			return c.Status, c.StatusSince, c.StatusReason
		},
	},
	{
		name: "RabbitMQ queue",
		poll: func(i int, bad bool) *queue.Snapshot {
			q := queue.Queue{VHost: "/", Name: "orders", Consumers: 1}
			if bad {
				q.Consumers, q.Ready = 0, 12
			}
			return &queue.Snapshot{Broker: queue.RabbitMQ, Cluster: "prod", Time: t0.Add(time.Duration(i) * time.Minute), Queues: []queue.Queue{q}}
		},
		read: func(s *queue.Snapshot) (queue.Status, time.Time, string) {
			q := s.Queues[0]
			return q.Status, q.StatusSince, q.StatusReason
		},
	},
	{
		name: "replication slot",
		poll: func(i int, bad bool) *queue.Snapshot {
			return &queue.Snapshot{
				Broker: queue.Outbox, Cluster: "db", Time: t0.Add(time.Duration(i) * time.Minute),
				Slots: []queue.ReplicationSlot{{Slot: "debezium", LagBytes: 2048, Active: !bad}},
			}
		},
		read: func(s *queue.Snapshot) (queue.Status, time.Time, string) {
			sl := s.Slots[0]
			return sl.Status, sl.StatusSince, sl.StatusReason
		},
	},
}

// TestHysteresisHoldsAFlap feeds every reader kind a condition that comes
// and goes, a minute a poll: a status is shown once two polls in a row
// judge it, its onset the first of them, and it is kept through one poll
// that judges otherwise, whose finding its sentence says.
func TestHysteresisHoldsAFlap(t *testing.T) {
	bad := []bool{false, true, false, false, true, false, true, true, true, false, true, false, false}
	want := []queue.Status{"ok", "ok", "ok", "ok", "ok", "ok", "ok", "stop", "stop", "stop", "stop", "stop", "ok"}
	onset := t0.Add(6 * time.Minute) // poll 6, the first of the two that showed it
	for _, r := range flapReaders {
		t.Run(r.name, func(t *testing.T) {
			e := NewEvaluator(StatusOptions{Window: 3, HysteresisPolls: 2})
			for i, b := range bad {
				s := r.poll(i, b)
				e.Evaluate(s)
				st, since, reason := r.read(s)
				if st != want[i] {
					t.Errorf("poll %d (judged %s): shown %s (%q); want %s", i, map[bool]string{true: "stop", false: "ok"}[b], st, reason, want[i])
					continue
				}
				switch {
				case st == queue.StatusStop && !since.Equal(onset):
					t.Errorf("poll %d: stop since %v; want since %v", i, since, onset)
				case st == queue.StatusOK && !since.IsZero():
					t.Errorf("poll %d: ok since %v; want no onset", i, since)
				}
				held := st == queue.StatusStop && !b || st == queue.StatusOK && b
				found := "shown once 2 polls in a row find it"
				if strings.Contains(reason, found) != held {
					t.Errorf("poll %d: %s %q; want the last poll's finding said: %v", i, st, reason, held)
				}
				if i == 9 && !strings.HasPrefix(reason, "stop since 12:06 UTC (3m); the last poll found ok") {
					t.Errorf("poll 9: %q; want it to say since when it is shown stop and what the last poll found", reason)
				}
			}
		})
	}
}

// TestHysteresisOnePoll: with hysteresis_polls 1 every poll's judgement
// is shown, as before hysteresis.
func TestHysteresisOnePoll(t *testing.T) {
	e := NewEvaluator(StatusOptions{Window: 3, HysteresisPolls: 1})
	r := flapReaders[0]
	for i, b := range []bool{false, true, false} {
		s := r.poll(i, b)
		e.Evaluate(s)
		if st, _, _ := r.read(s); (st == queue.StatusStop) != b {
			t.Errorf("poll %d: %s; want the poll's own judgement", i, st)
		}
	}
}

// TestHysteresisErrorAtOnce: an error is shown at the poll that cannot
// read the reader, and what is read again at the next, never a status held
// over data not read.
func TestHysteresisErrorAtOnce(t *testing.T) {
	e := NewEvaluator(StatusOptions{Window: 3})
	e.Evaluate(memberless(0))
	broken := memberless(1)
	broken.Groups[0].Err = "coordinator not available"
	e.Evaluate(broken)
	if g := broken.Groups[0]; g.Status != queue.StatusError || g.StatusReason != "coordinator not available" {
		t.Errorf("unreadable: %s %q; want error at once", g.Status, g.StatusReason)
	}
	back := memberless(2)
	e.Evaluate(back)
	if g := back.Groups[0]; g.Status != queue.StatusStop {
		t.Errorf("read again: %s %q; want stop at once", g.Status, g.StatusReason)
	}
}

// TestHysteresisComplete: the poll that completes the one before it takes
// its place, so the two count as one poll, not two in a row.
func TestHysteresisComplete(t *testing.T) {
	e := NewEvaluator(StatusOptions{Window: 3})
	e.Evaluate(healthy(0))
	first := memberless(1)
	e.Evaluate(first)
	complete := memberless(1)
	complete.Time = first.Time.Add(300 * time.Millisecond)
	e.Complete(complete)
	if g := complete.Groups[0]; g.Status != queue.StatusOK {
		t.Errorf("completed poll: %s; want ok, one poll of stop so far", g.Status)
	}
	next := memberless(2)
	e.Evaluate(next)
	if g := next.Groups[0]; g.Status != queue.StatusStop || !g.StatusSince.Equal(complete.Time) {
		t.Errorf("second poll: %s since %v; want stop since %v", g.Status, g.StatusSince, complete.Time)
	}
}
