package view

import (
	"net/url"
	"strings"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// This file is what both surfaces know of Pub/Sub subscriptions: the
// reader kind (its overview rows, sorts and path) and its history URL;
// the page is in web/ui, the JSON in web/api.

// PubSubRows are the Pub/Sub subscriptions of a snapshot as overview
// rows, each linked to its first DLQ subscription and, when it is one, to
// its own DLQ page.
func PubSubRows(snap *queue.Snapshot) []components.PubSubRow {
	if len(snap.PubSubSubscriptions) == 0 {
		return nil
	}
	dlqs := map[string]string{}
	for i := range snap.DLQs {
		dlqs[snap.DLQs[i].Name] = components.DLQURL(snap.DLQs[i].ID())
	}
	out := make([]components.PubSubRow, 0, len(snap.PubSubSubscriptions))
	for i := range snap.PubSubSubscriptions {
		s := &snap.PubSubSubscriptions[i]
		r := components.PubSubRow{S: s, Status: s.EffectiveStatus(), DLQURL: dlqs[s.Name]}
		if len(s.DeadLetterQueues) > 0 {
			r.DeadLetterURL = dlqs[s.DeadLetterQueues[0]]
		}
		out = append(out, r)
	}
	return out
}

// backlogOf is a row's backlog for sorting: -1 when unknown, so unknown
// sorts below an empty backlog.
func backlogOf(r components.PubSubRow) int64 {
	if m := r.S.Monitoring; m != nil && m.HasUndelivered {
		return m.Undelivered
	}
	return -1
}

// PubSubSorts are the Pub/Sub table's sortable columns. Status sorts by
// harm, severity then the number of traps, then the backlog.
var PubSubSorts = map[string]sortFunc[components.PubSubRow]{
	"name":    func(a, b components.PubSubRow) int { return strings.Compare(a.S.Name, b.S.Name) },
	"cluster": func(a, b components.PubSubRow) int { return strings.Compare(a.S.Cluster, b.S.Cluster) },
	"topic":   func(a, b components.PubSubRow) int { return strings.Compare(a.S.Topic, b.S.Topic) },
	"status": func(a, b components.PubSubRow) int {
		if c := a.Status.Severity() - b.Status.Severity(); c != 0 {
			return c
		}
		if c := len(a.S.Lints) - len(b.S.Lints); c != 0 {
			return c
		}
		return CmpInt(backlogOf(a), backlogOf(b))
	},
	"backlog": func(a, b components.PubSubRow) int { return CmpInt(backlogOf(a), backlogOf(b)) },
	"oldest": func(a, b components.PubSubRow) int {
		return CmpInt(int64(a.S.Reader().LagSeconds), int64(b.S.Reader().LagSeconds))
	},
}

// ComparePubSubNames orders subscriptions by project and name.
func ComparePubSubNames(a, b components.PubSubRow) int {
	return strings.Compare(a.S.Cluster+"\x00"+a.S.Name, b.S.Cluster+"\x00"+b.S.Name)
}

// PubSubHistoryURL is the JSON endpoint a subscription page's chart reads.
func PubSubHistoryURL(s *queue.PubSubSubscription) string {
	return "/api/v1/pubsub/subscriptions/" + url.PathEscape(s.Cluster) + "/" + url.PathEscape(s.Name) + "/history"
}

// PubSubSubscriptions are Google Cloud Pub/Sub subscriptions, judged by
// their configuration and, with Cloud Monitoring, their backlog.
var PubSubSubscriptions = Kind[components.PubSubRow]{
	Tab:    components.OverviewTab{Key: components.TabPubSub, Label: "Pub/Sub", Placeholder: "filter: subscription, project, topic, trap", Optional: true},
	Rows:   PubSubRows,
	Reader: func(r components.PubSubRow) queue.Reader { return r.S.Reader() },
	Status: func(r components.PubSubRow) queue.Status { return r.Status },
	Sorts:  PubSubSorts, DefaultSort: "status", Names: ComparePubSubNames,
	Filter: func(r components.PubSubRow) []string {
		f := []string{r.S.Name, r.S.Cluster, r.S.Topic, string(r.Status), r.S.DeadLetterTopic}
		for _, l := range r.S.Lints {
			f = append(f, l.Kind)
		}
		return f
	},
	Trend: func(r *components.PubSubRow) *components.Spark { return &r.Trend }, Series: "undelivered messages",
	Put: func(d *components.OverviewData, page []components.PubSubRow) { d.PubSub = page },
	Path: Path{
		Params: []string{"cluster", "subscription"},
		Reader: func(v []string) queue.Reader { return queue.Reader{Broker: queue.PubSub, Cluster: v[0], Name: v[1]} },
	},
	Noun: "Pub/Sub subscription",
	Lookup: func(snap *queue.Snapshot, v []string) (components.PubSubRow, bool) {
		s, ok := snap.PubSubSubscription(v[1])
		return components.PubSubRow{S: s}, ok
	},
}
