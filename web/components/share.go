package components

import (
	"strconv"
	"strings"

	"github.com/queuewatch/queuewatch/queue"
)

// TabShare is the overview tab of Kafka share groups.
const TabShare = "share"

// ShareRow is one Kafka share group in the overview table.
type ShareRow struct {
	G      *queue.ShareGroup
	Status queue.Status
	Lag    int64
	Trend  Spark
}

// ShareGroupData is what a share group's page shows.
type ShareGroupData struct {
	// Links are the DLQs this reader's messages die in and its
	// Grafana dashboard.
	Links  Links
	Chrome Chrome
	Group  *queue.ShareGroup
	Status queue.Status
	// HistoryURL is the JSON endpoint the chart reads; Range its initial
	// time range.
	HistoryURL string
	Range      string
	// CanReset offers "Reset start offsets…": the user is an operator and
	// the server has offset resets.
	CanReset bool
	// ResetAPI is the group's offsets API, …/offsets (plan, apply).
	ResetAPI string
}

// ShareGroupURL is the path of a Kafka share group's page.
func ShareGroupURL(cluster, group string) string { return queue.ShareGroupPage(cluster, group) }

// shareLag writes a partition's lag, "—" before a member first fetched it
// and with "≤" when it is an estimate (end − start offset, an upper bound).
func shareLag(p *queue.SharePartition) string {
	switch {
	case !p.Initialized || p.Err != "":
		return "—"
	case p.LagSource == queue.LagEstimated:
		return "≤ " + Exact(p.Lag)
	}
	return Exact(p.Lag)
}

// shareStart writes a partition's start offset, "—" before a member first
// fetched it.
func shareStart(p *queue.SharePartition) string {
	if !p.Initialized {
		return "—"
	}
	return strconv.FormatInt(p.Start, 10)
}

// shareTotalLag writes a group's lag, marked "≤" when some partition's is
// an estimate.
func shareTotalLag(g *queue.ShareGroup) string {
	if g.LagEstimated() {
		return "≤ " + Count(g.TotalLag())
	}
	return Count(g.TotalLag())
}

// assignment writes a member's partitions: "orders 0, 1 · audit 3".
func assignment(m *queue.ShareMember) string {
	if len(m.Assigned) == 0 {
		return "none"
	}
	parts := make([]string, len(m.Assigned))
	for i, a := range m.Assigned {
		ps := make([]string, len(a.Partitions))
		for j, p := range a.Partitions {
			ps[j] = strconv.Itoa(int(p))
		}
		parts[i] = a.Topic + " " + strings.Join(ps, ", ")
	}
	return strings.Join(parts, " · ")
}

// shareSentence is a share group's status sentence.
func shareSentence(s queue.Status, reason string) string {
	if reason == "" && s == queue.StatusOK {
		return "no stall, stop or rising lag since the last poll"
	}
	return statusSentence(s, reason)
}
