package alerts

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// shareGroup is a share group with the given members on one partition of
// "orders", started at start with lag lag.
func shareGroup(members int, start, lag int64) *queue.ShareGroup {
	g := &queue.ShareGroup{Cluster: "k", Name: "workers", Partitions: []queue.SharePartition{
		{Topic: "orders", Partition: 0, Initialized: true, Start: start, End: start + lag, Lag: lag, LagSource: queue.LagFromBroker},
	}}
	for range members {
		g.Members = append(g.Members, queue.ShareMember{ID: "m"})
	}
	return g
}

// TestShareGroupStatus: stop without members, stall when no start offset
// moved, warn when lag rose while reading, ok otherwise; the counts are in
// the sentence.
func TestShareGroupStatus(t *testing.T) {
	tests := []struct {
		name       string
		prev, cur  *queue.ShareGroup
		want       queue.Status
		wantReason string
	}{
		{"first poll, reading", nil, shareGroup(2, 10, 5), queue.StatusOK, "5 records waiting, 2 members"},
		{"first poll, no members", nil, shareGroup(0, 10, 5), queue.StatusStop, "no members: 5 records waiting"},
		{"no members, nothing waits", shareGroup(0, 10, 0), shareGroup(0, 10, 0), queue.StatusOK, "0 records waiting, 0 members"},
		{"start stuck", shareGroup(1, 10, 5), shareGroup(1, 10, 7), queue.StatusStall, "no start offset moved since the last poll: 7 records waiting, 1 member"},
		{"start stuck, caught up", shareGroup(1, 10, 0), shareGroup(1, 10, 0), queue.StatusOK, "0 records waiting, 1 member"},
		{"moving, lag rising", shareGroup(1, 10, 5), shareGroup(1, 12, 9), queue.StatusWarn, "lag rising: 9 records waiting, up from 5 at the last poll"},
		{"moving, lag falling", shareGroup(1, 10, 5), shareGroup(1, 14, 3), queue.StatusOK, "3 records waiting, 1 member"},
		{"uninitialised partition", nil, &queue.ShareGroup{Members: []queue.ShareMember{{}}, Partitions: []queue.SharePartition{{Topic: "t", Lag: 9}}}, queue.StatusOK, "0 records waiting, 1 member"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := shareGroupStatus(tt.prev, tt.cur)
			if got != tt.want || reason != tt.wantReason {
				t.Errorf("shareGroupStatus = %s %q; want %s %q", got, reason, tt.want, tt.wantReason)
			}
		})
	}
}

// sharePoll is poll i (a minute apart) of cluster "k" with share group g.
func sharePoll(i int, g *queue.ShareGroup) *queue.Snapshot {
	return &queue.Snapshot{Broker: queue.Kafka, Cluster: "k", Time: t0.Add(time.Duration(i) * time.Minute), ShareGroups: []queue.ShareGroup{*g}}
}

// TestShareGroupsJudgedAgainstTheLastPoll: an Evaluator judges each share
// group against the poll before, as the collector did: a start offset that
// stays is a stall, a group read in error is an error and the next poll is
// judged against its last good read (a stall again, not the warn a
// comparison with the empty error read would give), and moving start
// offsets with lag rising are a warn.
func TestShareGroupsJudgedAgainstTheLastPoll(t *testing.T) {
	e := NewEvaluator(StatusOptions{HysteresisPolls: 1})
	unread := &queue.ShareGroup{Cluster: "k", Name: "workers", Err: "describe: COORDINATOR_NOT_AVAILABLE"}
	for i, step := range []struct {
		g          *queue.ShareGroup
		want       queue.Status
		wantReason string
	}{
		{shareGroup(1, 10, 5), queue.StatusOK, "5 records waiting, 1 member"},
		{shareGroup(1, 10, 7), queue.StatusStall, "no start offset moved since 12:00 UTC (1m): 7 records waiting, 1 member"},
		{unread, queue.StatusError, unread.Err},
		{shareGroup(1, 10, 7), queue.StatusStall, "no start offset moved since 12:02 UTC (1m): 7 records waiting, 1 member"},
		{shareGroup(1, 12, 9), queue.StatusWarn, "lag rising: 9 records waiting, up from 7 at the last poll"},
	} {
		s := sharePoll(i, step.g)
		e.Evaluate(s)
		g := s.ShareGroups[0]
		if st, reason := g.EffectiveStatus(), g.EffectiveReason(); st != step.want || reason != step.wantReason {
			t.Errorf("poll %d: %s %q; want %s %q", i, st, reason, step.want, step.wantReason)
		}
	}
}

// TestShareGroupCompleteJudgedAgainstTheReplacedPoll: the poll that
// completes the one before it (Complete) is judged against that poll, the
// last one read, as the collector judged it.
func TestShareGroupCompleteJudgedAgainstTheReplacedPoll(t *testing.T) {
	e := NewEvaluator(StatusOptions{HysteresisPolls: 1})
	e.Evaluate(sharePoll(0, shareGroup(1, 10, 5)))
	s := sharePoll(1, shareGroup(1, 10, 5))
	e.Complete(s)
	if g := s.ShareGroups[0]; g.Status != queue.StatusStall {
		t.Errorf("completing poll: %s %q; want stall against the poll it completes", g.Status, g.StatusReason)
	}
}

// TestShareGroupHeld: a share group's shown status is held like every
// window's (docs/how-it-measures.md lists share groups among the held
// readers): a first stall is shown once a second poll in a row finds it.
func TestShareGroupHeld(t *testing.T) {
	e := NewEvaluator(StatusOptions{HysteresisPolls: 2})
	var shown []queue.Status
	for i, lag := range []int64{5, 7, 9} {
		s := sharePoll(i, shareGroup(1, 10, lag))
		e.Evaluate(s)
		shown = append(shown, s.ShareGroups[0].Status)
		if i == 1 && !strings.Contains(s.ShareGroups[0].StatusReason, "the last poll found stall") {
			t.Errorf("held: %q; want it to say what the last poll found", s.ShareGroups[0].StatusReason)
		}
	}
	if want := []queue.Status{queue.StatusOK, queue.StatusOK, queue.StatusStall}; !slices.Equal(shown, want) {
		t.Errorf("shown %v; want %v", shown, want)
	}
}

// TestShareGroupEvaluateFromHistory: Evaluate, without an Evaluator,
// judges a share group against the last snapshot of its history, and
// leaves the history as it was.
func TestShareGroupEvaluateFromHistory(t *testing.T) {
	before := sharePoll(0, shareGroup(1, 10, 5))
	latest := sharePoll(1, shareGroup(1, 10, 7))
	Evaluate([]*queue.Snapshot{before}, latest, StatusOptions{})
	if g := latest.ShareGroups[0]; g.Status != queue.StatusStall {
		t.Errorf("latest: %s %q; want stall against the history", g.Status, g.StatusReason)
	}
	if g := before.ShareGroups[0]; g.Status != "" || g.StatusReason != "" {
		t.Errorf("history changed: %s %q", g.Status, g.StatusReason)
	}
}
