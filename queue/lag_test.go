package queue

import "testing"

func TestLag(t *testing.T) {
	tests := []struct {
		name              string
		committed         int64
		hasCommit         bool
		logStart, end     int64
		wantLag, wantLost int64
	}{
		{"behind", 200, true, 100, 250, 50, 0},
		{"caught up", 250, true, 100, 250, 0, 0},
		{"no commit counts from log start", 0, false, 100, 250, 150, 0},
		{"negative commit means none", -1, true, 100, 250, 150, 0},
		{"below log start loses records", 40, true, 100, 250, 150, 60},
		{"commit ahead of listed end clamps", 260, true, 100, 250, 0, 0},
		{"empty partition", 0, false, 0, 0, 0, 0},
		{"fully retained away", 0, true, 500, 500, 0, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lag, lost := Lag(tt.committed, tt.hasCommit, tt.logStart, tt.end)
			if lag != tt.wantLag || lost != tt.wantLost {
				t.Errorf("Lag(%d, %v, %d, %d) = %d, %d; want %d, %d",
					tt.committed, tt.hasCommit, tt.logStart, tt.end, lag, lost, tt.wantLag, tt.wantLost)
			}
		})
	}
}

func TestTopics(t *testing.T) {
	g := ConsumerGroup{Partitions: []PartitionLag{
		{Topic: "a", Partition: 0, Lag: 5, HasCommit: true, LagSeconds: 2},
		{Topic: "a", Partition: 1, Lag: 7, LagSeconds: 9},
		{Topic: "b", Partition: 0, Lag: 1, HasCommit: true, Lost: 3},
	}}
	got := g.Topics()
	if len(got) != 2 || got[0].Lag != 12 || got[0].Uncommitted != 1 || got[0].MaxLagSeconds != 9 ||
		got[1].Lag != 1 || got[1].Lost != 3 || got[1].Partitions != 1 {
		t.Errorf("Topics() = %+v", got)
	}
	if g.TotalLag() != 13 || g.MaxLagSeconds() != 9 {
		t.Errorf("TotalLag %d MaxLagSeconds %v", g.TotalLag(), g.MaxLagSeconds())
	}
}
