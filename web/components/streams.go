package components

import (
	"strconv"
	"strings"

	"github.com/queuewatch/queuewatch/queue"
)

// TabStreams is the overview tab of Kafka streams groups.
const TabStreams = "streams"

// StreamsRow is one Kafka streams group in the overview table.
type StreamsRow struct {
	G      *queue.StreamsGroup
	Status queue.Status
	Lag    int64
	Trend  Spark
}

// StreamsGroupData is what a streams group's page shows.
type StreamsGroupData struct {
	// Links are the reader's Grafana dashboard (Kafka Streams keeps no
	// dead letters of its own).
	Links  Links
	Chrome Chrome
	Group  *queue.StreamsGroup
	Status queue.Status
	// HistoryURL is the JSON endpoint the chart reads; Range its initial
	// time range.
	HistoryURL string
	Range      string
}

// StreamsGroupURL is the path of a Kafka streams group's page.
func StreamsGroupURL(cluster, group string) string { return queue.StreamsGroupPage(cluster, group) }

// streamsTasks writes tasks by subtopology: "0: 0, 1, 2 · 1: 0, 1, 2",
// or "—" for none.
func streamsTasks(ts []queue.StreamsTasks) string {
	if len(ts) == 0 {
		return "—"
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		ps := make([]string, len(t.Partitions))
		for j, p := range t.Partitions {
			ps[j] = strconv.Itoa(int(p))
		}
		parts[i] = t.Subtopology + ": " + strings.Join(ps, ", ")
	}
	return strings.Join(parts, " · ")
}

// topicList writes topics separated by commas, or "—" for none.
func topicList(ts []string) string {
	if len(ts) == 0 {
		return "—"
	}
	return strings.Join(ts, ", ")
}

// streamsCommitted writes a partition's committed offset, "—" before the
// group's first commit on it.
func streamsCommitted(p *queue.StreamsPartition) string {
	if p.Committed < 0 {
		return "—"
	}
	return strconv.FormatInt(p.Committed, 10)
}

// streamsTaskCounts writes a group's tasks: "6 active · 3 standby".
func streamsTaskCounts(g *queue.StreamsGroup) string {
	active, standby, warmup := g.Tasks()
	s := Itoa(active) + " active"
	if standby > 0 {
		s += " · " + Itoa(standby) + " standby"
	}
	if warmup > 0 {
		s += " · " + Itoa(warmup) + " warm-up"
	}
	return s
}

// streamsSentence is a streams group's status sentence.
func streamsSentence(s queue.Status, reason string) string {
	if reason == "" && s == queue.StatusOK {
		return "no stall, stop or rising lag since the last poll"
	}
	return statusSentence(s, reason)
}
