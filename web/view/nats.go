package view

import (
	"net/url"
	"strings"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/auth"
	"github.com/queuewatch/queuewatch/web/components"
)

// ConsumerRows are the JetStream consumers of a snapshot as overview rows.
func ConsumerRows(snap *queue.Snapshot) []components.ConsumerRow {
	out := make([]components.ConsumerRow, 0, len(snap.Consumers))
	for i := range snap.Consumers {
		c := &snap.Consumers[i]
		out = append(out, components.ConsumerRow{C: c, Status: c.EffectiveStatus()})
	}
	return out
}

// ConsumerSorts are the consumer table's sortable columns. Status sorts by
// harm, severity then pending, as groups do.
var ConsumerSorts = map[string]sortFunc[components.ConsumerRow]{
	"name": func(a, b components.ConsumerRow) int { return strings.Compare(a.C.Name, b.C.Name) },
	"cluster": func(a, b components.ConsumerRow) int {
		return strings.Compare(a.C.Cluster+"\x00"+a.C.Stream, b.C.Cluster+"\x00"+b.C.Stream)
	},
	"status": func(a, b components.ConsumerRow) int {
		if c := a.Status.Severity() - b.Status.Severity(); c != 0 {
			return c
		}
		return CmpInt(int64(a.C.Pending), int64(b.C.Pending))
	},
	"pending":     func(a, b components.ConsumerRow) int { return CmpInt(int64(a.C.Pending), int64(b.C.Pending)) },
	"inflight":    func(a, b components.ConsumerRow) int { return a.C.AckPending - b.C.AckPending },
	"waiting":     func(a, b components.ConsumerRow) int { return a.C.Waiting - b.C.Waiting },
	"redelivered": func(a, b components.ConsumerRow) int { return a.C.Redelivered - b.C.Redelivered },
	"lagsec":      func(a, b components.ConsumerRow) int { return cmpFloat(a.C.LagSeconds, b.C.LagSeconds) },
}

// CompareConsumerNames orders consumers by cluster, stream and name.
func CompareConsumerNames(a, b components.ConsumerRow) int {
	return strings.Compare(a.C.Cluster+"\x00"+a.C.Stream+"\x00"+a.C.Name, b.C.Cluster+"\x00"+b.C.Stream+"\x00"+b.C.Name)
}

// ConsumerHistoryURL is the JSON endpoint a consumer page's chart reads.
func ConsumerHistoryURL(c *queue.StreamConsumer) string {
	return "/api/v1/nats/consumers/" + url.PathEscape(c.Cluster) + "/" + url.PathEscape(c.Stream) + "/" + url.PathEscape(c.Name) + "/history"
}

// ConsumerDLQ is the DLQ of the dead letters captured from c, if it has
// any. Capture names it after the consumer, or stream.consumer when
// consumers of several streams share the name; snap is c's own poll, so
// its DLQs are of c's broker.
func ConsumerDLQ(snap *queue.Snapshot, c *queue.StreamConsumer) (queue.DLQ, bool) {
	for _, d := range snap.DLQs {
		if len(d.Sources) == 0 || d.Sources[0] != c.Stream {
			continue
		}
		if d.Name == c.Name || d.Name == c.Stream+"."+c.Name {
			return d, true
		}
	}
	return queue.DLQ{}, false
}

// ConsumerHistory is c's kept history, or none when the monitor keeps no
// consumer history.
func (s *Server) ConsumerHistory(m auth.Monitor, c *queue.StreamConsumer) []queue.ConsumerPoint {
	h, ok := m.(auth.ConsumerHistorian)
	if !ok {
		return nil
	}
	return h.ConsumerHistory(c.Cluster, c.Stream, c.Name)
}

// Consumers are NATS JetStream consumers.
var Consumers = Kind[components.ConsumerRow]{
	Tab:    components.OverviewTab{Key: components.TabNATS, Label: "NATS consumers", Placeholder: "filter consumers: name, cluster, stream, status", Optional: true},
	Rows:   ConsumerRows,
	Reader: func(r components.ConsumerRow) queue.Reader { return r.C.Reader() },
	Status: func(r components.ConsumerRow) queue.Status { return r.Status },
	Sorts:  ConsumerSorts, DefaultSort: "status", Names: CompareConsumerNames,
	Filter: func(r components.ConsumerRow) []string {
		return []string{r.C.Name, r.C.Cluster, r.C.Stream, string(r.Status)}
	},
	Trend: func(r *components.ConsumerRow) *components.Spark { return &r.Trend }, Series: "pending",
	Put: func(d *components.OverviewData, page []components.ConsumerRow) { d.Consumers = page },
	Path: Path{
		Params: []string{"cluster", "stream", "consumer"},
		Reader: func(v []string) queue.Reader {
			return queue.Reader{Broker: queue.NATS, Cluster: v[0], Scope: v[1], Name: v[2]}
		},
	},
	Noun: "NATS consumer",
	Lookup: func(snap *queue.Snapshot, v []string) (components.ConsumerRow, bool) {
		con, ok := snap.Consumer(v[1], v[2])
		return components.ConsumerRow{C: con}, ok
	},
}
