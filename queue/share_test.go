package queue

import (
	"strings"
	"testing"
)

// shareGroup is a share group with the given members on one partition of
// "orders", started at start with lag lag.
func shareGroup(members int, start, lag int64) *ShareGroup {
	g := &ShareGroup{Cluster: "k", Name: "workers", Partitions: []SharePartition{
		{Topic: "orders", Partition: 0, Initialized: true, Start: start, End: start + lag, Lag: lag, LagSource: LagFromBroker},
	}}
	for range members {
		g.Members = append(g.Members, ShareMember{ID: "m"})
	}
	return g
}

// TestShareGroupStatus: stop without members, stall when no start offset
// moved, warn when lag rose while reading, ok otherwise; the counts are in
// the sentence.
func TestShareGroupStatus(t *testing.T) {
	tests := []struct {
		name       string
		prev, cur  *ShareGroup
		want       Status
		wantReason string
	}{
		{"first poll, reading", nil, shareGroup(2, 10, 5), StatusOK, "5 records waiting, 2 members"},
		{"first poll, no members", nil, shareGroup(0, 10, 5), StatusStop, "no members: 5 records waiting"},
		{"no members, nothing waits", shareGroup(0, 10, 0), shareGroup(0, 10, 0), StatusOK, "0 records waiting, 0 members"},
		{"start stuck", shareGroup(1, 10, 5), shareGroup(1, 10, 7), StatusStall, "no start offset moved since the last poll: 7 records waiting, 1 member"},
		{"start stuck, caught up", shareGroup(1, 10, 0), shareGroup(1, 10, 0), StatusOK, "0 records waiting, 1 member"},
		{"moving, lag rising", shareGroup(1, 10, 5), shareGroup(1, 12, 9), StatusWarn, "lag rising: 9 records waiting, up from 5 at the last poll"},
		{"moving, lag falling", shareGroup(1, 10, 5), shareGroup(1, 14, 3), StatusOK, "3 records waiting, 1 member"},
		{"uninitialised partition", nil, &ShareGroup{Members: []ShareMember{{}}, Partitions: []SharePartition{{Topic: "t", Lag: 9}}}, StatusOK, "0 records waiting, 1 member"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := ShareGroupStatus(tt.prev, tt.cur)
			if got != tt.want || reason != tt.wantReason {
				t.Errorf("ShareGroupStatus = %s %q; want %s %q", got, reason, tt.want, tt.wantReason)
			}
		})
	}
}

// TestShareGroupReader: a share group reads as a Kafka reader titled as a
// share group, with its lag as backlog and its own page; an unreadable one
// shows its error and no backlog.
func TestShareGroupReader(t *testing.T) {
	g := shareGroup(2, 10, 5)
	g.Status, g.StatusReason = ShareGroupStatus(nil, g)
	r := g.Reader()
	if r.Broker != Kafka || r.Title != "share workers" || r.Backlog != 5 || !r.BacklogKnown || r.Members != 2 || r.Status != StatusOK {
		t.Errorf("reader %+v", r)
	}
	if r.Page != "/kafka/k/share-groups/workers" {
		t.Errorf("page %q", r.Page)
	}
	g.Err = "describe: GROUP_AUTHORIZATION_FAILED"
	r = g.Reader()
	if r.Status != StatusError || r.BacklogKnown || !strings.Contains(r.Reason, "AUTHORIZATION") {
		t.Errorf("unreadable reader %+v", r)
	}
}
