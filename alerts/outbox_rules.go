package alerts

import (
	"strconv"

	"github.com/queuewatch/queuewatch/queue"
)

// outboxSpecs are the alerts on transactional outboxes and CDC replication
// slots: the producer side, where a stuck publisher makes events late
// without any consumer lagging. Backlog growing and stalled follow the
// status queuewatch evaluates over the window (as consumer groups do), so
// the UI and the alert agree; age and slot lag compare with the thresholds
// in alerts.outbox.
func outboxSpecs(p ruleParams) []alertSpec {
	a := p.cfg.Alerts.Outbox
	tables := readers{
		status: "queuewatch_outbox_status", identity: []string{"source", "table"}, name: "table", page: outboxPage,
		backlog: func(m string) string { return selector("queuewatch_outbox_pending_rows", m) },
	}
	return []alertSpec{
		tables.inStatus(p, queue.StatusWarn, alertText{
			name: "QueuewatchOutboxBacklogGrowing", severity: SeverityWarning,
			summary:     `Outbox table {{ $labels.table }} is falling behind`,
			description: `Outbox table {{ $labels.table }} of {{ $labels.source }} has {{ $value | humanize }} pending rows and its backlog grew over ` + p.hw + `: rows are written faster than its publisher sends them.`,
		}),
		tables.inStatus(p, queue.StatusStall, alertText{
			name: "QueuewatchOutboxPublisherStalled", severity: SeverityCritical,
			summary:     `Outbox publisher of {{ $labels.table }} is stalled`,
			description: `Outbox table {{ $labels.table }} of {{ $labels.source }} has {{ $value | humanize }} pending rows and none was published for ` + p.hw + `: the worker (or relay) that sends them is stuck or gone, and the events are late.`,
		}),
		{
			name: "QueuewatchOutboxPendingRowsOld", severity: SeverityCritical, forDur: p.twoPolls, page: outboxPage,
			summary:     `Outbox table {{ $labels.table }} holds old unsent rows`,
			description: `The oldest pending row of outbox table {{ $labels.table }} ({{ $labels.source }}) is {{ $value | humanizeDuration }} old, over the threshold of ` + queue.HumanDuration(a.PendingAgeHigh) + `: its event reaches consumers that late.`,
			expr: func(string, string) string {
				return `queuewatch_outbox_oldest_pending_age_seconds > ` + seconds(a.PendingAgeHigh)
			},
		},
		{
			name: "QueuewatchOutboxReplicationSlotInactive", severity: SeverityCritical, forDur: p.window, page: outboxPage,
			summary:     `Replication slot {{ $labels.slot }} has no client`,
			description: `Nobody has streamed from replication slot {{ $labels.slot }} of {{ $labels.source }} for ` + p.hw + `; it holds back {{ $value | humanize1024 }}B of WAL, which PostgreSQL keeps on disk until the CDC connector (Debezium) comes back.`,
			expr: func(string, string) string {
				return `queuewatch_outbox_replication_slot_lag_bytes and on (source, slot) (queuewatch_outbox_replication_slot_active == 0)`
			},
		},
		{
			name: "QueuewatchOutboxReplicationSlotLagHigh", severity: SeverityWarning, forDur: p.window, page: outboxPage,
			summary:     `Replication slot {{ $labels.slot }} is far behind`,
			description: `Replication slot {{ $labels.slot }} of {{ $labels.source }} has not confirmed {{ $value | humanize1024 }}B of WAL, over the threshold of ` + HumanBytes(a.SlotLagBytesHigh) + `, for ` + p.hw + `: CDC events are late and WAL piles up on the server.`,
			expr: func(string, string) string {
				return `queuewatch_outbox_replication_slot_lag_bytes > ` + strconv.FormatInt(a.SlotLagBytesHigh, 10)
			},
		},
	}
}
