package alerts

import (
	"errors"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// cpoint is one poll of consumer C on stream S, whose messages are
// 1..last (first is 1 unless set).
type cpoint struct {
	pending, delivered, last, first uint64
	ackPending, maxAckPending       int
	waiting                         int
	push, bound                     bool
}

func consumerSeries(points ...cpoint) ([]*queue.Snapshot, *queue.Snapshot) {
	var snaps []*queue.Snapshot
	for i, p := range points {
		first := p.first
		if first == 0 {
			first = 1
		}
		snaps = append(snaps, &queue.Snapshot{
			Broker: queue.NATS, Cluster: "prod", Time: t0.Add(time.Duration(i) * time.Minute),
			Streams: []queue.Stream{{Cluster: "prod", Name: "S", FirstSeq: first, LastSeq: p.last}},
			Consumers: []queue.StreamConsumer{{
				Cluster: "prod", Stream: "S", Name: "C", Pull: !p.push, PushBound: p.bound,
				Pending: p.pending, DeliveredSeq: p.delivered, AckPending: p.ackPending,
				MaxAckPending: cmpOr(p.maxAckPending, 1000), Waiting: p.waiting,
			}},
		})
	}
	return snaps[:len(snaps)-1], snaps[len(snaps)-1]
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// repeat returns n polls of p, the delivered sequence and stream growing
// by step each poll (pending unchanged when they grow together).
func repeat(n int, p cpoint, step uint64) []cpoint {
	out := make([]cpoint, n)
	for i := range out {
		out[i] = p
		out[i].delivered += uint64(i) * step
		out[i].last += uint64(i) * step
	}
	return out
}

func TestEvaluateConsumers(t *testing.T) {
	tests := []struct {
		name       string
		points     []cpoint
		wantStatus queue.Status
		wantReason string
	}{
		{
			name:       "caught up",
			points:     []cpoint{{last: 10, delivered: 10}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "max ack pending reached with work pending",
			points:     []cpoint{{pending: 7, delivered: 3, last: 10, ackPending: 3, maxAckPending: 3, waiting: 1}},
			wantStatus: queue.StatusStall,
			wantReason: "max_ack_pending reached: 3 delivered messages unacknowledged, so nothing more is delivered while 7 are pending",
		},
		{
			name:       "max ack pending reached with nothing pending",
			points:     []cpoint{{delivered: 10, last: 10, ackPending: 3, maxAckPending: 3}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "push consumer without subscriber",
			points:     []cpoint{{push: true, pending: 10, last: 10}, {push: true, pending: 10, last: 10}, {push: true, pending: 12, last: 12}},
			wantStatus: queue.StatusStop,
			wantReason: "no subscriber bound to its deliver subject since 12:00 UTC (2m), 12 pending",
		},
		{
			name:       "push consumer bound",
			points:     []cpoint{{push: true, bound: true, pending: 10, last: 10}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "delivered past the stream's end",
			points:     []cpoint{{delivered: 99, last: 10}},
			wantStatus: queue.StatusStall,
			wantReason: "delivered sequence 99 is past the stream's last sequence 10 (purged or re-created): new messages up to it are skipped",
		},
		{
			name:       "backlog removed by limits before delivery",
			points:     []cpoint{{pending: 5, delivered: 2, first: 6, last: 10}},
			wantStatus: queue.StatusStall,
			wantReason: "delivered sequence 2 is below the stream's first sequence 6: 3 messages were removed by the stream's limits before delivery",
		},
		{
			name:       "pull consumer nobody pulls, full window",
			points:     repeat(3, cpoint{pending: 5, delivered: 5, last: 10}, 0),
			wantStatus: queue.StatusStall,
			wantReason: "no pull request waiting and nothing delivered since 12:00 UTC (2m) while 5 are pending",
		},
		{
			name:       "pull consumer nobody pulls, window not full",
			points:     repeat(2, cpoint{pending: 5, delivered: 5, last: 10}, 0),
			wantStatus: queue.StatusOK,
		},
		{
			name:       "pull consumer between fetches: delivery moves",
			points:     repeat(3, cpoint{pending: 5, delivered: 5, last: 10}, 4),
			wantStatus: queue.StatusOK,
		},
		{
			name:       "pull requests waiting",
			points:     repeat(3, cpoint{pending: 5, delivered: 5, last: 10, waiting: 2}, 0),
			wantStatus: queue.StatusOK,
		},
		{
			name: "pending rising",
			points: []cpoint{
				{pending: 10, delivered: 10, last: 20, waiting: 1},
				{pending: 20, delivered: 15, last: 35, waiting: 1},
				{pending: 30, delivered: 20, last: 50, waiting: 1},
			},
			wantStatus: queue.StatusWarn,
			wantReason: "pending rising for 3 polls, now 30",
		},
		{
			name: "pending touched zero",
			points: []cpoint{
				{pending: 0, delivered: 20, last: 20, waiting: 1},
				{pending: 20, delivered: 15, last: 35, waiting: 1},
				{pending: 30, delivered: 20, last: 50, waiting: 1},
			},
			wantStatus: queue.StatusOK,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			history, latest := consumerSeries(tt.points...)
			Evaluate(history, latest, StatusOptions{Window: 3})
			c := latest.Consumers[0]
			if c.Status != tt.wantStatus || c.StatusReason != tt.wantReason {
				t.Errorf("got %s %q, want %s %q", c.Status, c.StatusReason, tt.wantStatus, tt.wantReason)
			}
		})
	}
}

func TestEvaluateConsumerErrors(t *testing.T) {
	_, latest := consumerSeries(cpoint{pending: 7, last: 7})
	latest.Consumers[0].Err = "its leader did not answer the consumer listing"
	Evaluate(nil, latest, StatusOptions{})
	if c := latest.Consumers[0]; c.EffectiveStatus() != queue.StatusError || c.EffectiveReason() != c.Err {
		t.Errorf("unreadable consumer: %s %q", c.EffectiveStatus(), c.EffectiveReason())
	}
	_, latest = consumerSeries(cpoint{pending: 7, last: 7})
	latest.Err = errors.New("connection refused")
	Evaluate(nil, latest, StatusOptions{})
	if c := latest.Consumers[0]; c.Status != queue.StatusError || c.StatusReason != "connection refused" {
		t.Errorf("failed poll: %s %q", c.Status, c.StatusReason)
	}
}
