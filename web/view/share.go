package view

import (
	"net/url"
	"strings"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// ShareRows are the Kafka share groups of a snapshot as overview rows.
func ShareRows(snap *queue.Snapshot) []components.ShareRow {
	out := make([]components.ShareRow, 0, len(snap.ShareGroups))
	for i := range snap.ShareGroups {
		g := &snap.ShareGroups[i]
		out = append(out, components.ShareRow{G: g, Status: g.EffectiveStatus(), Lag: g.TotalLag()})
	}
	return out
}

// ShareSorts are the share group table's sortable columns. Status sorts by
// harm, severity then lag, as consumer groups do.
var ShareSorts = map[string]sortFunc[components.ShareRow]{
	"name":    func(a, b components.ShareRow) int { return strings.Compare(a.G.Name, b.G.Name) },
	"cluster": func(a, b components.ShareRow) int { return strings.Compare(a.G.Cluster, b.G.Cluster) },
	"state":   func(a, b components.ShareRow) int { return strings.Compare(a.G.State, b.G.State) },
	"status": func(a, b components.ShareRow) int {
		if c := a.Status.Severity() - b.Status.Severity(); c != 0 {
			return c
		}
		return CmpInt(a.Lag, b.Lag)
	},
	"lag":     func(a, b components.ShareRow) int { return CmpInt(a.Lag, b.Lag) },
	"members": func(a, b components.ShareRow) int { return len(a.G.Members) - len(b.G.Members) },
}

// CompareShareNames orders share groups by cluster and name.
func CompareShareNames(a, b components.ShareRow) int {
	return strings.Compare(a.G.Cluster+"\x00"+a.G.Name, b.G.Cluster+"\x00"+b.G.Name)
}

// ShareHistoryURL is the JSON endpoint a share group page's chart reads.
func ShareHistoryURL(g *queue.ShareGroup) string {
	return "/api/v1/kafka/share-groups/" + url.PathEscape(g.Cluster) + "/" + url.PathEscape(g.Name) + "/history"
}

// ShareGroups are Kafka share groups (KIP-932).
var ShareGroups = Kind[components.ShareRow]{
	Tab:    components.OverviewTab{Key: components.TabShare, Label: "Share groups", Placeholder: "filter share groups: name, cluster, state, status", Optional: true},
	Rows:   ShareRows,
	Reader: func(r components.ShareRow) queue.Reader { return r.G.Reader() },
	Status: func(r components.ShareRow) queue.Status { return r.Status },
	Sorts:  ShareSorts, DefaultSort: "status", Names: CompareShareNames,
	Filter: func(r components.ShareRow) []string {
		return []string{r.G.Name, r.G.Cluster, r.G.State, string(r.Status)}
	},
	Trend: func(r *components.ShareRow) *components.Spark { return &r.Trend }, Series: "lag",
	Put:  func(d *components.OverviewData, page []components.ShareRow) { d.Shares = page },
	Path: kafkaGroupPath,
	Noun: "share group",
	Lookup: func(snap *queue.Snapshot, v []string) (components.ShareRow, bool) {
		g, ok := snap.ShareGroup(v[1])
		return components.ShareRow{G: g}, ok
	},
}
