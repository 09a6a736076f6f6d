package view

import (
	"net/url"
	"strings"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// StreamsRows are the Kafka streams groups of a snapshot as overview rows.
func StreamsRows(snap *queue.Snapshot) []components.StreamsRow {
	out := make([]components.StreamsRow, 0, len(snap.StreamsGroups))
	for i := range snap.StreamsGroups {
		g := &snap.StreamsGroups[i]
		out = append(out, components.StreamsRow{G: g, Status: g.EffectiveStatus(), Lag: g.TotalLag()})
	}
	return out
}

// StreamsSorts are the streams group table's sortable columns. Status
// sorts by harm, severity then lag, as consumer groups do.
var StreamsSorts = map[string]sortFunc[components.StreamsRow]{
	"name":    func(a, b components.StreamsRow) int { return strings.Compare(a.G.Name, b.G.Name) },
	"cluster": func(a, b components.StreamsRow) int { return strings.Compare(a.G.Cluster, b.G.Cluster) },
	"state":   func(a, b components.StreamsRow) int { return strings.Compare(a.G.State, b.G.State) },
	"status": func(a, b components.StreamsRow) int {
		if c := a.Status.Severity() - b.Status.Severity(); c != 0 {
			return c
		}
		return CmpInt(a.Lag, b.Lag)
	},
	"lag":     func(a, b components.StreamsRow) int { return CmpInt(a.Lag, b.Lag) },
	"members": func(a, b components.StreamsRow) int { return len(a.G.Members) - len(b.G.Members) },
}

// CompareStreamsNames orders streams groups by cluster and name.
func CompareStreamsNames(a, b components.StreamsRow) int {
	return strings.Compare(a.G.Cluster+"\x00"+a.G.Name, b.G.Cluster+"\x00"+b.G.Name)
}

// StreamsHistoryURL is the JSON endpoint a streams group page's chart reads.
func StreamsHistoryURL(g *queue.StreamsGroup) string {
	return "/api/v1/kafka/streams-groups/" + url.PathEscape(g.Cluster) + "/" + url.PathEscape(g.Name) + "/history"
}

// StreamsGroups are Kafka Streams applications' groups (KIP-1071).
var StreamsGroups = Kind[components.StreamsRow]{
	Tab:    components.OverviewTab{Key: components.TabStreams, Label: "Streams groups", Placeholder: "filter streams groups: name, cluster, state, status", Optional: true},
	Rows:   StreamsRows,
	Reader: func(r components.StreamsRow) queue.Reader { return r.G.Reader() },
	Status: func(r components.StreamsRow) queue.Status { return r.Status },
	Sorts:  StreamsSorts, DefaultSort: "status", Names: CompareStreamsNames,
	Filter: func(r components.StreamsRow) []string {
		return []string{r.G.Name, r.G.Cluster, r.G.State, string(r.Status)}
	},
	Trend: func(r *components.StreamsRow) *components.Spark { return &r.Trend }, Series: "lag",
	Put:  func(d *components.OverviewData, page []components.StreamsRow) { d.Streams = page },
	Path: kafkaGroupPath,
	Noun: "streams group",
	Lookup: func(snap *queue.Snapshot, v []string) (components.StreamsRow, bool) {
		g, ok := snap.StreamsGroup(v[1])
		return components.StreamsRow{G: g}, ok
	},
}
