package components

import "github.com/queuewatch/queuewatch/queue"

// Overview tabs.
const (
	TabGroups = "groups"
	TabQueues = "queues"
	TabDLQs   = "dlqs"
)

// OverviewData is what the overview page shows. Rows hold only the page
// being shown; counts are over everything.
type OverviewData struct {
	Chrome        Chrome
	Summary       Summary
	Attention     []Attention
	AttentionMore int
	// Tabs are the overview's lists in their order on the page.
	Tabs   []OverviewTab
	Counts Counts
	Table  Table
	Groups []GroupRow
	Queues []QueueRow
	DLQs   []DLQRow
	// Outboxes are the outbox sources' cards, worst first.
	Outboxes  []OutboxCard
	Consumers []ConsumerRow
	SQS       []SQSRow
	PubSub    []PubSubRow
	Shares    []ShareRow
	Streams   []StreamsRow
	// Connectors are Kafka Connect connectors.
	Connectors []ConnectRow
	// Kinesis are KCL applications.
	Kinesis []KinesisRow
}

// Counts are the unfiltered sizes of the overview's lists, by tab.
type Counts map[string]int

// Of is the size of the list a tab shows.
func (c Counts) Of(tab string) int { return c[tab] }

// OverviewTab is one list of the overview: its key in the URL (?tab=), its
// label and its filter box's hint. An optional tab shows only when its list
// has rows, so a deployment without that kind of reader does not see it.
type OverviewTab struct {
	Key, Label, Placeholder string
	Optional                bool
}

// DLQTab is the overview's list of DLQs, after the reader kinds' tabs
// (web/view's Kinds declare theirs).
var DLQTab = OverviewTab{Key: TabDLQs, Label: "DLQs", Placeholder: "filter DLQs: name, cluster, source"}

// tab is the tab being shown.
func (d OverviewData) tab() OverviewTab {
	for _, t := range d.Tabs {
		if t.Key == d.Table.Tab {
			return t
		}
	}
	return OverviewTab{}
}

// Summary is the row of cards at the top of the overview.
type Summary struct {
	Groups, Lagging, Stopped int
	LagTrend                 Spark

	// The worst lag is that of the reader, of any broker, whose lag age
	// is the oldest; WorstURL is its page, "" when it has none.
	WorstLagSeconds float64
	WorstReader     string
	WorstURL        string
	WorstTrend      Spark

	DeadLetters        int64
	DLQs, NonEmptyDLQs int
	DLQTrend           Spark

	Sources, SourcesUp int

	// OutboxStopped counts outbox tables and slots at stall's severity
	// and above: events are not leaving the database.
	OutboxStopped int
}

// Attention is one line of "Needs attention": something that needs a
// person, already phrased.
type Attention struct {
	// Class picks colour and shape: stop, stall, warn, rewind, error, dlq, down.
	Class, Glyph, Word  string
	Name, Where         string
	Metric, MetricExact string
	Age, AgeTitle       string
	Reason              string
	Href, Action        string
}

// GroupRow is one consumer group in the overview table.
type GroupRow struct {
	G      *queue.ConsumerGroup
	Status queue.Status
	Lag    int64
	LagSec float64
	Trend  Spark
}

// QueueRow is one RabbitMQ queue in the overview table.
type QueueRow struct {
	Q *queue.Queue
	// DLQURL is the page of the DLQ this queue is, "" when it is none
	// (queue.Snapshot.JudgedAsReader).
	DLQURL string
}

// NoConsumers reports whether r's queue has ready messages and no
// consumer while it is judged as a reader: not when it is a DLQ, as the
// RabbitMQ no-consumer alert leaves DLQs out.
func (r QueueRow) NoConsumers() bool { return r.Q.NoConsumers(r.DLQURL == "") }

// dlqNoConsumerTitle is the hover text of a DLQ's 0 consumers.
const dlqNoConsumerTitle = "no consumer: " + queue.DLQReason

// DLQRow is one DLQ in the overview table.
type DLQRow struct {
	D     *queue.DLQ
	Trend Spark
}

// Blind reports whether a source could not be read: what it holds is
// unknown, so no card may say all is well and there is no all-clear.
func (s Summary) Blind() bool { return s.SourcesUp < s.Sources }

// good is the class of a card with nothing wrong in what was read: green
// only when every source was read, grey (unknown) otherwise.
func (s Summary) good() string {
	if s.Blind() {
		return "card unknown"
	}
	return "card good"
}

func (s Summary) lagClass() string {
	switch {
	case s.Stopped > 0:
		return "card bad"
	case s.Lagging > 0:
		return "card warn"
	}
	return s.good()
}

func (s Summary) dlqClass() string {
	if s.DeadLetters > 0 {
		return "card bad"
	}
	return s.good()
}

func (s Summary) sourceClass() string {
	if s.SourcesUp < s.Sources {
		return "card bad"
	}
	return "card good"
}
