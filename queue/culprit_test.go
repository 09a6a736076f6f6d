package queue

import (
	"slices"
	"testing"
)

func TestCulprits(t *testing.T) {
	judged := []PartitionStatus{
		{Topic: "orders", Partition: 2, Status: StatusStall, Lag: 900, HasCommit: true},
		{Topic: "orders", Partition: 0, Status: StatusStall, Lag: 300},
		{Topic: "orders", Partition: 1, Status: StatusWarn, Lag: 50, Polls: 10},
	}
	tests := []struct {
		name   string
		status Status
		err    string
		want   []int32
	}{
		{"the partitions of the group's status", StatusStall, "", []int32{2, 0}},
		{"a status held while it settles names those that have it", StatusWarn, "", []int32{1}},
		{"no partition of a held status: the worst now", StatusStop, "", []int32{2, 0}},
		{"ok has none", StatusOK, "", nil},
		{"a group that could not be read has none", StatusStall, "timeout", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := ConsumerGroup{Status: tt.status, Err: tt.err, Judged: judged}
			var got []int32
			for _, p := range g.Culprits() {
				got = append(got, p.Partition)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("culprits %v; want %v", got, tt.want)
			}
		})
	}
}

func TestPartitionStatusReason(t *testing.T) {
	tests := []struct {
		p    PartitionStatus
		want string
	}{
		{PartitionStatus{Status: StatusStop, Lag: 1200}, "no members, lag 1,200"},
		{PartitionStatus{Status: StatusRewind, Back: 50}, "committed offset went back by 50"},
		{PartitionStatus{Status: StatusStall, Lag: 900, HasCommit: true}, "committed offset has not moved over the status window while lag is 900"},
		{PartitionStatus{Status: StatusStall, Lag: 900}, "nothing committed over the status window while lag is 900"},
		{PartitionStatus{Status: StatusWarn, Lag: 40, Polls: 10}, "lag rising for 10 polls, now 40"},
		{PartitionStatus{Status: StatusOK}, ""},
	}
	for _, tt := range tests {
		if got := tt.p.Reason(); got != tt.want {
			t.Errorf("%s: %q; want %q", tt.p.Status, got, tt.want)
		}
	}
}
