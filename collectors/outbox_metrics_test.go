package collectors

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/queuewatch/queuewatch/queue"
)

func outboxMetricsSnapshot() *queue.Snapshot {
	return &queue.Snapshot{
		Broker: queue.Outbox, Cluster: "orders-db", Time: fixedTime,
		OutboxTables: []queue.OutboxTable{
			{
				Source: "orders-db", Table: "outbox", Pending: 42, OldestPendingAge: 90 * time.Second,
				PublishRate: 2.5, HasPublishRate: true, Status: queue.StatusStall,
			},
			{Source: "orders-db", Table: "billing_outbox", Err: `relation "billing_outbox" does not exist`},
		},
		Slots: []queue.ReplicationSlot{
			{Source: "orders-db", Slot: "debezium", LagBytes: 4096, Active: false, Status: queue.StatusStop},
			// An unknown lag is left out, not exported as 0.
			{Source: "orders-db", Slot: "standby", LagUnknown: "physical slot that reserves no WAL yet", Active: true, Status: queue.StatusOK},
		},
	}
}

func TestOutboxMetrics(t *testing.T) {
	c := New([]Source{&scriptedSource{broker: queue.Outbox, cluster: "orders-db", results: []func() (*queue.Snapshot, error){ok(outboxMetricsSnapshot())}}}, Options{})
	c.PollOnce(context.Background())
	want := `
# HELP queuewatch_outbox_oldest_pending_age_seconds Age in seconds of the oldest pending row, by the database's clock; 0 when none is pending.
# TYPE queuewatch_outbox_oldest_pending_age_seconds gauge
queuewatch_outbox_oldest_pending_age_seconds{source="orders-db",table="outbox"} 90
# HELP queuewatch_outbox_pending_rows Rows of the outbox table its publisher has not sent yet (matching the pending condition).
# TYPE queuewatch_outbox_pending_rows gauge
queuewatch_outbox_pending_rows{source="orders-db",table="outbox"} 42
# HELP queuewatch_outbox_published_rows_per_second Rows per second that stopped matching the pending condition between the last two polls, of those already pending at the earlier poll: rows inserted and published between two polls are not counted, so on a busy table this is a lower bound of the publish rate.
# TYPE queuewatch_outbox_published_rows_per_second gauge
queuewatch_outbox_published_rows_per_second{source="orders-db",table="outbox"} 2.5
# HELP queuewatch_outbox_replication_slot_active 1 if a client is streaming from the replication slot.
# TYPE queuewatch_outbox_replication_slot_active gauge
queuewatch_outbox_replication_slot_active{slot="debezium",source="orders-db"} 0
queuewatch_outbox_replication_slot_active{slot="standby",source="orders-db"} 1
# HELP queuewatch_outbox_replication_slot_lag_bytes Bytes of WAL the replication slot's client has not confirmed: current WAL position minus confirmed flush position.
# TYPE queuewatch_outbox_replication_slot_lag_bytes gauge
queuewatch_outbox_replication_slot_lag_bytes{slot="debezium",source="orders-db"} 4096
`
	names := []string{
		"queuewatch_outbox_pending_rows", "queuewatch_outbox_oldest_pending_age_seconds",
		"queuewatch_outbox_published_rows_per_second", "queuewatch_outbox_replication_slot_lag_bytes",
		"queuewatch_outbox_replication_slot_active",
	}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}

	// The status: one series per table and slot, always 1, its label the
	// current status; the table that could not be read is error.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	current := map[string]string{}
	for _, mf := range mfs {
		if n := mf.GetName(); n != "queuewatch_outbox_status" && n != "queuewatch_outbox_replication_slot_status" {
			continue
		}
		for _, m := range mf.GetMetric() {
			key := metricLabel(m, "table") + metricLabel(m, "slot")
			if v := m.GetGauge().GetValue(); v != 1 {
				t.Errorf("%s status %s = %v, want only the current status, at 1", key, metricLabel(m, "status"), v)
			}
			if prev, dup := current[key]; dup {
				t.Errorf("%s has two statuses: %s and %s", key, prev, metricLabel(m, "status"))
			}
			current[key] = metricLabel(m, "status")
		}
	}
	wantStatus := map[string]string{"outbox": "stall", "billing_outbox": "error", "debezium": "stop", "standby": "ok"}
	for k, v := range wantStatus {
		if current[k] != v {
			t.Errorf("status of %s = %q, want %q", k, current[k], v)
		}
	}

	// The cached text exposition says the same as Collect.
	rec := httptest.NewRecorder()
	c.Handler(prometheus.NewRegistry()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	wantFams := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		wantFams[mf.GetName()] = mf
	}
	if ws, gs := strings.Join(samples(t, wantFams), "\n"), strings.Join(samples(t, parseText(t, rec.Body)), "\n"); ws != gs {
		t.Errorf("text exposition differs from Collect:\nwant\n%s\ngot\n%s", ws, gs)
	}
}

func metricLabel(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
