package components

import "time"

// ResetView is one audited offset-reset apply, as the replays page lists
// it.
type ResetView struct {
	At                    time.Time
	Who, Cluster, Group   string
	PlanID, Result, To    string
	Error                 string
	Partitions, Committed int
	Reprocess, Skip       int64
}

// resetGlyph is the result's shape, so the word is never colour alone.
func resetGlyph(result string) string {
	switch result {
	case "ok":
		return "●"
	case "partial", "stale":
		return "▲"
	}
	return "■"
}

// resetClass is the result's colour class.
func resetClass(result string) string {
	switch result {
	case "ok":
		return "st-ok"
	case "partial", "stale":
		return "st-warn"
	}
	return "st-stop"
}

// ResetForm is what the reset dialog says for one reader: where it posts,
// what the operator types to confirm, and the reader's own words for the
// spec kinds.
type ResetForm struct {
	// API is the reader's offsets API, …/offsets (plan, apply).
	API string
	// Title and Name head the dialog ("Reset offsets of" orders-svc).
	Title, Name string
	// Confirm is what the operator types to apply.
	Confirm string
	// Help is the form's first line.
	Help string
	// Single hides the scope: the reader reads one log (a JetStream
	// consumer its stream).
	Single bool
	// AllScope names the whole scope; Topics are the topics to choose.
	AllScope string
	Topics   []string
	Words    ResetWords
}

// ResetWords are a broker's names for the spec kinds.
type ResetWords struct {
	Earliest, Latest, Shift, Offset, Group string
	// OffsetLabel labels the number an offset spec takes; Other the
	// reader a group spec copies.
	OffsetLabel, Other string
	// Topic, Before, After and Committed head the review's and the
	// receipt's columns.
	Topic, Before, After, Committed string
}

// groupResetForm is the dialog of a Kafka group.
func groupResetForm(d GroupData) ResetForm {
	f := ResetForm{
		API: d.ResetAPI, Title: "Reset offsets of", Name: d.Group.Name, Confirm: d.Group.Name,
		Help:     "A plan changes nothing: review it, then apply. Apply is refused while the group has members, and when its offsets moved since the plan.",
		AllScope: "all topics",
		Words: ResetWords{
			Earliest: "earliest (log start)", Latest: "latest (log end: skip the backlog)", Shift: "shift by N records",
			Offset: "an offset (one partition)", Group: "another group's offsets", OffsetLabel: "Offset", Other: "Group to copy",
			Topic: "topic", Before: "before", After: "after", Committed: "committed",
		},
	}
	for _, t := range d.Topics {
		f.Topics = append(f.Topics, t.Topic)
	}
	return f
}

// consumerResetForm is the dialog of a JetStream consumer.
func consumerResetForm(d NATSConsumerData) ResetForm {
	c := d.Consumer
	return ResetForm{
		API: d.ResetAPI, Title: "Reset consumer", Name: c.Stream + " / " + c.Name, Confirm: c.Name,
		Help: "A plan changes nothing: review it, then apply. Apply is refused while a subscriber is bound or pull requests wait " +
			"(pause the consumer first: a paused consumer may be reset), and when it delivered or was acknowledged since the plan.",
		Single: true, AllScope: "stream " + c.Stream, Topics: []string{c.Stream},
		Words: ResetWords{
			Earliest: "earliest (first message of the stream)", Latest: "latest (skip the backlog)", Shift: "shift by N sequences",
			Offset: "a stream sequence", Group: "another consumer's position", OffsetLabel: "Stream sequence", Other: "Consumer to copy",
			Topic: "stream", Before: "next seq. now", After: "next seq. after", Committed: "next seq. read back",
		},
	}
}
