package alerts

import (
	"strconv"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// outboxSpecs are the alerts on transactional outboxes and CDC replication
// slots: the producer side, where a stuck publisher makes events late
// without any consumer lagging. Backlog growing and stalled follow the
// status queuewatch evaluates over the window (as consumer groups do), so
// the UI and the alert agree; age and slot lag compare with the thresholds
// in alerts.outbox.
func outboxSpecs(cfg *config.Config) []alertSpec {
	a := cfg.Alerts.Outbox
	// The durations of specs: facts hold for two polls, trends for the
	// status window.
	twoPolls := 2 * cfg.PollInterval
	window := time.Duration(cfg.Alerts.Window) * cfg.PollInterval
	hw := queue.HumanDuration(window)
	return []alertSpec{
		{
			name: "OutboxBacklogGrowing", severity: SeverityWarning, forDur: twoPolls, page: outboxPage,
			summary:     `Outbox table {{ $labels.table }} is falling behind`,
			description: `Outbox table {{ $labels.table }} of {{ $labels.source }} has {{ $value | humanize }} pending rows and its backlog grew over ` + hw + `: rows are written faster than its publisher sends them.`,
			expr: func(string, string) string {
				return `queuewatch_outbox_pending_rows and on (source, table) (queuewatch_outbox_status{status="warn"} == 1)`
			},
		},
		{
			name: "OutboxPublisherStalled", severity: SeverityCritical, forDur: twoPolls, page: outboxPage,
			summary:     `Outbox publisher of {{ $labels.table }} is stalled`,
			description: `Outbox table {{ $labels.table }} of {{ $labels.source }} has {{ $value | humanize }} pending rows and none was published for ` + hw + `: the worker (or relay) that sends them is stuck or gone, and the events are late.`,
			expr: func(string, string) string {
				return `queuewatch_outbox_pending_rows and on (source, table) (queuewatch_outbox_status{status="stall"} == 1)`
			},
		},
		{
			name: "OutboxPendingRowsOld", severity: SeverityCritical, forDur: twoPolls, page: outboxPage,
			summary:     `Outbox table {{ $labels.table }} holds old unsent rows`,
			description: `The oldest pending row of outbox table {{ $labels.table }} ({{ $labels.source }}) is {{ $value | humanizeDuration }} old, over the threshold of ` + queue.HumanDuration(a.PendingAgeHigh) + `: its event reaches consumers that late.`,
			expr: func(string, string) string {
				return `queuewatch_outbox_oldest_pending_age_seconds > ` + seconds(a.PendingAgeHigh)
			},
		},
		{
			name: "OutboxReplicationSlotInactive", severity: SeverityCritical, forDur: window, page: outboxPage,
			summary:     `Replication slot {{ $labels.slot }} has no client`,
			description: `Nobody has streamed from replication slot {{ $labels.slot }} of {{ $labels.source }} for ` + hw + `; it holds back {{ $value | humanize1024 }}B of WAL, which PostgreSQL keeps on disk until the CDC connector (Debezium) comes back.`,
			expr: func(string, string) string {
				return `queuewatch_outbox_replication_slot_lag_bytes and on (source, slot) (queuewatch_outbox_replication_slot_active == 0)`
			},
		},
		{
			name: "OutboxReplicationSlotLagHigh", severity: SeverityWarning, forDur: window, page: outboxPage,
			summary:     `Replication slot {{ $labels.slot }} is far behind`,
			description: `Replication slot {{ $labels.slot }} of {{ $labels.source }} has not confirmed {{ $value | humanize1024 }}B of WAL, over the threshold of ` + HumanBytes(a.SlotLagBytesHigh) + `, for ` + hw + `: CDC events are late and WAL piles up on the server.`,
			expr: func(string, string) string {
				return `queuewatch_outbox_replication_slot_lag_bytes > ` + strconv.FormatInt(a.SlotLagBytesHigh, 10)
			},
		},
	}
}
