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

// TestShareGroupReader: a share group reads as a Kafka reader titled as a
// share group, with its lag as backlog and its own page; an unreadable one
// shows its error and no backlog.
func TestShareGroupReader(t *testing.T) {
	g := shareGroup(2, 10, 5)
	g.Status, g.StatusReason = StatusOK, "5 records waiting, 2 members"
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
