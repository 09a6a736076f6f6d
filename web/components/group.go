package components

import (
	"github.com/queuewatch/queuewatch/queue"
)

// GroupData is what the group page shows.
type GroupData struct {
	Chrome Chrome
	Group  *queue.ConsumerGroup
	Status queue.Status
	Lag    int64
	LagSec float64
	Topics []TopicRow
	// Table is the partition list's state; Partitions the page shown.
	Table      Table
	Partitions []PartitionRow
	Total      int
	// HistoryURL is the JSON endpoint the chart reads.
	HistoryURL string
	Range      string
	// CanReset offers "Reset offsets…": the user is an operator and the
	// server has offset resets.
	CanReset bool
	// ResetAPI is the group's offsets API, …/offsets (plan, apply).
	ResetAPI string
}

// TopicRow is a topic's share of a group's lag.
type TopicRow struct {
	queue.TopicLag
	Share float64
}

// PartitionRow is one partition and its share of the group's lag.
type PartitionRow struct {
	P     *queue.PartitionLag
	Share float64
}

// chartRanges are the chart's time ranges.
func chartRanges() []string { return []string{"15m", "1h", "6h"} }

func statusSentence(s queue.Status, reason string) string {
	if reason != "" {
		return reason
	}
	switch s {
	case queue.StatusOK:
		return "no stall, stop, rewind or rising lag over the status window"
	case queue.StatusError:
		return "could not be read"
	}
	return ""
}
