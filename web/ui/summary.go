package ui

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/auth"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// trendLimit bounds how many histories a summary sparkline sums, so the
// overview costs the same with 20 or 20,000 groups.
const trendLimit = 20

// attentionLimit is how many lines "Needs attention" shows.
const attentionLimit = 8

// summary fills the overview's cards. readers are the consumer side's
// readers that are not ok (groups and JetStream consumers), which the lag
// cards and the banner count, out of total; all is every reader of every
// broker (queue.Snapshot.Readers), over which the worst lag and the
// lagging backlog's trend are found.
func (s *Server) summary(m auth.Monitor, all, readers []queue.Reader, total int, dlqs []components.DLQRow) components.Summary {
	sum := components.Summary{Groups: total, DLQs: len(dlqs)}
	sum.Lagging, sum.Stopped = tally(readers)
	if w := worstLag(all); w != nil {
		sum.WorstLagSeconds, sum.WorstReader, sum.WorstURL = w.LagSeconds, w.Title, w.Page
		h := m.ReaderHistory(w.Key())
		vals := make([]float64, len(h))
		for i, p := range h {
			vals[i] = p.LagSeconds
		}
		sum.WorstTrend = components.NewSpark(vals, "lag time of "+w.Title+", kept history")
	}
	sum.LagTrend = components.NewSpark(s.LaggingTrend(m, all), "total backlog of the lagging readers, kept history")
	var nonEmpty []components.DLQRow
	for _, d := range dlqs {
		sum.DeadLetters += d.D.Messages
		if d.D.Messages > 0 {
			nonEmpty = append(nonEmpty, d)
		}
	}
	sum.NonEmptyDLQs = len(nonEmpty)
	slices.SortFunc(nonEmpty, func(a, b components.DLQRow) int { return view.CmpInt(b.D.Messages, a.D.Messages) })
	var dlqSeries [][]float64
	for _, d := range nonEmpty[:min(len(nonEmpty), trendLimit)] {
		h := m.DLQHistory(d.D.ID())
		dlqSeries = append(dlqSeries, view.Values(h, func(p queue.DLQPoint) int64 { return p.Messages }))
	}
	sum.DLQTrend = components.NewSpark(sumAligned(dlqSeries), "dead letters in the non-empty DLQs, kept history")
	return sum
}

// worstLag is the reader whose lag age is the oldest, of those whose lag
// age is known (an estimate is a lower bound, so it counts); nil when none
// lags at all.
func worstLag(all []queue.Reader) *queue.Reader {
	var worst *queue.Reader
	for i := range all {
		r := &all[i]
		if r.LagBasis != queue.LagUnknown && r.LagSeconds > 0 && (worst == nil || r.LagSeconds > worst.LagSeconds) {
			worst = r
		}
	}
	return worst
}

// LaggingTrend sums the kept backlog history of the biggest lagging
// readers. A slot's backlog is bytes of WAL, which do not add up with
// messages and rows, so slots are left out.
func (s *Server) LaggingTrend(m auth.Monitor, all []queue.Reader) []float64 {
	var lagging []*queue.Reader
	for i := range all {
		if r := &all[i]; r.Lagging() && r.BacklogKnown && r.BacklogUnit != queue.UnitBytes {
			lagging = append(lagging, r)
		}
	}
	slices.SortFunc(lagging, func(a, b *queue.Reader) int { return view.CmpInt(b.Backlog, a.Backlog) })
	var series [][]float64
	for _, r := range lagging[:min(len(lagging), trendLimit)] {
		series = append(series, view.Values(m.ReaderHistory(r.Key()), func(p queue.ReaderPoint) int64 { return p.Backlog }))
	}
	return sumAligned(series)
}

// sumAligned adds series point by point, aligned at their ends: every
// source appends one point per poll, so the last points are the same poll.
func sumAligned(series [][]float64) []float64 {
	n := 0
	for _, s := range series {
		n = max(n, len(s))
	}
	out := make([]float64, n)
	for _, s := range series {
		off := n - len(s)
		for i, v := range s {
			out[off+i] += v
		}
	}
	return out
}

// readerSpark is the sparkline of a reader's backlog over its kept
// history, for a row of the overview's reader tabs: "what of name".
func (s *Server) readerSpark(m auth.Monitor, r queue.Reader, what string) components.Spark {
	h := m.ReaderHistory(r.Key())
	return view.CountSpark(h, func(p queue.ReaderPoint) int64 { return p.Backlog }, what+" of "+r.Name, r.Backlog)
}

func (s *Server) dlqSpark(m auth.Monitor, d *queue.DLQ) components.Spark {
	vals := view.Values(m.DLQHistory(d.ID()), func(p queue.DLQPoint) int64 { return p.Messages })
	return components.NewSpark(vals, "messages in "+d.Name+" · now "+components.Exact(d.Messages))
}

// attentionRank orders "Needs attention" by harm, in queue's one severity
// order (stop, stall, error, rewind, warn). A non-empty DLQ ranks with warn:
// its messages wait but none are lost, and its source group, if stuck, has
// its own line above; at equal rank readers come before DLQs.
func attentionRank(it attentionItem) (rank int, dlq bool) {
	if it.A.Class == "dlq" {
		return queue.StatusWarn.Severity(), true
	}
	return it.status.Severity(), false
}

type attentionItem struct {
	A      components.Attention
	status queue.Status // a reader's; empty for a DLQ
	// since is a reader's onset; zero for a DLQ, or when not known.
	since time.Time
}

// Attention lists what needs a person, worst first, and how many more
// items did not fit: every reader that is not ok and every non-empty DLQ.
// Within a severity the order is by what stays put from poll to poll
// (compareAttention), never by a backlog that changes at every one, so
// the list does not reorder while nothing changes status.
func (s *Server) Attention(m auth.Monitor, readers []queue.Reader, dlqs []components.DLQRow) ([]components.Attention, int) {
	items := readerAttention(readers)
	for _, d := range dlqs {
		if d.D.Messages <= 0 {
			continue
		}
		a := components.Attention{
			Class: "dlq", Glyph: "✉", Word: "DLQ", Name: d.D.Name,
			Where:  string(d.D.Broker) + ":" + d.D.Cluster + components.VHostSuffix(d.D.VHost),
			Metric: components.Count(d.D.Messages) + " msgs", MetricExact: components.Exact(d.D.Messages) + " messages",
			Href: components.DLQURL(d.D.ID()), Action: "inspect",
		}
		if d.D.HasOldestAge {
			a.Age = "oldest " + components.Seconds(d.D.OldestAge.Seconds())
			a.AgeTitle = "the oldest dead letter is " + components.Seconds(d.D.OldestAge.Seconds()) + " old"
		}
		var parts []string
		if rate := growthPerMinute(m.DLQHistory(d.D.ID())); rate != "" {
			parts = append(parts, rate)
		}
		if src := d.D.Source(); src != "" {
			parts = append(parts, "← "+src)
		}
		a.Reason = strings.Join(parts, "  ")
		items = append(items, attentionItem{A: a})
	}
	slices.SortStableFunc(items, compareAttention)
	out := make([]components.Attention, 0, min(len(items), attentionLimit))
	for _, it := range items[:min(len(items), attentionLimit)] {
		out = append(out, it.A)
	}
	return out, len(items) - len(out)
}

// compareAttention orders "Needs attention": by severity (attentionRank),
// readers before DLQs of the same rank, then the latest onset first (a
// new problem is not hidden below the list's limit by old ones; readers
// whose onset is not known after those whose is), then by name and where.
func compareAttention(x, y attentionItem) int {
	xr, xdlq := attentionRank(x)
	yr, ydlq := attentionRank(y)
	if c := yr - xr; c != 0 {
		return c
	}
	if xdlq != ydlq {
		if xdlq {
			return 1
		}
		return -1
	}
	if x.since.IsZero() != y.since.IsZero() {
		if x.since.IsZero() {
			return 1
		}
		return -1
	}
	if c := y.since.Compare(x.since); c != 0 {
		return c
	}
	return cmp.Or(strings.Compare(x.A.Name, y.A.Name), strings.Compare(x.A.Where, y.A.Where))
}

// growthPerMinute says how fast a DLQ grew over its last 10 minutes of
// history: "+30/min", or "" when it did not grow.
func growthPerMinute(h []queue.DLQPoint) string {
	if len(h) < 2 {
		return ""
	}
	last := h[len(h)-1]
	first := h[0]
	for _, p := range h {
		if last.At.Sub(p.At) <= 10*time.Minute {
			first = p
			break
		}
	}
	mins := last.At.Sub(first.At).Minutes()
	if mins <= 0 || last.Messages <= first.Messages {
		return ""
	}
	rate := float64(last.Messages-first.Messages) / mins
	if rate < 1 {
		return "+<1/min"
	}
	return "+" + components.Count(int64(rate+0.5)) + "/min"
}
