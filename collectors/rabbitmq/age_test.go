package rabbitmq

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

func TestNextBacklog(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type poll struct {
		depth     int64
		consumers int
		since     time.Time // want
	}
	tests := []struct {
		name  string
		polls []poll // every 10 s from t0
	}{
		{"backlog after an empty poll dates from that poll", []poll{{0, 0, time.Time{}}, {2, 0, at(0)}, {5, 0, at(0)}}},
		{"falling but not empty keeps it", []poll{{0, 0, time.Time{}}, {5, 0, at(0)}, {3, 0, at(0)}}},
		{"empty forgets it", []poll{{0, 0, time.Time{}}, {5, 0, at(0)}, {0, 0, time.Time{}}, {0, 0, time.Time{}}, {1, 0, at(30)}}},
		{"already there at the first poll: that poll", []poll{{4, 0, at(0)}, {4, 0, at(0)}}},
		{"held by a browse for one poll", []poll{{0, 0, time.Time{}}, {3, 0, at(0)}, {0, 1, at(0)}, {3, 0, at(0)}}},
		{"empty with a consumer twice is empty", []poll{{3, 0, at(0)}, {0, 1, at(0)}, {0, 1, time.Time{}}, {1, 1, at(20)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b backlog
			known := false
			for i, p := range tt.polls {
				b = nextBacklog(b, known, p.depth, p.consumers, at(10*i))
				known = true
				if !b.since.Equal(p.since) {
					t.Fatalf("poll %d (depth %d): since %v, want %v", i, p.depth, b.since, p.since)
				}
			}
		})
	}
}

// TestOldestAgeEstimates follows a quorum DLQ through the ways its age is
// estimated without reading it: from the backlog, from a browse's
// sighting of the head, back to the backlog when messages leave, and 0
// when it is empty.
func TestOldestAgeEstimates(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("estimate")
	ch := channel(t, vh)
	a.queue(vh, "q.dlq", map[string]any{"x-queue-type": "quorum"})
	s := newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL}, Options{VHosts: []string{vh}, DLQNamePattern: testNamePattern})
	d := mustDLQ(t, poll(t, s), vh, "q.dlq")
	if d.Messages != 0 || !d.HasOldestAge || d.OldestAge != 0 || d.OldestAgeBasis != queue.AgeExact {
		t.Fatalf("empty: %+v", d)
	}
	emptyAt := time.Now()
	time.Sleep(300 * time.Millisecond)
	publish(t, ch, "", "q.dlq", text("a"))
	publish(t, ch, "", "q.dlq", text("b"))
	waitDepth(t, ch, "q.dlq", 2)

	d = mustDLQ(t, poll(t, s), vh, "q.dlq")
	if d.OldestAgeBasis != queue.AgeBacklog || d.OldestAge < 300*time.Millisecond || d.OldestAge > time.Since(emptyAt)+time.Second {
		t.Errorf("after arrival: age %v basis %q, want about %v from the backlog", d.OldestAge, d.OldestAgeBasis, time.Since(emptyAt))
	}

	// A browse saw the head: dead-lettered an hour ago.
	died := time.Now().Add(-time.Hour)
	s.opts.Cluster.SawHead(vh, "q.dlq", 2, &amqp.Delivery{Headers: amqp.Table{"x-death": []any{amqp.Table{"time": died}}}})
	d = mustDLQ(t, poll(t, s), vh, "q.dlq")
	if d.OldestAgeBasis != queue.AgeBrowsed || d.OldestAge < 59*time.Minute || d.OldestAge > 61*time.Minute {
		t.Errorf("after a browse: age %v basis %q, want about 1h as browsed", d.OldestAge, d.OldestAgeBasis)
	}

	// The head leaves: the sighting is stale and forgotten. A quorum
	// queue counts a basic.get as a consumer until it is settled, and
	// while a consumer holds messages the depth says nothing about the
	// head, so this can take a poll more.
	getOne(t, ch, "q.dlq")
	for range 20 {
		if d = mustDLQ(t, poll(t, s), vh, "q.dlq"); d.OldestAgeBasis != queue.AgeBrowsed {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if d.Messages != 1 || d.OldestAgeBasis != queue.AgeBacklog || d.OldestAge > time.Minute {
		t.Errorf("after the head left: %d messages, age %v basis %q; want 1 and the backlog estimate", d.Messages, d.OldestAge, d.OldestAgeBasis)
	}
	if _, ok := s.opts.Cluster.HeadSeen(vh, "q.dlq"); ok {
		t.Error("sighting kept after the head left")
	}

	getOne(t, ch, "q.dlq")
	d = mustDLQ(t, poll(t, s), vh, "q.dlq")
	if d.Messages != 0 || d.OldestAge != 0 || d.OldestAgeBasis != queue.AgeExact {
		t.Errorf("emptied: %+v", d)
	}
}
