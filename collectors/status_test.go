package collectors

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/queuewatch/queuewatch/queue"
)

// TestStatusMetricIsEffectiveStatus: the status metric exports each
// group's queue.EffectiveStatus as one series, its label the status. A group that could
// not be read is error even when an earlier evaluation left "stop" on it, a
// group nobody evaluated is ok.
func TestStatusMetricIsEffectiveStatus(t *testing.T) {
	snap := kafkaSnapshot()
	snap.Groups = []queue.ConsumerGroup{
		{Cluster: "prod", Name: "unread", Err: "GROUP_AUTHORIZATION_FAILED", Status: queue.StatusStop},
		{Cluster: "prod", Name: "fresh"},
	}
	c := New([]Source{&scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(snap)}}}, Options{})
	c.PollOnce(context.Background())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)

	var want strings.Builder
	want.WriteString("# HELP queuewatch_kafka_consumergroup_status " + descStatus.help + "\n")
	want.WriteString("# TYPE queuewatch_kafka_consumergroup_status gauge\n")
	want.WriteString(`queuewatch_kafka_consumergroup_status{cluster="prod",group="fresh",status="ok"} 1` + "\n")
	want.WriteString(`queuewatch_kafka_consumergroup_status{cluster="prod",group="unread",status="error"} 1` + "\n")
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want.String()), "queuewatch_kafka_consumergroup_status"); err != nil {
		t.Error(err)
	}
}
