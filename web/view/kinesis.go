package view

import (
	"net/url"
	"strings"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// This file is what both surfaces know of KCL applications: the reader
// kind (its overview rows, sorts and path) and its history URL; the page
// is in web/ui, the JSON in web/api.

// KinesisRows are the KCL applications of a snapshot as overview rows.
func KinesisRows(snap *queue.Snapshot) []components.KinesisRow {
	out := make([]components.KinesisRow, 0, len(snap.KinesisApps))
	for i := range snap.KinesisApps {
		a := &snap.KinesisApps[i]
		out = append(out, components.KinesisRow{A: a, Status: a.EffectiveStatus()})
	}
	return out
}

// kinesisLag is an application's largest lag for sorting; -1 when none
// was read, so unknown sorts below caught up.
func kinesisLag(a *queue.KinesisApplication) int64 {
	lag, _, ok := a.Lag()
	if !ok {
		return -1
	}
	return int64(lag)
}

// KinesisSorts are the KCL application table's sortable columns. Status
// sorts by harm: severity, then lag.
var KinesisSorts = map[string]sortFunc[components.KinesisRow]{
	"name":    func(a, b components.KinesisRow) int { return strings.Compare(a.A.Name, b.A.Name) },
	"cluster": func(a, b components.KinesisRow) int { return strings.Compare(a.A.Cluster, b.A.Cluster) },
	"stream":  func(a, b components.KinesisRow) int { return strings.Compare(a.A.Stream, b.A.Stream) },
	"status": func(a, b components.KinesisRow) int {
		if c := a.Status.Severity() - b.Status.Severity(); c != 0 {
			return c
		}
		return CmpInt(kinesisLag(a.A), kinesisLag(b.A))
	},
	"lag":     func(a, b components.KinesisRow) int { return CmpInt(kinesisLag(a.A), kinesisLag(b.A)) },
	"behind":  func(a, b components.KinesisRow) int { return CmpInt(a.A.ShardsBehind(), b.A.ShardsBehind()) },
	"workers": func(a, b components.KinesisRow) int { return CmpInt(int64(a.A.Owners()), int64(b.A.Owners())) },
}

// CompareKinesisNames orders applications by account and name.
func CompareKinesisNames(a, b components.KinesisRow) int {
	return strings.Compare(a.A.Cluster+"\x00"+a.A.Name, b.A.Cluster+"\x00"+b.A.Name)
}

// KinesisHistoryURL is the JSON endpoint an application page's chart reads.
func KinesisHistoryURL(a *queue.KinesisApplication) string {
	return "/api/v1/kinesis/applications/" + url.PathEscape(a.Cluster) + "/" + url.PathEscape(a.Name) + "/history"
}

// KinesisApps are Kinesis Client Library applications, judged from their
// lease tables.
var KinesisApps = Kind[components.KinesisRow]{
	Tab:    components.OverviewTab{Key: components.TabKinesis, Label: "KCL applications", Placeholder: "filter: application, account, stream, status", Optional: true},
	Rows:   KinesisRows,
	Reader: func(r components.KinesisRow) queue.Reader { return r.A.Reader() },
	Status: func(r components.KinesisRow) queue.Status { return r.Status },
	Sorts:  KinesisSorts, DefaultSort: "status", Names: CompareKinesisNames,
	Filter: func(r components.KinesisRow) []string {
		return []string{r.A.Name, r.A.Cluster, r.A.Stream, string(r.Status)}
	},
	Trend: func(r *components.KinesisRow) *components.Spark { return &r.Trend }, Series: "shards behind",
	Put: func(d *components.OverviewData, page []components.KinesisRow) { d.Kinesis = page },
	Path: Path{
		Params: []string{"cluster", "application"},
		Reader: func(v []string) queue.Reader { return queue.Reader{Broker: queue.Kinesis, Cluster: v[0], Name: v[1]} },
	},
	Noun: "KCL application",
	Lookup: func(snap *queue.Snapshot, v []string) (components.KinesisRow, bool) {
		a, ok := snap.KinesisApp(v[1])
		return components.KinesisRow{A: a}, ok
	},
}
