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
	// Page is the reader's page; Note names its kind where it is not a
	// Kafka consumer group ("share group · kafka:", "nats:").
	Page, Note string
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
	// Help is the form's first line; Note, when set, what a reset means
	// for this kind of reader.
	Help, Note string
	// Single hides the scope: the reader reads one log (a JetStream
	// consumer its stream).
	Single bool
	// AllScope names the whole scope; Topics are the topics to choose.
	AllScope string
	Topics   []string
	Words    ResetWords
}

// ResetWords are a broker's names for the spec kinds; a kind without a
// name is not offered.
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
	f := kafkaResetForm(d.ResetAPI, d.Group.Name)
	f.Title = "Reset offsets of"
	f.Help = "A plan changes nothing: review it, then apply. Apply is refused while the group has members, and when its offsets moved since the plan."
	for _, t := range d.Topics {
		f.Topics = append(f.Topics, t.Topic)
	}
	return f
}

// kafkaResetForm is what every Kafka group's dialog says.
func kafkaResetForm(api, group string) ResetForm {
	return ResetForm{
		API: api, Name: group, Confirm: group, AllScope: "all topics",
		Words: ResetWords{
			Earliest: "earliest (log start)", Latest: "latest (log end: skip the backlog)", Shift: "shift by N records",
			Offset: "an offset (one partition)", Group: "another group's offsets", OffsetLabel: "Offset", Other: "Group to copy",
			Topic: "topic", Before: "before", After: "after", Committed: "committed",
		},
	}
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

// ShareResetNote is what a share group's reset means, shown in its form.
const ShareResetNote = "A share group's reset moves its start offset: records before it count as done with. " +
	"The broker also forgets what is in flight, so records acknowledged past the old start offset are delivered again when the new one is below it."

// shareResetForm is the dialog of a Kafka share group: it has start
// offsets, so only the specs kafka-share-groups offers (no shift, no copy
// of another group).
func shareResetForm(d ShareGroupData) ResetForm {
	f := kafkaResetForm(d.ResetAPI, d.Group.Name)
	f.Title = "Reset start offsets of share group"
	f.Help = "A plan changes nothing: review it, then apply. Apply is refused while the group has members, and when its start offsets moved since the plan."
	f.Note = ShareResetNote
	f.Words.Shift, f.Words.Group = "", ""
	for _, p := range d.Group.Partitions {
		if n := len(f.Topics); n == 0 || f.Topics[n-1] != p.Topic {
			f.Topics = append(f.Topics, p.Topic)
		}
	}
	return f
}
