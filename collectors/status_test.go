package collectors

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/queuewatch/queuewatch/queue"
)

// TestStatusMetricIsEffectiveStatus: every broker exports each reader's
// effective status in one shape, one series per reader whose status label
// is the current status, value 1. A reader that could not be read is error
// even when an earlier evaluation left "stop" on it; a reader nobody
// evaluated is ok.
func TestStatusMetricIsEffectiveStatus(t *testing.T) {
	kafka := kafkaSnapshot()
	kafka.Groups = []queue.ConsumerGroup{
		{Cluster: "prod", Name: "unread", Err: "GROUP_AUTHORIZATION_FAILED", Status: queue.StatusStop},
		{Cluster: "prod", Name: "fresh"},
	}
	nats := &queue.Snapshot{
		Broker: queue.NATS, Cluster: "local", Time: fixedTime,
		Consumers: []queue.StreamConsumer{
			{Cluster: "local", Stream: "ORDERS", Name: "billing", Status: queue.StatusStall},
			{Cluster: "local", Stream: "ORDERS", Name: "unread", Err: "no leader", Status: queue.StatusStop},
			{Cluster: "local", Stream: "ORDERS", Name: "fresh"},
		},
	}
	outbox := &queue.Snapshot{
		Broker: queue.Outbox, Cluster: "orders-db", Time: fixedTime,
		OutboxTables: []queue.OutboxTable{
			{Source: "orders-db", Table: "outbox", Status: queue.StatusWarn},
			{Source: "orders-db", Table: "unread", Err: "permission denied", Status: queue.StatusStall},
			{Source: "orders-db", Table: "fresh"},
		},
		Slots: []queue.ReplicationSlot{
			{Source: "orders-db", Slot: "debezium", Status: queue.StatusStop},
			{Source: "orders-db", Slot: "unread", Err: "slot is gone", Status: queue.StatusStop},
			{Source: "orders-db", Slot: "fresh"},
		},
	}
	rabbit := &queue.Snapshot{
		Broker: queue.RabbitMQ, Cluster: "main", Time: fixedTime,
		Queues: []queue.Queue{
			{Cluster: "main", VHost: "/", Name: "orders", Status: queue.StatusStop},
			{Cluster: "main", VHost: "/", Name: "fresh"},
		},
	}
	for _, tt := range []struct {
		name   string
		snap   *queue.Snapshot
		family *family
		want   []string
	}{
		{"kafka", kafka, descStatus, []string{
			`{cluster="prod",group="fresh",status="ok"} 1`,
			`{cluster="prod",group="unread",status="error"} 1`,
		}},
		{"nats", nats, descNATSStatus, []string{
			`{cluster="local",consumer="billing",status="stall",stream="ORDERS"} 1`,
			`{cluster="local",consumer="fresh",status="ok",stream="ORDERS"} 1`,
			`{cluster="local",consumer="unread",status="error",stream="ORDERS"} 1`,
		}},
		{"rabbitmq", rabbit, descQueueStatus, []string{
			`{cluster="main",queue="fresh",status="ok",vhost="/"} 1`,
			`{cluster="main",queue="orders",status="stop",vhost="/"} 1`,
		}},
		{"outbox table", outbox, descOutboxStatus, []string{
			`{source="orders-db",status="ok",table="fresh"} 1`,
			`{source="orders-db",status="warn",table="outbox"} 1`,
			`{source="orders-db",status="error",table="unread"} 1`,
		}},
		{"replication slot", outbox, descSlotStatus, []string{
			`{slot="debezium",source="orders-db",status="stop"} 1`,
			`{slot="fresh",source="orders-db",status="ok"} 1`,
			`{slot="unread",source="orders-db",status="error"} 1`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := New([]Source{&scriptedSource{broker: tt.snap.Broker, cluster: tt.snap.Cluster, results: []func() (*queue.Snapshot, error){ok(tt.snap)}}}, Options{})
			c.PollOnce(context.Background())
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(c)

			var want strings.Builder
			want.WriteString("# HELP " + tt.family.name + " " + tt.family.help + "\n")
			want.WriteString("# TYPE " + tt.family.name + " gauge\n")
			for _, s := range tt.want {
				want.WriteString(tt.family.name + s + "\n")
			}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want.String()), tt.family.name); err != nil {
				t.Error(err)
			}
		})
	}
}
