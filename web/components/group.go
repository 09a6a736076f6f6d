package components

import (
	"strconv"
	"strings"

	"github.com/queuewatch/queuewatch/queue"
)

// GroupData is what the group page shows.
type GroupData struct {
	// Links are the DLQs this reader's messages die in and its
	// Grafana dashboard.
	Links  Links
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
	// Culprits are the partitions whose evaluation made the status.
	Culprits []queue.PartitionStatus
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
	// Judged is the partition's status as the evaluation judged it;
	// Culprit marks one that made the group's status, and Rank orders
	// the judged partitions worst first (the healthy ones after them).
	Judged  queue.PartitionStatus
	Culprit bool
	Rank    int
}

// culpritNames lists culprits as topic/partition, the first few only:
// the table below names them all, first.
func culpritNames(cs []queue.PartitionStatus) string {
	const shown = 5
	var b strings.Builder
	for i, c := range cs {
		if i == shown {
			b.WriteString(" and " + strconv.Itoa(len(cs)-shown) + " more")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Topic + "/" + strconv.Itoa(int(c.Partition)))
	}
	return b.String()
}

// partitionNoun is "partition" or "partitions" for n.
func partitionNoun(n int) string {
	if n == 1 {
		return "1 partition"
	}
	return Exact(int64(n)) + " partitions"
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

// culpritOrder says where the culprits are in the table: first while it
// is sorted by status, else how to bring them there.
func culpritOrder(t Table) string {
	if t.Sort == "status" && t.Dir == "desc" {
		return ", first"
	}
	return "; sort by status to list them first"
}

// partitionTitle is a partition's status cell on hover: its sentence, and
// whether it made the group's status.
func partitionTitle(r PartitionRow) string {
	why := r.Judged.Reason()
	if why == "" {
		return "ok over the status window"
	}
	if r.Culprit {
		return why + " — this partition made the group's status"
	}
	return why
}
