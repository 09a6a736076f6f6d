package ui

import (
	"strings"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// This file is what the overview says about readers (queue.Reader), written
// once for every broker: how many lag or stopped, and their "Needs
// attention" lines. A broker's own page sections are in its own file.

// tally counts the readers that lag (warn, stall, stop) and those of them
// that are stopped (stall and stop: nothing moves).
func tally(readers []queue.Reader) (lagging, stopped int) {
	for i := range readers {
		if readers[i].Lagging() {
			lagging++
		}
		if readers[i].Stopped() {
			stopped++
		}
	}
	return lagging, stopped
}

// readerAttention is a "Needs attention" line for every reader that is not
// ok, ranked by status then backlog.
func readerAttention(readers []queue.Reader) []attentionItem {
	var items []attentionItem
	for i := range readers {
		r := &readers[i]
		if r.Status.Severity() == queue.StatusOK.Severity() {
			continue
		}
		a := components.Attention{
			Class: string(r.Status), Glyph: components.StatusGlyph(r.Status), Word: string(r.Status),
			Name: r.Title, Where: readerWhere(r),
			Metric: r.BacklogText(), MetricExact: r.BacklogTitle(),
			Reason: r.Reason, Href: r.Page, Action: "open",
		}
		if r.LagBasis != queue.LagUnknown {
			a.Age = components.Seconds(r.LagSeconds)
			a.AgeTitle = "the next " + strings.TrimSuffix(string(r.BacklogUnit), "s") + " to be read is " + a.Age + " old"
			switch {
			case r.LagBasis == queue.LagEstimate && r.LagNote != "":
				a.Age = "≥ " + a.Age
				a.AgeTitle += " or more (" + r.LagNote + ")"
			case r.LagBasis == queue.LagEstimate:
				a.AgeTitle += " or more (still reading the rest)"
			}
		}
		items = append(items, attentionItem{status: r.Status, since: r.StatusSince, A: a})
	}
	return items
}

// readerWhere names where a reader lives: "kafka:eu", "nats:eu · ORDERS".
func readerWhere(r *queue.Reader) string {
	w := string(r.Broker) + ":" + r.Cluster
	if r.Scope != "" {
		w += " · " + r.Scope
	}
	return w
}
