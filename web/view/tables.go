package view

import (
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// CompareGroupNames orders groups by cluster and name.
func CompareGroupNames(a, b components.GroupRow) int {
	if c := strings.Compare(a.G.Cluster, b.G.Cluster); c != 0 {
		return c
	}
	return strings.Compare(a.G.Name, b.G.Name)
}

// sortFunc compares two rows in ascending order of one column.
type sortFunc[T any] func(a, b T) int

// GroupSorts are the group table's sortable columns. Status sorts by
// harm: severity, then lag.
var GroupSorts = map[string]sortFunc[components.GroupRow]{
	"name":    func(a, b components.GroupRow) int { return strings.Compare(a.G.Name, b.G.Name) },
	"cluster": func(a, b components.GroupRow) int { return strings.Compare(a.G.Cluster, b.G.Cluster) },
	"state":   func(a, b components.GroupRow) int { return strings.Compare(a.G.State, b.G.State) },
	"status": func(a, b components.GroupRow) int {
		if c := a.Status.Severity() - b.Status.Severity(); c != 0 {
			return c
		}
		return CmpInt(a.Lag, b.Lag)
	},
	"lag":     func(a, b components.GroupRow) int { return CmpInt(a.Lag, b.Lag) },
	"lagsec":  func(a, b components.GroupRow) int { return cmpFloat(a.LagSec, b.LagSec) },
	"eta":     func(a, b components.GroupRow) int { return cmpFloat(etaKey(a.G.ETA), etaKey(b.G.ETA)) },
	"members": func(a, b components.GroupRow) int { return a.G.Members - b.G.Members },
}

// etaKey orders ETAs: unknown, caught up, shortest … longest, falling behind.
func etaKey(e queue.ETA) float64 {
	switch {
	case !e.Known:
		return -1
	case e.FallingBehind:
		return 1e18
	}
	return e.In.Seconds()
}

// QueueSorts are the RabbitMQ queue table's sort keys.
var QueueSorts = map[string]sortFunc[components.QueueRow]{
	"name": func(a, b components.QueueRow) int { return strings.Compare(a.Q.Name, b.Q.Name) },
	"cluster": func(a, b components.QueueRow) int {
		return strings.Compare(a.Q.Cluster+"\x00"+a.Q.VHost, b.Q.Cluster+"\x00"+b.Q.VHost)
	},
	"messages":  func(a, b components.QueueRow) int { return CmpInt(a.Q.Messages(), b.Q.Messages()) },
	"ready":     func(a, b components.QueueRow) int { return CmpInt(a.Q.Ready, b.Q.Ready) },
	"unacked":   func(a, b components.QueueRow) int { return CmpInt(a.Q.Unacked, b.Q.Unacked) },
	"consumers": func(a, b components.QueueRow) int { return a.Q.Consumers - b.Q.Consumers },
	// Status sorts by harm, severity then ready messages, as groups do.
	"status": func(a, b components.QueueRow) int {
		if c := a.Q.EffectiveStatus().Severity() - b.Q.EffectiveStatus().Severity(); c != 0 {
			return c
		}
		return CmpInt(a.Q.Ready, b.Q.Ready)
	},
	"age": func(a, b components.QueueRow) int {
		return CmpInt(int64(a.Q.HeadMessageAge), int64(b.Q.HeadMessageAge))
	},
}

// DLQSorts are the DLQ table's sort keys.
var DLQSorts = map[string]sortFunc[components.DLQRow]{
	"name":     func(a, b components.DLQRow) int { return strings.Compare(a.D.Name, b.D.Name) },
	"cluster":  func(a, b components.DLQRow) int { return strings.Compare(a.D.ID(), b.D.ID()) },
	"messages": func(a, b components.DLQRow) int { return CmpInt(a.D.Messages, b.D.Messages) },
	"oldest":   func(a, b components.DLQRow) int { return CmpInt(int64(a.D.OldestAge), int64(b.D.OldestAge)) },
}

// naturalDir is the direction a column sorts in when first clicked:
// names ascending, numbers and status (harm) descending.
func naturalDir(key string) string {
	switch key {
	case "name", "cluster", "state", "topic", "partition", "member", "consumers":
		return "asc"
	}
	return "desc"
}

// TableState reads a list's sort, direction, filter and page from the
// query string, falling back to defaults for anything unknown.
func TableState[T any](c echo.Context, path, tab string, sorts map[string]sortFunc[T], def string) components.Table {
	t := components.Table{Path: path, Tab: tab, Sort: c.QueryParam("sort"), Dir: c.QueryParam("dir"), Q: strings.TrimSpace(c.QueryParam("q"))}
	if _, ok := sorts[t.Sort]; !ok {
		t.Sort, t.Dir = def, naturalDir(def)
	}
	if t.Dir != "asc" && t.Dir != "desc" {
		t.Dir = naturalDir(t.Sort)
	}
	if len(t.Q) > 200 {
		t.Q = t.Q[:200]
	}
	t.Page, _ = strconv.Atoi(c.QueryParam("page"))
	return t
}

// FilterRows keeps rows any of whose fields contains q, case-insensitively.
func FilterRows[T any](rows []T, q string, fields func(T) []string) []T {
	if q == "" {
		return rows
	}
	q = strings.ToLower(q)
	out := rows[:0:0]
	for _, r := range rows {
		for _, f := range fields(r) {
			if strings.Contains(strings.ToLower(f), q) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// SortRows sorts rows by by in dir ("asc" or "desc"), ties by tie.
func SortRows[T any](rows []T, by sortFunc[T], dir string, tie func(a, b T) int) {
	slices.SortFunc(rows, func(a, b T) int {
		c := by(a, b)
		if dir == "desc" {
			c = -c
		}
		if c != 0 {
			return c
		}
		return tie(a, b)
	})
}

// Page cuts the rows to the table's page and fills in the paging fields.
func Page[T any](t *components.Table, rows []T) []T {
	t.Total = len(rows)
	t.Pages = max(1, (len(rows)+components.PageSize-1)/components.PageSize)
	t.Page = min(max(t.Page, 1), t.Pages)
	from := (t.Page - 1) * components.PageSize
	to := min(from+components.PageSize, len(rows))
	t.From, t.To = from+1, to
	return rows[from:to]
}

// CmpInt compares two counts.
func CmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Share is part of total as a fraction, 0 of nothing.
func Share(part, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(part) / float64(total)
}

// PartitionRows are g's partitions with their share of lag and how the
// evaluation judged them; rank orders the judged ones worst first.
func PartitionRows(g *queue.ConsumerGroup, culprits []queue.PartitionStatus, lag int64) []components.PartitionRow {
	rank := make(map[queue.TopicPartition]int, len(g.Judged))
	for i, p := range g.Judged {
		rank[queue.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = i
	}
	culprit := make(map[queue.TopicPartition]bool, len(culprits))
	for _, p := range culprits {
		culprit[queue.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = true
	}
	judged := JudgedOf(g)
	rows := make([]components.PartitionRow, len(g.Partitions))
	for i := range g.Partitions {
		p := &g.Partitions[i]
		tp := queue.TopicPartition{Topic: p.Topic, Partition: p.Partition}
		r, ok := rank[tp]
		if !ok {
			r = len(g.Judged)
		}
		rows[i] = components.PartitionRow{P: p, Share: Share(p.Lag, lag), Judged: judged.Of(tp), Culprit: culprit[tp], Rank: r}
	}
	return rows
}

// PartitionSorts are the group page's partition table sort keys.
var PartitionSorts = map[string]sortFunc[components.PartitionRow]{
	// status descending is worst first: culprits, then the other judged
	// partitions, then the healthy ones (in topic order, the tie).
	"status": func(a, b components.PartitionRow) int { return b.Rank - a.Rank },
	"topic": func(a, b components.PartitionRow) int {
		if c := strings.Compare(a.P.Topic, b.P.Topic); c != 0 {
			return c
		}
		return int(a.P.Partition) - int(b.P.Partition)
	},
	"partition": func(a, b components.PartitionRow) int { return int(a.P.Partition) - int(b.P.Partition) },
	"committed": func(a, b components.PartitionRow) int { return CmpInt(a.P.Committed, b.P.Committed) },
	"end":       func(a, b components.PartitionRow) int { return CmpInt(a.P.End, b.P.End) },
	"lag":       func(a, b components.PartitionRow) int { return CmpInt(a.P.Lag, b.P.Lag) },
	"lagsec":    func(a, b components.PartitionRow) int { return cmpFloat(a.P.LagSeconds, b.P.LagSeconds) },
	"member": func(a, b components.PartitionRow) int {
		return strings.Compare(a.P.Member+"\x00"+a.P.Host, b.P.Member+"\x00"+b.P.Host)
	},
}

// GroupsAndDLQs gathers every source's groups and DLQs, worst first: the
// API answers "what needs me?" before anything else.
func (s *Server) GroupsAndDLQs(c echo.Context) ([]queue.ConsumerGroup, []queue.DLQ) {
	var groups []queue.ConsumerGroup
	var dlqs []queue.DLQ
	for _, snap := range s.Mon(c).Snapshots() {
		groups = append(groups, snap.Groups...)
		dlqs = append(dlqs, snap.DLQs...)
	}
	slices.SortStableFunc(groups, func(a, b queue.ConsumerGroup) int {
		if sa, sb := a.EffectiveStatus().Severity(), b.EffectiveStatus().Severity(); sa != sb {
			return sb - sa
		}
		if c := CmpInt(b.TotalLag(), a.TotalLag()); c != 0 {
			return c
		}
		return strings.Compare(a.Cluster+"\x00"+a.Name, b.Cluster+"\x00"+b.Name)
	})
	slices.SortStableFunc(dlqs, func(a, b queue.DLQ) int {
		if c := CmpInt(b.Messages, a.Messages); c != 0 {
			return c
		}
		return strings.Compare(a.ID(), b.ID())
	})
	return groups, dlqs
}

// Groups are Kafka consumer groups, the overview's first tab.
var Groups = Kind[components.GroupRow]{
	Tab: components.OverviewTab{Key: components.TabGroups, Label: "Consumer groups", Placeholder: "filter groups: name, cluster, status"},
	Rows: func(snap *queue.Snapshot) []components.GroupRow {
		out := make([]components.GroupRow, 0, len(snap.Groups))
		for i := range snap.Groups {
			g := &snap.Groups[i]
			out = append(out, components.GroupRow{G: g, Status: g.EffectiveStatus(), Lag: g.TotalLag(), LagSec: g.MaxLagSeconds()})
		}
		return out
	},
	Reader: func(r components.GroupRow) queue.Reader { return r.G.Reader() },
	Status: func(r components.GroupRow) queue.Status { return r.Status },
	Sorts:  GroupSorts, DefaultSort: "status", Names: CompareGroupNames,
	Filter: func(r components.GroupRow) []string {
		return []string{r.G.Name, r.G.Cluster, r.G.State, string(r.Status)}
	},
	Trend: func(r *components.GroupRow) *components.Spark { return &r.Trend }, Series: "lag",
	Put:  func(d *components.OverviewData, page []components.GroupRow) { d.Groups = page },
	Path: kafkaGroupPath,
	Noun: "consumer group",
	Lookup: func(snap *queue.Snapshot, v []string) (components.GroupRow, bool) {
		g, ok := snap.Group(v[1])
		return components.GroupRow{G: g}, ok
	},
}

// kafkaGroupPath names a consumer or share group: /…/:cluster/…/:group.
var kafkaGroupPath = Path{
	Params: []string{"cluster", "group"},
	Reader: func(v []string) queue.Reader { return queue.Reader{Broker: queue.Kafka, Cluster: v[0], Name: v[1]} },
}
