package alerts

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// rabbitPoll is one poll of one queue "orders" in vhost "/", at second
// sec, with its ready count, consumers and counters (published, consumed,
// delivered); counters < 0 leaves them unknown.
type rabbitPoll struct {
	sec             int
	ready           int64
	consumers       int
	pub, con, deliv int64
}

func rabbitSnaps(polls []rabbitPoll, dlq bool) []*queue.Snapshot {
	t0 := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	out := make([]*queue.Snapshot, len(polls))
	for i, p := range polls {
		q := queue.Queue{Cluster: "main", VHost: "/", Name: "orders", Ready: p.ready, Consumers: p.consumers}
		if p.pub >= 0 {
			q.Counters, q.HasCounters = queue.MessageCounters{Published: p.pub, Consumed: p.con, Delivered: p.deliv}, true
		}
		s := &queue.Snapshot{Broker: queue.RabbitMQ, Cluster: "main", Time: t0.Add(time.Duration(p.sec) * time.Second), Queues: []queue.Queue{q}}
		if dlq {
			s.DLQs = []queue.DLQ{{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "orders"}}
		}
		out[i] = s
	}
	return out
}

// steady are ten polls 5 s apart in which n ready messages sit while
// consumers (c of them) deliver and acknowledge nothing.
func steady(n int64, c int) []rabbitPoll {
	var ps []rabbitPoll
	for i := range 10 {
		ps = append(ps, rabbitPoll{sec: 5 * i, ready: n, consumers: c, pub: 100, con: 40, deliv: 45})
	}
	return ps
}

func TestQueueStatus(t *testing.T) {
	rising := steady(0, 1)
	for i := range rising {
		rising[i].ready = int64(10 + 10*i)
		rising[i].pub = int64(100 + 20*i)
		rising[i].con = int64(40 + 10*i)
		rising[i].deliv = rising[i].con
	}
	flowing := steady(50, 2)
	for i := range flowing {
		flowing[i].con += int64(30 * i)
		flowing[i].deliv += int64(30 * i)
	}
	noStats := steady(50, 2)
	for i := range noStats {
		noStats[i].pub = -1
	}
	tests := []struct {
		name   string
		polls  []rabbitPoll
		dlq    bool
		status queue.Status
		reason string
	}{
		{"ready and no consumer is stop, since the first poll without one", steady(12, 0), false, queue.StatusStop, "no consumer since 05:00 UTC (45s), 12 ready"},
		{"a DLQ without consumers is not judged", steady(12, 0), true, queue.StatusOK, queue.DLQReason},
		{"consumers that move nothing over a full window stall", steady(50, 3), false, queue.StatusStall, "3 consumers attached and nothing delivered or acknowledged since 05:00 UTC (45s) while 50 are ready"},
		{"without counters a still queue is not known to stall", noStats, false, queue.StatusOK, ""},
		{"consumers that acknowledge are ok", flowing, false, queue.StatusOK, ""},
		{"ready rising by more than a tenth of the published is warn", rising, false, queue.StatusWarn, "ready messages rising for 10 polls, now 100"},
		{"an empty queue is ok", steady(0, 0), false, queue.StatusOK, ""},
		{"a short window judges no stall", steady(50, 1)[:3], false, queue.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snaps := rabbitSnaps(tt.polls, tt.dlq)
			latest := snaps[len(snaps)-1]
			Evaluate(snaps[:len(snaps)-1], latest, StatusOptions{Window: 10})
			q := latest.Queues[0]
			if q.Status != tt.status || q.StatusReason != tt.reason {
				t.Errorf("status %s %q; want %s %q", q.Status, q.StatusReason, tt.status, tt.reason)
			}
			if r := q.Reader(); r.Status != q.EffectiveStatus() || r.Page != "/rabbitmq/main/queues/%2F/orders" {
				t.Errorf("reader %s page %s", r.Status, r.Page)
			}
		})
	}
}

// TestQueueStopOnsetOutlivesTheWindow: a queue without consumers for
// longer than the window says since when, not the window's length.
func TestQueueStopOnsetOutlivesTheWindow(t *testing.T) {
	e := NewEvaluator(StatusOptions{Window: 3})
	var polls []rabbitPoll
	for i := range 12 {
		polls = append(polls, rabbitPoll{sec: 60 * i, ready: 5, pub: 5})
	}
	var q queue.Queue
	for _, s := range rabbitSnaps(polls, false) {
		e.Evaluate(s)
		q = s.Queues[0]
	}
	if q.Status != queue.StatusStop || !strings.Contains(q.StatusReason, "(11m)") {
		t.Errorf("%s %q; want stop since 05:00 (11m)", q.Status, q.StatusReason)
	}
}

func TestQueueRates(t *testing.T) {
	tests := []struct {
		name             string
		polls            []rabbitPoll
		known            bool
		consume, produce float64
	}{
		{
			// The stepRate example: counters refreshed every 5 s, polled
			// every second.
			"between the first and the last change seen",
			[]rabbitPoll{{0, 9, 1, 0, 0, 0}, {1, 9, 1, 0, 0, 0}, {2, 9, 1, 50, 20, 20}, {3, 9, 1, 50, 20, 20}, {4, 9, 1, 50, 20, 20}, {5, 9, 1, 50, 20, 20}, {6, 9, 1, 50, 20, 20}, {7, 9, 1, 300, 120, 120}},
			true, 20, 50,
		},
		{"nothing moved is 0/s", steady(50, 1), true, 0, 0},
		{"one poll knows no rate", steady(50, 1)[:1], false, 0, 0},
		{"no counters, no rates", []rabbitPoll{{0, 1, 1, -1, 0, 0}, {5, 1, 1, -1, 0, 0}}, false, 0, 0},
		{"a restart of the counters starts again", []rabbitPoll{{0, 1, 1, 900, 900, 900}, {5, 1, 1, 10, 5, 5}, {10, 1, 1, 60, 25, 25}, {15, 1, 1, 110, 45, 45}}, true, 4, 10},
		{"one refresh in a short window is no rate", []rabbitPoll{{0, 1, 1, 0, 0, 0}, {1, 1, 1, 0, 0, 0}, {2, 1, 1, 60, 20, 20}, {3, 1, 1, 60, 20, 20}}, false, 0, 0},
		{"one refresh in a long window is the plain delta", []rabbitPoll{{0, 1, 1, 0, 0, 0}, {15, 1, 1, 0, 0, 0}, {30, 1, 1, 60, 30, 30}}, true, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snaps := rabbitSnaps(tt.polls, false)
			latest := snaps[len(snaps)-1]
			Evaluate(snaps[:len(snaps)-1], latest, StatusOptions{Window: 10})
			e := latest.Queues[0].ETA
			if e.Rates != tt.known || math.Abs(e.ConsumeRate-tt.consume) > 1e-9 || math.Abs(e.ProduceRate-tt.produce) > 1e-9 {
				t.Errorf("rates %v consume %v produce %v; want %v %v %v", e.Rates, e.ConsumeRate, e.ProduceRate, tt.known, tt.consume, tt.produce)
			}
		})
	}
}

// listedAt stamps each poll's counters with the time of the listing that
// read them (second listed[i]), as polls between listings carry them.
func listedAt(snaps []*queue.Snapshot, listed []int) {
	t0 := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	for i, s := range snaps {
		s.Queues[0].CountersAt = t0.Add(time.Duration(listed[i]) * time.Second)
	}
}

// TestQueueRatesBetweenListings: polls every 15 s take depths from
// rabbitmq_prometheus and carry the counters of the last management
// listing, with its time. Rates are counter deltas over the time between
// the listings that read them, not between the polls that carried them;
// a stall needs counters read at least two refreshes apart.
func TestQueueRatesBetweenListings(t *testing.T) {
	// Published 10/s and consumed 4/s all along; listings at 0 s and 90 s,
	// polls from 15 s to 135 s (one listing inside the window): 900 in the
	// 90 s between the listings is 10/s (over the polls' 120 s it would
	// read 7.5/s).
	var polls []rabbitPoll
	var listed []int
	for sec := 15; sec <= 135; sec += 15 {
		l := 0
		if sec >= 90 {
			l = 90
		}
		polls = append(polls, rabbitPoll{sec: sec, ready: 5, consumers: 1, pub: int64(10 * l), con: int64(4 * l), deliv: int64(4 * l)})
		listed = append(listed, l)
	}
	snaps := rabbitSnaps(polls, false)
	listedAt(snaps, listed)
	latest := snaps[len(snaps)-1]
	Evaluate(snaps[:len(snaps)-1], latest, StatusOptions{Window: 10})
	if e := latest.Queues[0].ETA; !e.Rates || math.Abs(e.ProduceRate-10) > 1e-9 || math.Abs(e.ConsumeRate-4) > 1e-9 {
		t.Errorf("rates %v: produce %v, consume %v; want 10/s and 4/s", e.Rates, e.ProduceRate, e.ConsumeRate)
	}

	still := func(listed []int) queue.Status {
		snaps := rabbitSnaps(steady(50, 3), false)
		listedAt(snaps, listed)
		latest := snaps[len(snaps)-1]
		Evaluate(snaps[:len(snaps)-1], latest, StatusOptions{Window: 10})
		return latest.Queues[0].Status
	}
	// steady's polls are 5 s apart, 0 s to 45 s.
	if s := still([]int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}); s != queue.StatusOK {
		t.Errorf("counters of one listing: %s, want ok (nothing known)", s)
	}
	if s := still([]int{0, 0, 0, 0, 0, 25, 25, 25, 25, 25}); s != queue.StatusStall {
		t.Errorf("counters of two listings 25 s apart: %s, want stall", s)
	}
}
