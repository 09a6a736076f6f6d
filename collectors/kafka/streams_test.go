package kafka

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// kfake has no streams groups: these tests build a group from answers as
// Kafka 4.4 gives them (collectors/kafka/realkafka runs a real Streams
// application).

func streamsDescribed(name string) kmsg.StreamsGroupDescribeResponseGroup {
	g := kmsg.NewStreamsGroupDescribeResponseGroup()
	g.Group, g.State, g.Epoch, g.AssignmentEpoch = name, "Stable", 3, 3
	sub0 := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
	sub0.SubtopologyID, sub0.SourceTopics, sub0.RepartitionSinkTopics = "0", []string{"in"}, []string{"app-repartition"}
	sub1 := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
	sub1.SubtopologyID = "1"
	sub1.RepartitionSourceTopics = []kmsg.TopicInfo{{Topic: "app-repartition"}}
	sub1.StateChangelogTopics = []kmsg.TopicInfo{{Topic: "app-store-changelog"}}
	g.Topology = &kmsg.StreamsGroupDescribeResponseGroupTopology{Subtopologies: []kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{sub1, sub0}}
	m := kmsg.NewStreamsGroupDescribeResponseGroupMember()
	m.MemberID, m.ProcessID, m.ClientID, m.ClientHost = "m1", "p1", "app-StreamThread-1-consumer", "/10.0.0.5"
	m.Assignment.ActiveTasks = []kmsg.TaskIDs{{SubtopologyID: "1", Partitions: []int32{1, 0}}, {SubtopologyID: "0", Partitions: []int32{0, 1}}}
	m.Assignment.StandbyTasks = []kmsg.TaskIDs{{SubtopologyID: "1", Partitions: []int32{0}}}
	g.Members = append(g.Members, m)
	return g
}

func TestBuildStreamsGroup(t *testing.T) {
	opts := Options{Cluster: testenv.KafkaCluster(t, "c", []string{"127.0.0.1:1"})}
	offsets := offsetTable{
		"in":              {0: {Topic: "in", Partition: 0, End: 10}, 1: {Topic: "in", Partition: 1, LogStart: 2, End: 10}},
		"app-repartition": {0: {Topic: "app-repartition", Partition: 0, End: 7}, 1: {Topic: "app-repartition", Partition: 1, End: 3}},
	}
	f := kadm.FetchOffsetsResponse{Group: "app", Fetched: kadm.OffsetResponses{}}
	f.Fetched.Add(kadm.OffsetResponse{Offset: kadm.Offset{Topic: "in", Partition: 0, At: 4}})
	f.Fetched.Add(kadm.OffsetResponse{Offset: kadm.Offset{Topic: "app-repartition", Partition: 0, At: 7}})
	f.Fetched.Add(kadm.OffsetResponse{Offset: kadm.Offset{Topic: "app-repartition", Partition: 1, At: 1}})
	r := streamsRead{groups: map[string]kmsg.StreamsGroupDescribeResponseGroup{"app": streamsDescribed("app")}}

	g := buildStreamsGroup(opts, "app", r, f, offsets)
	if g.Err != "" || g.State != "Stable" || g.Epoch != 3 {
		t.Fatalf("group %+v", g)
	}
	// in/1 has no commit: it counts from the log start, as a consumer
	// group's partition does.
	want := "[{app-repartition 0 true 7 7 0 } {app-repartition 1 true 1 3 2 } {in 0 false 4 10 6 } {in 1 false -1 10 8 }]"
	if got := fmt.Sprint(g.Partitions); got != want {
		t.Errorf("partitions %s; want %s", got, want)
	}
	m := g.Members[0]
	if m.Host != "10.0.0.5" || fmt.Sprint(m.Active) != "[{0 [0 1]} {1 [0 1]}]" || fmt.Sprint(m.Standby) != "[{1 [0]}]" {
		t.Errorf("member %+v", m)
	}
	if a, s, w := g.Tasks(); a != 4 || s != 1 || w != 0 {
		t.Errorf("tasks %d/%d/%d; want 4/1/0", a, s, w)
	}
	if subs := fmt.Sprint(g.Subtopologies); subs != "[{1 [] [app-repartition] [] [app-store-changelog]} {0 [in] [] [app-repartition] []}]" {
		t.Errorf("subtopologies %s", subs)
	}
	if g.TotalLag() != 16 {
		t.Errorf("lag %d; want 16", g.TotalLag())
	}
}

func TestBuildStreamsGroupErrors(t *testing.T) {
	opts := Options{Cluster: testenv.KafkaCluster(t, "c", []string{"127.0.0.1:1"})}
	failed := streamsDescribed("denied")
	failed.ErrorCode = kerr.GroupAuthorizationFailed.Code
	r := streamsRead{
		groups: map[string]kmsg.StreamsGroupDescribeResponseGroup{"denied": failed},
		errs:   map[string]error{"down": errors.New("connection refused")},
	}
	for name, want := range map[string]string{
		"denied":  "describe: GROUP_AUTHORIZATION_FAILED",
		"down":    "describe: connection refused",
		"missing": "describe: group missing from describe response",
	} {
		g := buildStreamsGroup(opts, name, r, kadm.FetchOffsetsResponse{Group: name}, offsetTable{})
		if len(g.Err) < len(want) || g.Err[:len(want)] != want || g.EffectiveStatus() != queue.StatusError {
			t.Errorf("%s: err %q, status %s; want %q…, error", name, g.Err, g.EffectiveStatus(), want)
		}
	}
}
