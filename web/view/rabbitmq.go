package view

import (
	"net/url"
	"strings"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// RabbitHistoryURL is the JSON endpoint a queue page's chart reads.
func RabbitHistoryURL(q *queue.Queue) string {
	return rabbitQueueAPI(q) + "/history"
}

// rabbitQueueAPI is a queue's object in the API.
func rabbitQueueAPI(q *queue.Queue) string {
	return "/api/v1/rabbitmq/queues/" + url.PathEscape(q.Cluster) + "/" + url.PathEscape(q.VHost) + "/" + url.PathEscape(q.Name)
}

// CompareQueueNames orders queues by cluster, vhost and name.
func CompareQueueNames(a, b components.QueueRow) int {
	return strings.Compare(a.Q.Cluster+"\x00"+a.Q.VHost+"\x00"+a.Q.Name, b.Q.Cluster+"\x00"+b.Q.VHost+"\x00"+b.Q.Name)
}

// Queues are RabbitMQ queues; one its own poll lists as a DLQ links to
// its DLQ page and is not judged as a reader.
var Queues = Kind[components.QueueRow]{
	Tab: components.OverviewTab{Key: components.TabQueues, Label: "Queues", Placeholder: "filter queues: name, cluster, vhost"},
	Rows: func(snap *queue.Snapshot) []components.QueueRow {
		out := make([]components.QueueRow, 0, len(snap.Queues))
		for i := range snap.Queues {
			q := &snap.Queues[i]
			row := components.QueueRow{Q: q}
			if !snap.JudgedAsReader(q.VHost, q.Name) {
				row.DLQURL = components.DLQURL((queue.DLQRef{Broker: snap.Broker, Cluster: q.Cluster, VHost: q.VHost, Name: q.Name}).ID())
			}
			out = append(out, row)
		}
		return out
	},
	Reader:    func(r components.QueueRow) queue.Reader { return r.Q.Reader() },
	Status:    func(r components.QueueRow) queue.Status { return r.Q.EffectiveStatus() },
	NotReader: func(r components.QueueRow) bool { return r.DLQURL != "" },
	Sorts:     QueueSorts, DefaultSort: "messages", Names: CompareQueueNames,
	Filter: func(r components.QueueRow) []string { return []string{r.Q.Name, r.Q.Cluster, r.Q.VHost, r.Q.Type} },
	Put:    func(d *components.OverviewData, page []components.QueueRow) { d.Queues = page },
	Path: Path{
		Params: []string{"cluster", "vhost", "queue"},
		Reader: func(v []string) queue.Reader {
			return queue.Reader{Broker: queue.RabbitMQ, Cluster: v[0], Scope: v[1], Name: v[2]}
		},
	},
	Noun: "RabbitMQ queue",
	Lookup: func(snap *queue.Snapshot, v []string) (components.QueueRow, bool) {
		if snap.Broker != queue.RabbitMQ {
			return components.QueueRow{}, false
		}
		q, ok := snap.Queue(v[1], v[2])
		return components.QueueRow{Q: q}, ok
	},
}
