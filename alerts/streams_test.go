package alerts

import (
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// streamsGroup is a streams group in state with the given members (one
// process, two active tasks each) on one partition of "orders", committed
// at committed with lag lag.
func streamsGroup(state string, members int, committed, lag int64) *queue.StreamsGroup {
	g := &queue.StreamsGroup{Cluster: "k", Name: "counts", State: state, Partitions: []queue.StreamsPartition{
		{Topic: "orders", Partition: 0, Committed: committed, End: committed + lag, Lag: lag},
	}}
	for range members {
		g.Members = append(g.Members, queue.StreamsMember{ID: "m", ProcessID: "p", Active: []queue.StreamsTasks{{Subtopology: "0", Partitions: []int32{0, 1}}}})
	}
	return g
}

// TestStreamsGroupStatus: stop without members, stall when the lag grew
// and no committed offset moved, warn when the group stays unsettled or
// the lag rose while it committed, ok otherwise; tasks and members are in
// the sentence.
func TestStreamsGroupStatus(t *testing.T) {
	standby := streamsGroup("Stable", 2, 10, 5)
	standby.Members[1].ProcessID, standby.Members[1].Standby = "q", []queue.StreamsTasks{{Subtopology: "0", Partitions: []int32{0}}}
	tests := []struct {
		name       string
		prev, cur  *queue.StreamsGroup
		want       queue.Status
		wantReason string
	}{
		{"first poll, running", nil, streamsGroup("Stable", 1, 10, 5), queue.StatusOK, "5 records waiting; 2 active tasks on 1 member"},
		{"threads of one process", nil, streamsGroup("Stable", 3, 10, 5), queue.StatusOK, "5 records waiting; 6 active tasks on 3 members in 1 process"},
		{"standby tasks", nil, standby, queue.StatusOK, "5 records waiting; 4 active tasks, 1 standby task on 2 members"},
		{"first poll, no members", nil, streamsGroup("Empty", 0, 10, 5), queue.StatusStop, "no members: 5 records waiting, no task running"},
		{"no members, nothing waits", streamsGroup("Empty", 0, 10, 0), streamsGroup("Empty", 0, 10, 0), queue.StatusOK, "0 records waiting; 0 active tasks on 0 members"},
		{"committed stuck, lag growing", streamsGroup("Stable", 1, 10, 5), streamsGroup("Stable", 1, 10, 7), queue.StatusStall, "no committed offset moved since the last poll: 7 records waiting, up from 5; 2 active tasks on 1 member"},
		{"committed stuck, lag steady (between commits)", streamsGroup("Stable", 1, 10, 5), streamsGroup("Stable", 1, 10, 5), queue.StatusOK, "5 records waiting; 2 active tasks on 1 member"},
		{"committing, lag rising", streamsGroup("Stable", 1, 10, 5), streamsGroup("Stable", 1, 12, 9), queue.StatusWarn, "lag rising: 9 records waiting, up from 5 at the last poll; 2 active tasks on 1 member"},
		{"reconciling twice", streamsGroup("Reconciling", 1, 10, 5), streamsGroup("Reconciling", 1, 12, 3), queue.StatusWarn, "state Reconciling since the last poll: 3 records waiting; 2 active tasks on 1 member"},
		{"reconciling once", streamsGroup("Stable", 1, 10, 5), streamsGroup("Assigning", 1, 12, 3), queue.StatusOK, "3 records waiting; 2 active tasks on 1 member"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := streamsGroupStatus(tt.prev, tt.cur)
			if got != tt.want || reason != tt.wantReason {
				t.Errorf("streamsGroupStatus = %s %q; want %s %q", got, reason, tt.want, tt.wantReason)
			}
		})
	}
}

// TestStreamsGroupsJudgedAgainstTheLastPoll: an Evaluator judges each
// streams group against the poll before; a group read in error is an
// error and the next poll is judged against its last good read; the
// sentence says since when.
func TestStreamsGroupsJudgedAgainstTheLastPoll(t *testing.T) {
	e := NewEvaluator(StatusOptions{HysteresisPolls: 1})
	unread := &queue.StreamsGroup{Cluster: "k", Name: "counts", Err: "describe: COORDINATOR_NOT_AVAILABLE"}
	for i, step := range []struct {
		g          *queue.StreamsGroup
		want       queue.Status
		wantReason string
	}{
		{streamsGroup("Stable", 1, 10, 5), queue.StatusOK, "5 records waiting; 2 active tasks on 1 member"},
		{streamsGroup("Stable", 1, 10, 7), queue.StatusStall, "no committed offset moved since 12:00 UTC (1m): 7 records waiting, up from 5; 2 active tasks on 1 member"},
		{unread, queue.StatusError, unread.Err},
		{streamsGroup("Stable", 1, 10, 9), queue.StatusStall, "no committed offset moved since 12:02 UTC (1m): 9 records waiting, up from 7; 2 active tasks on 1 member"},
		{streamsGroup("Empty", 0, 10, 9), queue.StatusStop, "no members: 9 records waiting, no task running"},
	} {
		s := &queue.Snapshot{Broker: queue.Kafka, Cluster: "k", Time: t0.Add(time.Duration(i) * time.Minute), StreamsGroups: []queue.StreamsGroup{*step.g}}
		e.Evaluate(s)
		g := s.StreamsGroups[0]
		if g.EffectiveStatus() != step.want || g.EffectiveReason() != step.wantReason {
			t.Errorf("poll %d: %s %q; want %s %q", i, g.EffectiveStatus(), g.EffectiveReason(), step.want, step.wantReason)
		}
	}
}
