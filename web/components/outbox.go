package components

import (
	"strconv"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// OutboxCard is one outbox source on the overview and at the head of its
// page: its tables and replication slots, worst first.
type OutboxCard struct {
	Source string
	// Status is the worst of its tables' and slots' statuses (error when
	// the source itself is down).
	Status queue.Status
	// Down and LastError describe a source whose last poll failed; the
	// rows are then its last good data.
	Down      bool
	LastError string
	// LastPoll is when the source was last polled; zero before its first.
	LastPoll time.Time
	Tables   []OutboxTableRow
	Slots    []SlotRow
}

// OutboxTableRow is one outbox table with its effective status.
type OutboxTableRow struct {
	T      *queue.OutboxTable
	Status queue.Status
	Reason string
	Trend  Spark
}

// SlotRow is one replication slot with its effective status.
type SlotRow struct {
	S      *queue.ReplicationSlot
	Status queue.Status
	Reason string
	Trend  Spark
}

// OutboxData is what an outbox source's page shows.
type OutboxData struct {
	// Links are the DLQs this reader's messages die in and its
	// Grafana dashboard.
	Links  Links
	Chrome Chrome
	Card   OutboxCard
	// HistoryURL is the JSON endpoint the charts read.
	HistoryURL string
	Range      string
	LastPoll   string
}

// OutboxURL is the path of an outbox source's page; the name is one
// escaped segment, so any name makes a working, harmless link.
func OutboxURL(source string) string { return queue.OutboxPage(source) }

// Pending sums the pending rows of the card's tables.
func (c OutboxCard) Pending() int64 {
	var n int64
	for _, t := range c.Tables {
		n += t.T.Pending
	}
	return n
}

// OldestSeconds is the oldest pending row's age over the card's tables.
func (c OutboxCard) OldestSeconds() float64 {
	var s float64
	for _, t := range c.Tables {
		s = max(s, t.T.OldestPendingAge.Seconds())
	}
	return s
}

// Sentence says in one line how the source is: the worst row's reason, or
// that everything publishes.
func (c OutboxCard) Sentence() string {
	switch {
	case c.Down:
		return "the last poll failed: " + c.LastError
	case len(c.Tables) > 0 && c.Tables[0].Status.Severity() > 0:
		return c.Tables[0].T.Table + ": " + c.Tables[0].Reason
	case len(c.Slots) > 0 && c.Slots[0].Status.Severity() > 0:
		return "slot " + c.Slots[0].S.Slot + ": " + c.Slots[0].Reason
	case len(c.Tables) == 0 && len(c.Slots) == 0:
		return "no tables or replication slots read yet"
	}
	return "every table is publishing and every slot is keeping up"
}

func (c OutboxCard) class() string {
	switch {
	case c.Status.Severity() >= queue.StatusError.Severity():
		return "obox bad"
	case c.Status.Severity() > 0:
		return "obox warn"
	}
	return "obox good"
}

// Rate renders a publish rate: "12.4/s", "<0.1/s", or "—" before two polls.
func Rate(r float64, known bool) string {
	switch {
	case !known:
		return "—"
	case r <= 0:
		return "0/s"
	case r < 0.1:
		return "<0.1/s"
	case r < 100:
		return trim(strconv.FormatFloat(r, 'f', 1, 64)) + "/s"
	}
	return Count(int64(r+0.5)) + "/s"
}

// RateTitle is the hover text of Rate.
func RateTitle(r float64, known bool) string {
	if !known {
		return "known after two polls"
	}
	return strconv.FormatFloat(r, 'f', 3, 64) + " rows published per second between the last two polls, counting rows pending at the earlier one only (a lower bound)"
}

// SlotLag is a slot's lag for a table cell: — when it is unknown, which
// is not 0.
func SlotLag(s *queue.ReplicationSlot) string {
	if s.LagUnknown != "" {
		return "—"
	}
	return queue.HumanBytes(s.LagBytes)
}

// SlotLagTitle is the hover text of SlotLag: the exact bytes, or why the
// lag is unknown.
func SlotLagTitle(s *queue.ReplicationSlot) string {
	if s.LagUnknown != "" {
		return "lag unknown: " + s.LagUnknown
	}
	return Exact(s.LagBytes) + " bytes of WAL behind"
}

func activeWord(a bool) string {
	if a {
		return "active"
	}
	return "inactive"
}
