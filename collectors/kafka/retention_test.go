package kafka

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRetentionBytesProjection: on a topic with retention.bytes, the
// headroom is projected from the trend across polls: the log start gaining
// on the group's committed offset. Polls are 100s apart on the source's
// clock; the broker's deletions are DeleteRecords, as retention.bytes
// would delete whole segments.
func TestRetentionBytesProjection(t *testing.T) {
	tc := newCluster(t)
	forever, mib := "-1", "1048576"
	if _, err := tc.adm.CreateTopic(context.Background(), 1, 1, map[string]*string{"retention.ms": &forever, "retention.bytes": &mib}, "sized"); err != nil {
		t.Fatal(err)
	}
	tc.produce("sized", 0, 100, time.Now())
	tc.commit("slow", "sized", map[int32]int64{0: 50})
	s := tc.source(Options{})
	t0 := time.Now()
	s.now = func() time.Time { return t0 }
	if h := group(t, poll(t, s), "slow").Headroom; h.Known {
		t.Fatalf("first poll: headroom %+v; want none before a trend", h)
	}

	deleteTo := func(offset int64) {
		t.Helper()
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: "sized", Partition: 0, At: offset})
		resp, err := tc.adm.DeleteRecords(context.Background(), os)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// In 100s the log start moved 20 (0.2/s) and the group 5 (0.05/s):
	// the gap of 55-20 = 35 closes at 0.15/s, in 233s.
	deleteTo(20)
	tc.commit("slow", "sized", map[int32]int64{0: 55})
	s.now = func() time.Time { return t0.Add(100 * time.Second) }
	h := group(t, pollOnce(t, s), "slow").Headroom
	if want := 35 / 0.15; !h.Known || !h.Projected || math.Abs(h.Seconds-want) > 0.5 || h.Limit != "retention.bytes 1 MiB" || h.Where != "sized/0" {
		t.Errorf("headroom %+v; want %.0fs projected from retention.bytes 1 MiB on sized/0", h, want)
	}

	// A group that reads faster than the log start moves is not losing
	// anything: no headroom.
	tc.commit("slow", "sized", map[int32]int64{0: 90})
	s.now = func() time.Time { return t0.Add(200 * time.Second) }
	if h := group(t, pollOnce(t, s), "slow").Headroom; h.Known {
		t.Errorf("group outrunning the log start: headroom %+v; want none", h)
	}
}

// TestRetentionConfigsCached: topic configs are read once per
// retentionRefresh, not at every poll, and a change shows after it.
func TestRetentionConfigsCached(t *testing.T) {
	tc := newCluster(t)
	hour := "3600000"
	if _, err := tc.adm.CreateTopic(context.Background(), 1, 1, map[string]*string{"retention.ms": &hour}, "kept"); err != nil {
		t.Fatal(err)
	}
	tc.produce("kept", 0, 10, time.Now())
	tc.commit("g", "kept", map[int32]int64{0: 5})
	s := tc.source(Options{})
	t0 := time.Now()
	s.now = func() time.Time { return t0 }
	if h := group(t, poll(t, s), "g").Headroom; !h.Known || h.Limit != "retention.ms 1h" {
		t.Fatalf("headroom %+v; want from retention.ms 1h", h)
	}
	described := s.Requests(int16(kmsg.DescribeConfigs))

	twoHours := "7200000"
	resp, err := tc.adm.AlterTopicConfigs(context.Background(), []kadm.AlterConfig{{Name: "retention.ms", Value: &twoHours}}, "kept")
	if err == nil {
		_, err = resp.On("kept", nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return t0.Add(time.Minute) }
	if h := group(t, pollOnce(t, s), "g").Headroom; h.Limit != "retention.ms 1h" || s.Requests(int16(kmsg.DescribeConfigs)) != described {
		t.Errorf("a minute later: headroom %+v after %d more DescribeConfigs; want the cached 1h and none", h, s.Requests(int16(kmsg.DescribeConfigs))-described)
	}
	s.now = func() time.Time { return t0.Add(retentionRefresh) }
	if h := group(t, pollOnce(t, s), "g").Headroom; h.Limit != "retention.ms 2h" {
		t.Errorf("after the refresh: headroom %+v; want from retention.ms 2h", h)
	}
}
