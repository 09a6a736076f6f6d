package ui

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/auth"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// Chrome is the page frame's data for this request.
func (s *Server) Chrome(c echo.Context, title, nav string) components.Chrome {
	ctx := c.Request().Context()
	p, _ := auth.PrincipalFrom(ctx)
	return components.Chrome{
		Title: title, Sources: s.Mon(c).Statuses(), Now: components.Now{T: time.Now()},
		User: p.Name, Role: string(p.Role), AuthOff: p.Method == auth.MethodNone, SignOut: p.Method == auth.MethodOIDC,
		Nav: nav, AssetVersion: s.AssetVersion,
	}
}

// Partial reports whether the request wants only the live blocks of a page
// (the 5 s refresh, or a filter/sort change made without a reload).
func Partial(c echo.Context) bool { return c.QueryParam("partial") == "1" }

// Overview is /: every reader and DLQ the principal sees, worst first.
func (s *Server) Overview(c echo.Context) error {
	tab := view.TabOf(c.QueryParam("tab")).Key
	nav := "overview"
	if tab == components.TabDLQs {
		nav = "dlqs"
	}
	d := s.overviewData(c, tab)
	d.Chrome = s.Chrome(c, "Overview", nav)
	d.Summary.Sources = len(d.Chrome.Sources)
	for _, st := range d.Chrome.Sources {
		if st.Up {
			d.Summary.SourcesUp++
		}
	}
	if Partial(c) {
		return view.Render(c, http.StatusOK, components.OverviewPartial(d))
	}
	return view.Render(c, http.StatusOK, components.Overview(d))
}

// overviewData gathers every source's readers and DLQs, kind by kind
// (view.Kinds), and shapes the requested tab's page of rows.
func (s *Server) overviewData(c echo.Context, tab string) components.OverviewData {
	lists := make([]view.List, len(view.Kinds))
	for i, k := range view.Kinds {
		lists[i] = k.List()
	}
	var dlqs []components.DLQRow
	// all is every reader of every broker, for the worst lag and the
	// lagging trend: the oldest lag may be any reader's. Building them costs
	// about 1 allocation per reader (BenchmarkOverview, 2,000 groups: 30.2k
	// allocations and 8.9 MB before, 32.4k and 10.2 MB with them).
	var all []queue.Reader
	m := s.Mon(c)
	for _, snap := range m.Snapshots() {
		all = append(all, snap.Readers()...)
		for _, l := range lists {
			l.Add(snap)
		}
		for i := range snap.DLQs {
			dlqs = append(dlqs, components.DLQRow{D: &snap.DLQs[i]})
		}
	}
	d := components.OverviewData{Tabs: view.Tabs(), Counts: components.Counts{components.TabDLQs: len(dlqs)}}
	// readers are the consumer side that is not ok: only they count in the
	// lag cards or get a line; judged counts every reader.
	var readers []queue.Reader
	judged := 0
	for _, l := range lists {
		d.Counts[l.Tab().Key] = l.Len()
		judged += l.Readers()
		readers = append(readers, l.NotOK()...)
	}
	d.Summary = s.summary(m, all, readers, judged, dlqs)
	d.Outboxes = s.OutboxCards(c, true)
	outbox := view.OutboxReaders(d.Outboxes)
	_, d.Summary.OutboxStopped = tally(outbox)
	d.Attention, d.AttentionMore = s.Attention(m, append(readers, outbox...), dlqs)

	if tab == components.TabDLQs {
		d.Table = view.TableState(c, "/", tab, view.DLQSorts, "messages")
		dlqs = view.FilterRows(dlqs, d.Table.Q, func(r components.DLQRow) []string {
			return []string{r.D.Name, r.D.Cluster, r.D.VHost, string(r.D.Broker), r.D.Source()}
		})
		view.SortRows(dlqs, view.DLQSorts[d.Table.Sort], d.Table.Dir, func(a, b components.DLQRow) int {
			return strings.Compare(a.D.ID(), b.D.ID())
		})
		d.DLQs = view.Page(&d.Table, dlqs)
		for i := range d.DLQs {
			d.DLQs[i].Trend = s.dlqSpark(m, d.DLQs[i].D)
		}
		return d
	}
	spark := func(r queue.Reader, series string) components.Spark { return s.readerSpark(m, r, series) }
	for _, l := range lists {
		if l.Tab().Key == tab {
			l.Fill(c, &d, spark)
		}
	}
	return d
}

// GroupPage is /kafka/{cluster}/groups/{group}.
func (s *Server) GroupPage(c echo.Context) error {
	_, row, err := view.Groups.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	g := row.G
	d := components.GroupData{
		Chrome: s.Chrome(c, g.Name, "overview"), Group: g, Status: g.EffectiveStatus(),
		Lag: g.TotalLag(), LagSec: g.MaxLagSeconds(), Total: len(g.Partitions),
		HistoryURL: "/api/v1/groups/" + url.PathEscape(g.Cluster) + "/" + url.PathEscape(g.Name) + "/history",
		Range:      view.ChartRange(c),
		CanReset:   s.HasResets() && auth.PrincipalOf(c.Request().Context()).MayReader(config.RoleOperator, g.Reader()),
		ResetAPI:   "/api/v1/groups/" + url.PathEscape(g.Cluster) + "/" + url.PathEscape(g.Name) + "/offsets",
	}
	for _, t := range g.Topics() {
		d.Topics = append(d.Topics, components.TopicRow{TopicLag: t, Share: view.Share(t.Lag, d.Lag)})
	}
	d.Links = components.Links{
		DLQs: s.DLQsOf(c, g.Reader()), ShowDLQs: true,
		Grafana: grafanaGroup.Link(s.GrafanaURL(), g.Cluster, g.Name),
	}
	d.Culprits = g.Culprits()
	rows := view.PartitionRows(g, d.Culprits, d.Lag)
	// Status first, so that on a group of hundreds of partitions the
	// culprits lead the first page; healthy groups fall back to topic order.
	d.Table = view.TableState(c, components.GroupURL(g.Cluster, g.Name), "", view.PartitionSorts, "status")
	rows = view.FilterRows(rows, d.Table.Q, func(r components.PartitionRow) []string {
		fields := []string{r.P.Topic, r.P.Member, r.P.Host, string(r.Judged.Status)}
		if r.Culprit {
			fields = append(fields, "culprit")
		}
		return fields
	})
	view.SortRows(rows, view.PartitionSorts[d.Table.Sort], d.Table.Dir, view.PartitionSorts["topic"])
	d.Partitions = view.Page(&d.Table, rows)
	if Partial(c) {
		return view.Render(c, http.StatusOK, components.GroupPartial(d))
	}
	return view.Render(c, http.StatusOK, components.Group(d))
}
