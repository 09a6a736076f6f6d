package alerts

import "github.com/queuewatch/queuewatch/queue"

// headroomSpecs is the alert on every broker's readers whose oldest
// pending message the broker is about to delete (retention, TTL, max_age,
// a size or count limit): one headroom family serves them all, so the
// rule names no broker. It waits two polls, like the other alerts on a
// fact the collectors measure; the headroom is already a duration.
func headroomSpecs(p ruleParams) []alertSpec {
	low := p.cfg.Alerts.RetentionHeadroomLow
	return []alertSpec{{
		name: "QueuewatchDataLossImminent", severity: SeverityCritical, forDur: p.twoPolls, page: overviewPage,
		summary:     `{{ $labels.broker }} reader {{ $labels.reader }} is about to lose messages`,
		description: `The broker deletes the oldest message {{ $labels.broker }} reader {{ $labels.reader }} (cluster {{ $labels.cluster }}{{ with $labels.scope }}, {{ . }}{{ end }}) has not read in {{ $value | humanizeDuration }}, less than ` + queue.HumanDuration(low) + `: unless it catches up, or its backlog is moved aside, those messages are lost.`,
		expr: func(string, string) string {
			return `queuewatch_reader_retention_headroom_seconds < ` + seconds(low)
		},
	}}
}
