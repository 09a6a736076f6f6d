package view

import (
	"net/url"
	"strings"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// This file is what both surfaces know of SQS queues: the reader kind
// (its overview rows, sorts and path) and its history URL; the page is in
// web/ui, the JSON in web/api.

// SQSRows are the SQS queues of a snapshot as overview rows, each linked
// to the DLQ its redrive policy names and, when it is one, to its own DLQ
// page. snap is the queue's own poll, so its DLQs are of the queue's
// broker.
func SQSRows(snap *queue.Snapshot) []components.SQSRow {
	if len(snap.SQSQueues) == 0 {
		return nil
	}
	dlqs := map[string]string{}
	for i := range snap.DLQs {
		dlqs[snap.DLQs[i].Name] = components.DLQURL(snap.DLQs[i].ID())
	}
	out := make([]components.SQSRow, 0, len(snap.SQSQueues))
	for i := range snap.SQSQueues {
		q := &snap.SQSQueues[i]
		out = append(out, components.SQSRow{
			Q: q, Status: q.EffectiveStatus(), DLQURL: dlqs[q.Name], DeadLetterURL: dlqs[q.DeadLetterQueue],
		})
	}
	return out
}

// SQSSorts are the SQS table's sortable columns. Status sorts by harm,
// severity then visible messages, as groups do.
var SQSSorts = map[string]sortFunc[components.SQSRow]{
	"name":    func(a, b components.SQSRow) int { return strings.Compare(a.Q.Name, b.Q.Name) },
	"cluster": func(a, b components.SQSRow) int { return strings.Compare(a.Q.Cluster, b.Q.Cluster) },
	"status": func(a, b components.SQSRow) int {
		if c := a.Status.Severity() - b.Status.Severity(); c != 0 {
			return c
		}
		return CmpInt(a.Q.Visible, b.Q.Visible)
	},
	"visible":  func(a, b components.SQSRow) int { return CmpInt(a.Q.Visible, b.Q.Visible) },
	"inflight": func(a, b components.SQSRow) int { return CmpInt(a.Q.InFlight, b.Q.InFlight) },
	"delayed":  func(a, b components.SQSRow) int { return CmpInt(a.Q.Delayed, b.Q.Delayed) },
	"oldest":   func(a, b components.SQSRow) int { return CmpInt(int64(a.Q.OldestAge), int64(b.Q.OldestAge)) },
}

// CompareSQSNames orders SQS queues by cluster and name.
func CompareSQSNames(a, b components.SQSRow) int {
	return strings.Compare(a.Q.Cluster+"\x00"+a.Q.Name, b.Q.Cluster+"\x00"+b.Q.Name)
}

// SQSHistoryURL is the JSON endpoint a queue page's chart reads.
func SQSHistoryURL(q *queue.SQSQueue) string {
	return "/api/v1/sqs/queues/" + url.PathEscape(q.Cluster) + "/" + url.PathEscape(q.Name) + "/history"
}

// SQSQueues are Amazon SQS queues, judged by their consumers.
var SQSQueues = Kind[components.SQSRow]{
	Tab:    components.OverviewTab{Key: components.TabSQS, Label: "SQS queues", Placeholder: "filter: queue, account, DLQ", Optional: true},
	Rows:   SQSRows,
	Reader: func(r components.SQSRow) queue.Reader { return r.Q.Reader() },
	Status: func(r components.SQSRow) queue.Status { return r.Status },
	Sorts:  SQSSorts, DefaultSort: "status", Names: CompareSQSNames,
	Filter: func(r components.SQSRow) []string {
		return []string{r.Q.Name, r.Q.Cluster, string(r.Status), r.Q.DeadLetterQueue}
	},
	Trend: func(r *components.SQSRow) *components.Spark { return &r.Trend }, Series: "visible messages",
	Put: func(d *components.OverviewData, page []components.SQSRow) { d.SQS = page },
	Path: Path{
		Params: []string{"cluster", "queue"},
		Reader: func(v []string) queue.Reader { return queue.Reader{Broker: queue.SQS, Cluster: v[0], Name: v[1]} },
	},
	Noun: "SQS queue",
	Lookup: func(snap *queue.Snapshot, v []string) (components.SQSRow, bool) {
		q, ok := snap.SQSQueue(v[1])
		return components.SQSRow{Q: q}, ok
	},
}
