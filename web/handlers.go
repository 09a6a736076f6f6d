package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// chrome is the page frame's data for this request.
func (s *Server) chrome(c echo.Context, title, nav string) components.Chrome {
	ctx := c.Request().Context()
	p, _ := PrincipalFrom(ctx)
	return components.Chrome{
		Title: title, Sources: s.mon(c).Statuses(), Now: components.Now{T: time.Now()},
		User: p.Name, Role: string(p.Role), AuthOff: p.Method == methodNone, SignOut: p.Method == methodOIDC,
		Nav: nav, AssetVersion: s.assetVersion,
	}
}

// partial reports whether the request wants only the live blocks of a page
// (the 5 s refresh, or a filter/sort change made without a reload).
func partial(c echo.Context) bool { return c.QueryParam("partial") == "1" }

func (s *Server) overview(c echo.Context) error {
	tab := components.OverviewTabOf(c.QueryParam("tab")).Key
	nav := "overview"
	if tab == components.TabDLQs {
		nav = "dlqs"
	}
	d := s.overviewData(c, tab)
	d.Chrome = s.chrome(c, "Overview", nav)
	d.Summary.Sources = len(d.Chrome.Sources)
	for _, st := range d.Chrome.Sources {
		if st.Up {
			d.Summary.SourcesUp++
		}
	}
	if partial(c) {
		return render(c, http.StatusOK, components.OverviewPartial(d))
	}
	return render(c, http.StatusOK, components.Overview(d))
}

// overviewData gathers every source's groups, queues and DLQs and shapes
// the requested tab's page of rows.
func (s *Server) overviewData(c echo.Context, tab string) components.OverviewData {
	var groups []components.GroupRow
	var queues []components.QueueRow
	var dlqs []components.DLQRow
	var consumers []components.ConsumerRow
	var sqs []components.SQSRow
	var shares []components.ShareRow
	// judgedQueues counts the RabbitMQ queues judged as readers: not DLQs.
	var judgedQueues int
	// readers are the consumer side (groups, JetStream consumers, SQS queues' and RabbitMQ
	// queues' consumers) that are not ok: only they count in the lag cards or get a line.
	var readers []queue.Reader
	// all is every reader of every broker, for the worst lag and the
	// lagging trend: the oldest lag may be any reader's. Building them costs
	// about 1 allocation per reader (BenchmarkOverview, 2,000 groups: 30.2k
	// allocations and 8.9 MB before, 32.4k and 10.2 MB with them).
	var all []queue.Reader
	m := s.mon(c)
	for _, snap := range m.Snapshots() {
		all = append(all, snap.Readers()...)
		consumers = append(consumers, consumerRows(snap)...)
		sqs = append(sqs, sqsRows(snap)...)
		shares = append(shares, shareRows(snap)...)
		for i := range snap.Groups {
			g := &snap.Groups[i]
			groups = append(groups, components.GroupRow{G: g, Status: g.EffectiveStatus(), Lag: g.TotalLag(), LagSec: g.MaxLagSeconds()})
			if groups[len(groups)-1].Status != queue.StatusOK {
				readers = append(readers, g.Reader())
			}
		}
		for i := range snap.Consumers {
			if c := &snap.Consumers[i]; c.EffectiveStatus() != queue.StatusOK {
				readers = append(readers, c.Reader())
			}
		}
		for i := range snap.DLQs {
			dlqs = append(dlqs, components.DLQRow{D: &snap.DLQs[i]})
		}
	}
	for _, snap := range m.Snapshots() {
		for i := range snap.Queues {
			q := &snap.Queues[i]
			row := components.QueueRow{Q: q}
			// A queue is a DLQ when its own broker's poll listed it as one.
			if !snap.JudgedAsReader(q.VHost, q.Name) {
				row.DLQURL = components.DLQURL((queue.DLQRef{Broker: snap.Broker, Cluster: q.Cluster, VHost: q.VHost, Name: q.Name}).ID())
			}
			queues = append(queues, row)
			if row.DLQURL == "" {
				judgedQueues++
				if q.EffectiveStatus() != queue.StatusOK {
					readers = append(readers, q.Reader())
				}
			}
		}
	}
	for _, r := range sqs {
		if r.Status != queue.StatusOK {
			readers = append(readers, r.Q.Reader())
		}
	}
	for _, r := range shares {
		if r.Status != queue.StatusOK {
			readers = append(readers, r.G.Reader())
		}
	}
	d := components.OverviewData{Counts: components.Counts{Groups: len(groups), Queues: len(queues), DLQs: len(dlqs), Consumers: len(consumers), SQS: len(sqs), Shares: len(shares)}}
	d.Summary = s.summary(m, all, readers, len(groups)+len(consumers)+len(sqs)+len(shares)+judgedQueues, dlqs)
	d.Outboxes = s.outboxCards(c, true)
	outbox := outboxReaders(d.Outboxes)
	_, d.Summary.OutboxStopped = tally(outbox)
	d.Attention, d.AttentionMore = s.attention(m, append(readers, outbox...), dlqs)

	switch tab {
	case components.TabQueues:
		d.Table = tableState(c, "/", tab, queueSorts, "messages")
		queues = filterRows(queues, d.Table.Q, func(r components.QueueRow) []string {
			return []string{r.Q.Name, r.Q.Cluster, r.Q.VHost, r.Q.Type}
		})
		sortRows(queues, queueSorts[d.Table.Sort], d.Table.Dir, func(a, b components.QueueRow) int {
			return strings.Compare(a.Q.Cluster+"\x00"+a.Q.VHost+"\x00"+a.Q.Name, b.Q.Cluster+"\x00"+b.Q.VHost+"\x00"+b.Q.Name)
		})
		d.Queues = page(&d.Table, queues)
	case components.TabDLQs:
		d.Table = tableState(c, "/", tab, dlqSorts, "messages")
		dlqs = filterRows(dlqs, d.Table.Q, func(r components.DLQRow) []string {
			return []string{r.D.Name, r.D.Cluster, r.D.VHost, string(r.D.Broker), r.D.Source()}
		})
		sortRows(dlqs, dlqSorts[d.Table.Sort], d.Table.Dir, func(a, b components.DLQRow) int {
			return strings.Compare(a.D.ID(), b.D.ID())
		})
		d.DLQs = page(&d.Table, dlqs)
		for i := range d.DLQs {
			d.DLQs[i].Trend = s.dlqSpark(m, d.DLQs[i].D)
		}
	case components.TabNATS:
		d.Table = tableState(c, "/", tab, consumerSorts, "status")
		consumers = filterRows(consumers, d.Table.Q, func(r components.ConsumerRow) []string {
			return []string{r.C.Name, r.C.Cluster, r.C.Stream, string(r.Status)}
		})
		sortRows(consumers, consumerSorts[d.Table.Sort], d.Table.Dir, compareConsumerNames)
		d.Consumers = page(&d.Table, consumers)
		for i := range d.Consumers {
			d.Consumers[i].Trend = s.readerSpark(m, d.Consumers[i].C.Reader(), "pending")
		}
	case components.TabSQS:
		s.sqsTab(c, &d, sqs)
	case components.TabShare:
		s.shareTab(c, &d, shares)
	default:
		d.Table = tableState(c, "/", tab, groupSorts, "status")
		groups = filterRows(groups, d.Table.Q, func(r components.GroupRow) []string {
			return []string{r.G.Name, r.G.Cluster, r.G.State, string(r.Status)}
		})
		sortRows(groups, groupSorts[d.Table.Sort], d.Table.Dir, compareGroupNames)
		d.Groups = page(&d.Table, groups)
		for i := range d.Groups {
			d.Groups[i].Trend = s.readerSpark(m, d.Groups[i].G.Reader(), "lag")
		}
	}
	return d
}

func compareGroupNames(a, b components.GroupRow) int {
	if c := strings.Compare(a.G.Cluster, b.G.Cluster); c != 0 {
		return c
	}
	return strings.Compare(a.G.Name, b.G.Name)
}

// sortFunc compares two rows in ascending order of one column.
type sortFunc[T any] func(a, b T) int

// groupSorts are the group table's sortable columns. Status sorts by
// harm: severity, then lag.
var groupSorts = map[string]sortFunc[components.GroupRow]{
	"name":    func(a, b components.GroupRow) int { return strings.Compare(a.G.Name, b.G.Name) },
	"cluster": func(a, b components.GroupRow) int { return strings.Compare(a.G.Cluster, b.G.Cluster) },
	"state":   func(a, b components.GroupRow) int { return strings.Compare(a.G.State, b.G.State) },
	"status": func(a, b components.GroupRow) int {
		if c := a.Status.Severity() - b.Status.Severity(); c != 0 {
			return c
		}
		return cmpInt(a.Lag, b.Lag)
	},
	"lag":     func(a, b components.GroupRow) int { return cmpInt(a.Lag, b.Lag) },
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

var queueSorts = map[string]sortFunc[components.QueueRow]{
	"name": func(a, b components.QueueRow) int { return strings.Compare(a.Q.Name, b.Q.Name) },
	"cluster": func(a, b components.QueueRow) int {
		return strings.Compare(a.Q.Cluster+"\x00"+a.Q.VHost, b.Q.Cluster+"\x00"+b.Q.VHost)
	},
	"messages":  func(a, b components.QueueRow) int { return cmpInt(a.Q.Messages(), b.Q.Messages()) },
	"ready":     func(a, b components.QueueRow) int { return cmpInt(a.Q.Ready, b.Q.Ready) },
	"unacked":   func(a, b components.QueueRow) int { return cmpInt(a.Q.Unacked, b.Q.Unacked) },
	"consumers": func(a, b components.QueueRow) int { return a.Q.Consumers - b.Q.Consumers },
	// Status sorts by harm, severity then ready messages, as groups do.
	"status": func(a, b components.QueueRow) int {
		if c := a.Q.EffectiveStatus().Severity() - b.Q.EffectiveStatus().Severity(); c != 0 {
			return c
		}
		return cmpInt(a.Q.Ready, b.Q.Ready)
	},
	"age": func(a, b components.QueueRow) int {
		return cmpInt(int64(a.Q.HeadMessageAge), int64(b.Q.HeadMessageAge))
	},
}

var dlqSorts = map[string]sortFunc[components.DLQRow]{
	"name":     func(a, b components.DLQRow) int { return strings.Compare(a.D.Name, b.D.Name) },
	"cluster":  func(a, b components.DLQRow) int { return strings.Compare(a.D.ID(), b.D.ID()) },
	"messages": func(a, b components.DLQRow) int { return cmpInt(a.D.Messages, b.D.Messages) },
	"oldest":   func(a, b components.DLQRow) int { return cmpInt(int64(a.D.OldestAge), int64(b.D.OldestAge)) },
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

// tableState reads a list's sort, direction, filter and page from the
// query string, falling back to defaults for anything unknown.
func tableState[T any](c echo.Context, path, tab string, sorts map[string]sortFunc[T], def string) components.Table {
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

// filterRows keeps rows any of whose fields contains q, case-insensitively.
func filterRows[T any](rows []T, q string, fields func(T) []string) []T {
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

func sortRows[T any](rows []T, by sortFunc[T], dir string, tie func(a, b T) int) {
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

// page cuts the rows to the table's page and fills in the paging fields.
func page[T any](t *components.Table, rows []T) []T {
	t.Total = len(rows)
	t.Pages = max(1, (len(rows)+components.PageSize-1)/components.PageSize)
	t.Page = min(max(t.Page, 1), t.Pages)
	from := (t.Page - 1) * components.PageSize
	to := min(from+components.PageSize, len(rows))
	t.From, t.To = from+1, to
	return rows[from:to]
}

func cmpInt(a, b int64) int {
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

func (s *Server) groupPage(c echo.Context) error {
	g, err := s.groupParam(c)
	if err != nil {
		return err
	}
	d := components.GroupData{
		Chrome: s.chrome(c, g.Name, "overview"), Group: g, Status: g.EffectiveStatus(),
		Lag: g.TotalLag(), LagSec: g.MaxLagSeconds(), Total: len(g.Partitions),
		HistoryURL: "/api/v1/groups/" + url.PathEscape(g.Cluster) + "/" + url.PathEscape(g.Name) + "/history",
		Range:      chartRange(c),
		CanReset:   s.opts.Offsets != nil && principalOf(c.Request().Context()).mayReader(config.RoleOperator, g.Reader()),
		ResetAPI:   "/api/v1/groups/" + url.PathEscape(g.Cluster) + "/" + url.PathEscape(g.Name) + "/offsets",
	}
	for _, t := range g.Topics() {
		d.Topics = append(d.Topics, components.TopicRow{TopicLag: t, Share: share(t.Lag, d.Lag)})
	}
	d.Links = components.Links{
		DLQs: s.dlqsOf(c, g.Reader()), ShowDLQs: true,
		Grafana: grafanaGroup.link(s.opts.GrafanaURL, g.Cluster, g.Name),
	}
	d.Culprits = g.Culprits()
	rows := partitionRows(g, d.Culprits, d.Lag)
	// Status first, so that on a group of hundreds of partitions the
	// culprits lead the first page; healthy groups fall back to topic order.
	d.Table = tableState(c, components.GroupURL(g.Cluster, g.Name), "", partitionSorts, "status")
	rows = filterRows(rows, d.Table.Q, func(r components.PartitionRow) []string {
		fields := []string{r.P.Topic, r.P.Member, r.P.Host, string(r.Judged.Status)}
		if r.Culprit {
			fields = append(fields, "culprit")
		}
		return fields
	})
	sortRows(rows, partitionSorts[d.Table.Sort], d.Table.Dir, partitionSorts["topic"])
	d.Partitions = page(&d.Table, rows)
	if partial(c) {
		return render(c, http.StatusOK, components.GroupPartial(d))
	}
	return render(c, http.StatusOK, components.Group(d))
}

func share(part, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(part) / float64(total)
}

// partitionRows are g's partitions with their share of lag and how the
// evaluation judged them; rank orders the judged ones worst first.
func partitionRows(g *queue.ConsumerGroup, culprits []queue.PartitionStatus, lag int64) []components.PartitionRow {
	rank := make(map[queue.TopicPartition]int, len(g.Judged))
	for i, p := range g.Judged {
		rank[queue.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = i
	}
	culprit := make(map[queue.TopicPartition]bool, len(culprits))
	for _, p := range culprits {
		culprit[queue.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = true
	}
	judged := judgedOf(g)
	rows := make([]components.PartitionRow, len(g.Partitions))
	for i := range g.Partitions {
		p := &g.Partitions[i]
		tp := queue.TopicPartition{Topic: p.Topic, Partition: p.Partition}
		r, ok := rank[tp]
		if !ok {
			r = len(g.Judged)
		}
		rows[i] = components.PartitionRow{P: p, Share: share(p.Lag, lag), Judged: judged.of(tp), Culprit: culprit[tp], Rank: r}
	}
	return rows
}

var partitionSorts = map[string]sortFunc[components.PartitionRow]{
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
	"committed": func(a, b components.PartitionRow) int { return cmpInt(a.P.Committed, b.P.Committed) },
	"end":       func(a, b components.PartitionRow) int { return cmpInt(a.P.End, b.P.End) },
	"lag":       func(a, b components.PartitionRow) int { return cmpInt(a.P.Lag, b.P.Lag) },
	"lagsec":    func(a, b components.PartitionRow) int { return cmpFloat(a.P.LagSeconds, b.P.LagSeconds) },
	"member": func(a, b components.PartitionRow) int {
		return strings.Compare(a.P.Member+"\x00"+a.P.Host, b.P.Member+"\x00"+b.P.Host)
	},
}

// groupsAndDLQs gathers every source's groups and DLQs, worst first: the
// API answers "what needs me?" before anything else.
func (s *Server) groupsAndDLQs(c echo.Context) ([]queue.ConsumerGroup, []queue.DLQ) {
	var groups []queue.ConsumerGroup
	var dlqs []queue.DLQ
	for _, snap := range s.mon(c).Snapshots() {
		groups = append(groups, snap.Groups...)
		dlqs = append(dlqs, snap.DLQs...)
	}
	slices.SortStableFunc(groups, func(a, b queue.ConsumerGroup) int {
		if sa, sb := a.EffectiveStatus().Severity(), b.EffectiveStatus().Severity(); sa != sb {
			return sb - sa
		}
		if c := cmpInt(b.TotalLag(), a.TotalLag()); c != 0 {
			return c
		}
		return strings.Compare(a.Cluster+"\x00"+a.Name, b.Cluster+"\x00"+b.Name)
	})
	slices.SortStableFunc(dlqs, func(a, b queue.DLQ) int {
		if c := cmpInt(b.Messages, a.Messages); c != 0 {
			return c
		}
		return strings.Compare(a.ID(), b.ID())
	})
	return groups, dlqs
}

// groupParam finds the group named by the :cluster and :group path
// parameters.
func (s *Server) groupParam(c echo.Context) (*queue.ConsumerGroup, error) {
	cluster, err := pathParam(c, "cluster")
	if err != nil {
		return nil, err
	}
	group, err := pathParam(c, "group")
	if err != nil {
		return nil, err
	}
	g, ok := s.findGroup(c, cluster, group)
	if !ok {
		return nil, echo.NewHTTPError(http.StatusNotFound, "no such consumer group")
	}
	return g, nil
}

func (s *Server) findGroup(c echo.Context, cluster, group string) (*queue.ConsumerGroup, bool) {
	// Only a Kafka poll lists groups, so the cluster's snapshot that has
	// the group is the one, without naming the broker.
	for _, snap := range s.mon(c).Snapshots() {
		if snap.Cluster != cluster {
			continue
		}
		if g, ok := snap.Group(group); ok {
			return g, true
		}
	}
	return nil, false
}
