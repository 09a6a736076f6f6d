package alerts

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/queuewatch/queuewatch/queue"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// snap is poll i of cluster prod, taken i minutes after t0.
func snap(i int, groups ...queue.ConsumerGroup) *queue.Snapshot {
	return &queue.Snapshot{
		Broker: queue.Kafka, Cluster: "prod",
		Time:   t0.Add(time.Duration(i) * time.Minute),
		Groups: groups,
	}
}

func group(members int, parts ...queue.PartitionLag) queue.ConsumerGroup {
	return queue.ConsumerGroup{Cluster: "prod", Name: "g", Members: members, Partitions: parts}
}

// part is a partition whose log starts at 0; a negative committed offset
// means nothing is committed.
func part(topic string, partition int32, committed, end int64) queue.PartitionLag {
	lag, lost := queue.Lag(committed, committed >= 0, 0, end)
	return queue.PartitionLag{
		Topic: topic, Partition: partition, Committed: committed, HasCommit: committed >= 0,
		End: end, Lag: lag, Lost: lost,
	}
}

// point is one poll of group g consuming orders/3.
type point struct {
	committed, end int64
	members        int
}

// series turns points into snapshots a minute apart: the history and the
// latest snapshot.
func series(points ...point) ([]*queue.Snapshot, *queue.Snapshot) {
	var snaps []*queue.Snapshot
	for i, p := range points {
		snaps = append(snaps, snap(i, group(p.members, part("orders", 3, p.committed, p.end))))
	}
	return snaps[:len(snaps)-1], snaps[len(snaps)-1]
}

func TestEvaluateRules(t *testing.T) {
	tests := []struct {
		name       string
		window     int
		points     []point
		wantStatus queue.Status
		wantReason string
	}{
		{
			name:       "ok: committed advancing and lag steady",
			points:     []point{{100, 400, 2}, {200, 500, 2}, {300, 600, 2}, {400, 700, 2}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "ok: lag 0 with no members",
			points:     []point{{500, 500, 0}, {500, 500, 0}, {500, 500, 0}, {500, 500, 0}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "ok: lag 0 after a rewind",
			points:     []point{{500, 500, 2}, {300, 500, 2}, {500, 500, 2}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "ok: lag touched zero within the window",
			points:     []point{{500, 500, 2}, {500, 600, 2}, {500, 700, 2}, {500, 800, 2}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "ok: small lag rising with the produce rate",
			points:     []point{{1000, 1010, 2}, {2000, 2012, 2}, {3100, 3114, 2}, {4300, 4316, 2}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "ok: too little history for a stall",
			window:     10,
			points:     []point{{300, 900, 2}, {300, 900, 2}, {300, 900, 2}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "ok: lag dips below where the window started",
			points:     []point{{100, 200, 2}, {150, 300, 2}, {310, 400, 2}, {350, 600, 2}},
			wantStatus: queue.StatusOK,
		},
		{
			// Lag 100, 150, 140, 250: a consumer's bursts make it dip
			// between polls, but it grows by 150 of 400 produced.
			name:       "warn: lag grows through a burst",
			points:     []point{{100, 200, 2}, {150, 300, 2}, {260, 400, 2}, {350, 600, 2}},
			wantStatus: queue.StatusWarn,
			wantReason: "lag rising for 4 polls on orders/3",
		},
		{
			name:       "warn: moving but lag never falls and ends higher",
			points:     []point{{100, 200, 2}, {150, 300, 2}, {200, 350, 2}, {250, 500, 2}},
			wantStatus: queue.StatusWarn,
			wantReason: "lag rising for 4 polls on orders/3",
		},
		{
			name:       "ok: moving with lag flat",
			points:     []point{{100, 200, 2}, {200, 300, 2}, {300, 400, 2}},
			wantStatus: queue.StatusOK,
		},
		{
			name: "stall: offset stuck while lag grows",
			points: []point{
				{1000, 2000, 2},
				{1000, 4000, 2},
				{1000, 6000, 2},
				{1000, 8000, 2},
				{1000, 10000, 2},
				{1000, 12000, 2},
				{1000, 13400, 2},
			},
			wantStatus: queue.StatusStall,
			wantReason: "committed offset has not moved since 12:00 UTC (6m) while lag is 12,400 on orders/3",
		},
		{
			name:       "stall: offset stuck with lag steady",
			points:     []point{{1000, 1500, 1}, {1000, 1500, 1}, {1000, 1500, 1}},
			wantStatus: queue.StatusStall,
			wantReason: "committed offset has not moved since 12:00 UTC (2m) while lag is 500 on orders/3",
		},
		{
			name:       "stall: members but nothing ever committed",
			points:     []point{{-1, 300, 1}, {-1, 300, 1}, {-1, 300, 1}},
			wantStatus: queue.StatusStall,
			wantReason: "nothing committed since 12:00 UTC (2m) while lag is 300 on orders/3",
		},
		{
			name:       "ok: first commit counts as movement",
			points:     []point{{-1, 300, 1}, {-1, 300, 1}, {100, 300, 1}},
			wantStatus: queue.StatusOK,
		},
		{
			name: "stop: no members for the whole window",
			points: []point{
				{1000, 49200, 0},
				{1000, 49200, 0},
				{1000, 49200, 0},
				{1000, 49200, 0},
				{1000, 49200, 0},
				{1000, 49200, 0},
				{1000, 49200, 0},
				{1000, 49200, 0},
				{1000, 49200, 0},
				{1000, 49200, 0},
			},
			wantStatus: queue.StatusStop,
			wantReason: "no members since 12:00 UTC (9m), lag 48,200",
		},
		{
			name:       "stop: members left two polls ago",
			points:     []point{{100, 200, 3}, {200, 300, 3}, {250, 400, 0}, {250, 500, 0}, {250, 600, 0}},
			wantStatus: queue.StatusStop,
			wantReason: "no members since 12:02 UTC (2m), lag 350",
		},
		{
			name:       "stop wins over rewind",
			points:     []point{{500, 900, 2}, {300, 900, 0}, {300, 900, 0}},
			wantStatus: queue.StatusStop,
			wantReason: "no members since 12:01 UTC (1m), lag 600",
		},
		{
			name:       "rewind: committed offset went back",
			points:     []point{{5000, 6000, 2}, {3800, 6000, 2}, {3900, 6000, 2}},
			wantStatus: queue.StatusRewind,
			wantReason: "committed offset went back by 1,200 on orders/3",
		},
		{
			name:       "rewind: largest step back is reported",
			points:     []point{{5000, 9000, 2}, {4900, 9000, 2}, {5000, 9000, 2}, {2000, 9000, 2}, {2100, 9000, 2}},
			wantStatus: queue.StatusRewind,
			wantReason: "committed offset went back by 3,000 on orders/3",
		},
		{
			name:       "ok: losing the commit is not a rewind",
			points:     []point{{100, 300, 2}, {-1, 300, 2}, {250, 400, 2}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "insufficient history: one poll with lag is ok",
			points:     []point{{100, 300, 2}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "insufficient history: two still polls are not a stall",
			points:     []point{{100, 300, 2}, {100, 300, 2}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "insufficient history: two rising polls are not a warn",
			points:     []point{{100, 300, 2}, {150, 500, 2}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "insufficient history: one poll without members is stop",
			points:     []point{{90, 100, 0}},
			wantStatus: queue.StatusStop,
			wantReason: "no members, lag 10",
		},
		{
			name:       "insufficient history: rewind is seen in one step",
			points:     []point{{500, 900, 2}, {400, 900, 2}},
			wantStatus: queue.StatusRewind,
			wantReason: "committed offset went back by 100 on orders/3",
		},
		{
			name:       "window: movement before the window is forgotten",
			window:     3,
			points:     []point{{100, 900, 2}, {200, 900, 2}, {300, 900, 2}, {300, 900, 2}, {300, 900, 2}},
			wantStatus: queue.StatusStall,
			wantReason: "committed offset has not moved since 12:02 UTC (2m) while lag is 600 on orders/3",
		},
		{
			name:       "window: movement inside the default window counts",
			points:     []point{{100, 900, 2}, {200, 900, 2}, {300, 900, 2}, {300, 900, 2}, {300, 900, 2}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "window: a rewind before the window is forgotten",
			window:     3,
			points:     []point{{500, 900, 2}, {100, 900, 2}, {200, 1000, 2}, {300, 1100, 2}, {400, 1200, 2}},
			wantStatus: queue.StatusOK,
		},
		{
			name:       "window: below the minimum is raised to 3",
			window:     2,
			points:     []point{{100, 900, 2}, {300, 900, 2}, {300, 900, 2}, {300, 900, 2}},
			wantStatus: queue.StatusStall,
			wantReason: "committed offset has not moved since 12:01 UTC (2m) while lag is 600 on orders/3",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			history, latest := series(tt.points...)
			window := tt.window
			if window == 0 {
				window = len(tt.points) // trends need a full window
			}
			Evaluate(history, latest, StatusOptions{Window: window})
			g := latest.Groups[0]
			if g.Status != tt.wantStatus || g.StatusReason != tt.wantReason {
				t.Errorf("status %q reason %q; want %q %q", g.Status, g.StatusReason, tt.wantStatus, tt.wantReason)
			}
		})
	}
}

func TestEvaluateErrors(t *testing.T) {
	tests := []struct {
		name       string
		latest     func() *queue.Snapshot
		wantStatus queue.Status
		wantReason string
	}{
		{
			name: "group could not be read",
			latest: func() *queue.Snapshot {
				g := group(2)
				g.Err = "describe group: GROUP_AUTHORIZATION_FAILED"
				return snap(5, g)
			},
			wantStatus: queue.StatusError,
			wantReason: "describe group: GROUP_AUTHORIZATION_FAILED",
		},
		{
			name: "poll failed",
			latest: func() *queue.Snapshot {
				s := snap(5, group(2, part("orders", 0, 10, 20)))
				s.Err = errors.New("list offsets: i/o timeout")
				return s
			},
			wantStatus: queue.StatusError,
			wantReason: "list offsets: i/o timeout",
		},
		{
			name:       "no partitions is ok",
			latest:     func() *queue.Snapshot { return snap(5, group(0)) },
			wantStatus: queue.StatusOK,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			history := []*queue.Snapshot{snap(3, group(2, part("orders", 0, 10, 20))), snap(4, group(2, part("orders", 0, 10, 20)))}
			latest := tt.latest()
			latest.Groups[0].ETA = queue.ETA{Known: true, In: time.Hour} // must be overwritten
			Evaluate(history, latest, StatusOptions{})
			g := latest.Groups[0]
			if g.Status != tt.wantStatus || g.StatusReason != tt.wantReason {
				t.Errorf("status %q reason %q; want %q %q", g.Status, g.StatusReason, tt.wantStatus, tt.wantReason)
			}
			wantETA := queue.ETA{}
			if tt.wantStatus == queue.StatusOK {
				wantETA = queue.ETA{Known: true}
			}
			if g.ETA != wantETA {
				t.Errorf("ETA %+v; want %+v", g.ETA, wantETA)
			}
		})
	}
}

func TestEvaluateWorstPartition(t *testing.T) {
	// Each poll lists the partitions of one group; polls are a minute apart.
	tests := []struct {
		name       string
		polls      [][]queue.PartitionLag
		wantStatus queue.Status
		wantReason string
		// wantJudged are the partitions judged not ok, worst first, and
		// wantCulprits those that made the status.
		wantJudged, wantCulprits []string
	}{
		{
			name: "stall beats warn, biggest stall names the group",
			polls: [][]queue.PartitionLag{
				{part("orders", 0, 10, 10), part("orders", 1, 100, 200), part("orders", 2, 50, 300), part("payments", 0, 7, 900)},
				{part("orders", 0, 20, 20), part("orders", 1, 150, 300), part("orders", 2, 50, 330), part("payments", 0, 7, 905)},
				{part("orders", 0, 30, 30), part("orders", 1, 200, 400), part("orders", 2, 50, 350), part("payments", 0, 7, 907)},
			},
			wantStatus:   queue.StatusStall,
			wantReason:   "committed offset has not moved since 12:00 UTC (2m) while lag is 900 on payments/0 and 1 more partition",
			wantJudged:   []string{"payments/0 stall", "orders/2 stall", "orders/1 warn"},
			wantCulprits: []string{"payments/0 stall", "orders/2 stall"},
		},
		{
			name: "rewind beats warn",
			polls: [][]queue.PartitionLag{
				{part("orders", 0, 100, 200), part("orders", 1, 500, 600)},
				{part("orders", 0, 150, 300), part("orders", 1, 450, 600)},
				{part("orders", 0, 200, 400), part("orders", 1, 460, 600)},
			},
			wantStatus:   queue.StatusRewind,
			wantReason:   "committed offset went back by 50 on orders/1",
			wantJudged:   []string{"orders/1 rewind", "orders/0 warn"},
			wantCulprits: []string{"orders/1 rewind"},
		},
		{
			name: "several warns are counted",
			polls: [][]queue.PartitionLag{
				{part("a", 0, 100, 200), part("a", 1, 100, 200), part("a", 2, 100, 200), part("b", 0, 0, 0)},
				{part("a", 0, 150, 300), part("a", 1, 150, 400), part("a", 2, 150, 300), part("b", 0, 0, 0)},
				{part("a", 0, 200, 400), part("a", 1, 200, 600), part("a", 2, 200, 400), part("b", 0, 0, 0)},
			},
			wantStatus:   queue.StatusWarn,
			wantReason:   "lag rising for 3 polls on a/1 and 2 more partitions",
			wantJudged:   []string{"a/1 warn", "a/0 warn", "a/2 warn"},
			wantCulprits: []string{"a/1 warn", "a/0 warn", "a/2 warn"},
		},
		{
			name: "all partitions ok",
			polls: [][]queue.PartitionLag{
				{part("a", 0, 100, 200), part("a", 1, 0, 0)},
				{part("a", 0, 200, 300), part("a", 1, 0, 0)},
				{part("a", 0, 300, 400), part("a", 1, 0, 0)},
			},
			wantStatus: queue.StatusOK,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var history []*queue.Snapshot
			for i, parts := range tt.polls {
				history = append(history, snap(i, group(3, parts...)))
			}
			latest := history[len(history)-1]
			Evaluate(history[:len(history)-1], latest, StatusOptions{Window: len(tt.polls)})
			g := latest.Groups[0]
			if g.Status != tt.wantStatus || g.StatusReason != tt.wantReason {
				t.Errorf("status %q reason %q; want %q %q", g.Status, g.StatusReason, tt.wantStatus, tt.wantReason)
			}
			if got := judgedNames(g.Judged); !slices.Equal(got, tt.wantJudged) {
				t.Errorf("judged %q; want %q", got, tt.wantJudged)
			}
			if got := judgedNames(g.Culprits()); !slices.Equal(got, tt.wantCulprits) {
				t.Errorf("culprits %q; want %q", got, tt.wantCulprits)
			}
			// Evaluating the same poll again gives the same list, not twice.
			Evaluate(history[:len(history)-1], latest, StatusOptions{Window: len(tt.polls)})
			if got := judgedNames(latest.Groups[0].Judged); !slices.Equal(got, tt.wantJudged) {
				t.Errorf("judged again %q; want %q", got, tt.wantJudged)
			}
		})
	}
}

func judgedNames(ps []queue.PartitionStatus) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s/%d %s", p.Topic, p.Partition, p.Status))
	}
	return out
}

// TestEvaluateHistoryMatching checks which past snapshots and partitions
// count as observations of a partition.
func TestEvaluateHistoryMatching(t *testing.T) {
	stuck := func(i int) *queue.Snapshot {
		return snap(i, group(2, part("orders", 0, 0, 0), part("orders", 3, 1000, 1500)))
	}
	tests := []struct {
		name       string
		history    func() []*queue.Snapshot
		window     int
		wantStatus queue.Status
		wantReason string
	}{
		{
			name: "other clusters, failed polls and later snapshots are ignored",
			history: func() []*queue.Snapshot {
				other := snap(1, group(2, part("orders", 3, 5000, 6000)))
				other.Cluster = "eu"
				failed := snap(2, group(2, part("orders", 3, 9000, 9500)))
				failed.Err = errors.New("metadata: i/o timeout")
				future := snap(9, group(2, part("orders", 3, 9000, 9500)))
				return []*queue.Snapshot{stuck(0), other, failed, stuck(3), future}
			},
			window:     3, // stuck(0), stuck(3) and the latest
			wantStatus: queue.StatusStall,
			wantReason: "committed offset has not moved since 12:00 UTC (4m) while lag is 500 on orders/3",
		},
		{
			name: "a group missing or unreadable in a poll gives no observation",
			history: func() []*queue.Snapshot {
				broken := group(2)
				broken.Err = "describe group: timeout"
				return []*queue.Snapshot{snap(1), snap(2, broken), stuck(3)}
			},
			// Only two observations: too few for a stall.
			wantStatus: queue.StatusOK,
		},
		{
			name: "partitions are found when out of order or shifted",
			history: func() []*queue.Snapshot {
				unsorted := snap(2, group(2, part("orders", 3, 1000, 1500), part("orders", 0, 0, 0)))
				shifted := snap(3, group(2, part("aaa", 0, 0, 0), part("orders", 0, 0, 0), part("orders", 3, 1000, 1500)))
				return []*queue.Snapshot{unsorted, shifted}
			},
			wantStatus: queue.StatusStall,
			wantReason: "committed offset has not moved since 12:02 UTC (2m) while lag is 500 on orders/3",
		},
		{
			name: "the same partition number of another topic is not a match",
			history: func() []*queue.Snapshot {
				// b/3 sits where orders/3 sits in latest.
				decoy := snap(2, group(2, part("a", 0, 0, 0), part("b", 3, 5000, 5500), part("orders", 3, 1000, 1500)))
				return []*queue.Snapshot{stuck(1), decoy, stuck(3)}
			},
			wantStatus: queue.StatusStall,
			wantReason: "committed offset has not moved since 12:01 UTC (3m) while lag is 500 on orders/3",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			latest := stuck(4)
			h := tt.history()
			window := cmp.Or(tt.window, len(h)+1)
			Evaluate(h, latest, StatusOptions{Window: window})
			g := latest.Groups[0]
			if g.Status != tt.wantStatus || g.StatusReason != tt.wantReason {
				t.Errorf("status %q reason %q; want %q %q", g.Status, g.StatusReason, tt.wantStatus, tt.wantReason)
			}
		})
	}
}

// TestEvaluatorRolling feeds an Evaluator a growing history, as the
// collector does, and checks it agrees with a fresh evaluation every poll
// while its cache stays within the window.
func TestEvaluatorRolling(t *testing.T) {
	const window = 5
	e := NewEvaluator(StatusOptions{Window: window, HysteresisPolls: 1}) // as Evaluate, which has no past statuses
	var history []*queue.Snapshot
	for i := range 30 {
		// Partition 0 advances steadily; partition 1 stops committing from
		// poll 10 to 19, and the group loses its members from poll 25.
		c1 := int64(min(i, 10) * 10)
		if i >= 20 {
			c1 = int64(i * 10)
		}
		members := 2
		if i >= 25 {
			members = 0
		}
		latest := snap(i, group(members,
			part("orders", 0, int64(i*10), int64(i*10+5)),
			part("orders", 1, c1, int64(i*10+5))))
		fresh := snap(i, slices.Clone(latest.Groups)...)
		fresh.Groups[0].Partitions = slices.Clone(latest.Groups[0].Partitions)

		e.Evaluate(latest)
		Evaluate(history, fresh, StatusOptions{Window: window})

		got, want := latest.Groups[0], fresh.Groups[0]
		// A fresh evaluation knows no onset before its window; the
		// evaluator remembers it (checked below), so their sentences of
		// a lasting condition differ.
		sameReason := got.StatusReason == want.StatusReason || got.Status == want.Status && got.Status.Stopped()
		if got.Status != want.Status || !sameReason || got.ETA != want.ETA {
			t.Fatalf("poll %d: evaluator %q %q %+v; fresh %q %q %+v",
				i, got.Status, got.StatusReason, got.ETA, want.Status, want.StatusReason, want.ETA)
		}
		var wantSince time.Time
		switch got.Status {
		case queue.StatusStall:
			wantSince = t0.Add(10 * time.Minute) // partition 1's last commit
		case queue.StatusStop:
			wantSince = t0.Add(25 * time.Minute)
		case queue.StatusWarn:
			wantSince = t0.Add(7 * time.Minute) // the window in which lag first rose
		}
		if !got.StatusSince.Equal(wantSince) {
			t.Fatalf("poll %d: %s since %v; want %v", i, got.Status, got.StatusSince, wantSince)
		}
		if n := len(e.polls[keyOf(latest)]); n > window-1 {
			t.Fatalf("poll %d: the evaluator remembers %d polls; want at most %d", i, n, window-1)
		}
		wantStatus := queue.StatusOK
		switch {
		case i >= 25:
			wantStatus = queue.StatusStop
		case i >= 14 && i <= 19:
			wantStatus = queue.StatusStall
		case i >= 11 && i <= 13:
			// Lag rises while the last of partition 1's commits is still
			// in the window.
			wantStatus = queue.StatusWarn
		}
		if got.Status != wantStatus {
			t.Fatalf("poll %d: status %q (%s); want %q", i, got.Status, got.StatusReason, wantStatus)
		}
		history = append(history, latest)
	}
}

func TestZeroEvaluator(t *testing.T) {
	var e Evaluator // default window: 10 polls, a status shown at the second
	var points []point
	for range 11 {
		points = append(points, point{1000, 1500, 1})
	}
	history, latest := series(points...)
	for _, s := range append(history, latest) {
		e.Evaluate(s)
	}
	if g := latest.Groups[0]; g.Status != queue.StatusStall {
		t.Errorf("status %q; want stall", g.Status)
	}
	e.Evaluate(nil) // no latest: nothing to do, no panic
}

// benchSnapshots builds n polls of 500 groups × 36 partitions (4 topics × 9),
// with a tenth of the groups stalled so that reasons get written too.
func benchSnapshots(n int) []*queue.Snapshot {
	const groups, topics, parts = 500, 4, 9
	topicNames := []string{"orders", "payments", "shipments", "emails"}
	snaps := make([]*queue.Snapshot, n)
	for i := range snaps {
		s := snap(i)
		s.Groups = make([]queue.ConsumerGroup, groups)
		for gi := range s.Groups {
			g := &s.Groups[gi]
			*g = queue.ConsumerGroup{Cluster: "prod", Name: fmt.Sprintf("group-%03d", gi), Members: 3}
			g.Partitions = make([]queue.PartitionLag, 0, topics*parts)
			for ti := range topics {
				for p := range parts {
					end := int64(i*1000 + p)
					committed := end - int64(gi%7*10)
					if gi%10 == 0 {
						committed = 5
					}
					g.Partitions = append(g.Partitions, part(topicNames[ti], int32(p), committed, end))
				}
			}
		}
		snaps[i] = s
	}
	return snaps
}

// BenchmarkEvaluate measures the collector's steady state: each iteration is
// a new poll, so one new snapshot enters the window and one leaves it.
func BenchmarkEvaluate(b *testing.B) {
	const window = 10
	snaps := benchSnapshots(40)
	e := NewEvaluator(StatusOptions{Window: window})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// The snapshots come round again as later polls.
		s := snaps[i%len(snaps)]
		s.Time = t0.Add(time.Duration(i) * time.Minute)
		e.Evaluate(s)
		i++
	}
}

// BenchmarkEvaluateFunc measures the convenience function, which indexes the
// whole window on every call.
func BenchmarkEvaluateFunc(b *testing.B) {
	const window = 10
	snaps := benchSnapshots(window)
	b.ReportAllocs()
	for b.Loop() {
		Evaluate(snaps[:window-1], snaps[window-1], StatusOptions{Window: window})
	}
}

// TestCompleteReplacesThePollItCompletes checks that the poll run at once
// after the first one of a start, to fill what it left pending, takes its
// place in the window: it is evaluated without it, and the window then holds
// one poll, not two taken a moment apart.
func TestCompleteReplacesThePollItCompletes(t *testing.T) {
	e := NewEvaluator(StatusOptions{Window: 3, HysteresisPolls: 1})
	first := snap(0, group(1, part("orders", 0, 100, 500)))
	first.Groups[0].Partitions[0].LagSecondsPending = true
	e.Evaluate(first)
	complete := snap(0, group(1, part("orders", 0, 100, 500)))
	complete.Time = first.Time.Add(300 * time.Millisecond)
	e.Complete(complete)
	if polls := e.polls[keyOf(complete)]; len(polls) != 1 || polls[0].rest.Time != complete.Time {
		t.Fatalf("window after the complete poll: %d polls; want only the complete one", len(polls))
	}
	// A full window of unmoving offsets stalls; the pending poll would
	// have counted as one of them.
	next := snap(1, group(1, part("orders", 0, 100, 500)))
	e.Evaluate(next)
	if g := next.Groups[0]; g.Status != queue.StatusOK {
		t.Errorf("after two polls a minute apart: %s (%s); want ok until the window is full", g.Status, g.StatusReason)
	}
	last := snap(2, group(1, part("orders", 0, 100, 500)))
	e.Evaluate(last)
	if g := last.Groups[0]; g.Status != queue.StatusStall {
		t.Errorf("after a full window: %s (%s); want stall", g.Status, g.StatusReason)
	}
}

// TestEvaluatorKeepsSourcesApart checks that one Evaluator serves every
// source: two clusters of the same name on different brokers, and two
// clusters of one broker, have windows of their own.
func TestEvaluatorKeepsSourcesApart(t *testing.T) {
	e := NewEvaluator(StatusOptions{Window: 3, HysteresisPolls: 1})
	for i := range 3 {
		stalled := snap(i, group(1, part("orders", 0, 100, 500)))
		e.Evaluate(stalled)
		moving := snap(i, group(1, part("orders", 0, int64(100+50*i), 500)))
		moving.Broker = queue.NATS // the same cluster name, another broker
		e.Evaluate(moving)
		if i == 2 {
			if g := stalled.Groups[0]; g.Status != queue.StatusStall {
				t.Errorf("stalled group: %s; want stall", g.Status)
			}
			if g := moving.Groups[0]; g.Status != queue.StatusOK {
				t.Errorf("moving group: %s (%s); want ok", g.Status, g.StatusReason)
			}
		}
	}
}

// TestPastPartitionSize guards the status window's memory: one
// pastPartition per group-partition per poll of the window is most of
// queuewatch's live heap (docs/performance.md).
func TestPastPartitionSize(t *testing.T) {
	if n := unsafe.Sizeof(pastPartition{}); n > 32 {
		t.Errorf("pastPartition is %d bytes; keep it within 32", n)
	}
}
