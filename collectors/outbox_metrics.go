package collectors

import "github.com/queuewatch/queuewatch/queue"

var (
	outboxTableLabels = []string{"source", "table"}
	outboxSlotLabels  = []string{"source", "slot"}

	descOutboxPending     = desc("outbox_pending_rows", "Rows of the outbox table its publisher has not sent yet (matching the pending condition).", outboxTableLabels...)
	descOutboxOldestAge   = desc("outbox_oldest_pending_age_seconds", "Age in seconds of the oldest pending row, by the database's clock; 0 when none is pending.", outboxTableLabels...)
	descOutboxPublishRate = desc("outbox_published_rows_per_second", "Rows per second that stopped matching the pending condition between the last two polls, of those already pending at the earlier poll: rows inserted and published between two polls are not counted, so on a busy table this is a lower bound of the publish rate.", outboxTableLabels...)
	descOutboxStatus      = statusDesc("outbox_status", "outbox table", outboxTableLabels...)
	descSlotLag           = desc("outbox_replication_slot_lag_bytes", "Bytes of WAL the replication slot's client has not confirmed: current WAL position minus confirmed flush position.", outboxSlotLabels...)
	descSlotActive        = desc("outbox_replication_slot_active", "1 if a client is streaming from the replication slot.", outboxSlotLabels...)
	descSlotStatus        = statusDesc("outbox_replication_slot_status", "replication slot", outboxSlotLabels...)

	outboxFamilies = []*family{
		descOutboxPending, descOutboxOldestAge, descOutboxPublishRate, descOutboxStatus,
		descSlotLag, descSlotActive, descSlotStatus,
	}
)

// collectOutbox emits an outbox source's tables and slots. A table or slot
// that could not be read has only its status (error), and a slot whose lag
// is unknown has no lag: a stale or zero count would look like an answer.
func collectOutbox(ch sink, snap *queue.Snapshot) {
	for i := range snap.OutboxTables {
		t := &snap.OutboxTables[i]
		src := snap.Cluster
		emitStatus(ch, descOutboxStatus, t.EffectiveStatus(), src, t.Table)
		if t.Err != "" {
			continue
		}
		ch.gauge(descOutboxPending, float64(t.Pending), src, t.Table)
		ch.gauge(descOutboxOldestAge, t.OldestPendingAge.Seconds(), src, t.Table)
		if t.HasPublishRate {
			ch.gauge(descOutboxPublishRate, t.PublishRate, src, t.Table)
		}
	}
	for i := range snap.Slots {
		s := &snap.Slots[i]
		emitStatus(ch, descSlotStatus, s.EffectiveStatus(), snap.Cluster, s.Slot)
		if s.Err != "" {
			continue
		}
		if s.LagUnknown == "" {
			ch.gauge(descSlotLag, float64(s.LagBytes), snap.Cluster, s.Slot)
		}
		ch.gauge(descSlotActive, boolf(s.Active), snap.Cluster, s.Slot)
	}
}
