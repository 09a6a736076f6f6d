package components

import (
	"strconv"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// SearchData is the search page (/search): the query, its bounds, what
// it found and how far it went in each DLQ.
type SearchData struct {
	Chrome
	Q, Mode string
	Modes   []string
	// Budget, PerDLQ and Limit are the bounds the search ran with.
	Budget    time.Duration
	PerDLQ    int
	Limit     int
	Took      time.Duration
	Ran       bool // a query was run (else the page only offers the form)
	OutOfTime bool
	Truncated bool
	// Notice says why nothing could be searched, or the query was refused.
	Notice string
	DLQs   []SearchDLQRow
	Hits   []SearchHitRow
}

// SearchDLQRow is one DLQ's line: how much was read and found.
type SearchDLQRow struct {
	ID               string
	Depth            int64
	Scanned, Matches int
	Complete         bool
	Note             string
}

// SearchHitRow is one message found, as the viewer may see it.
type SearchHitRow struct {
	DLQ     string
	ID      string
	PageURL string
	M       queue.Message
	Preview string
}

// Searched counts the DLQs that were read.
func (d SearchData) Searched() int {
	n := 0
	for _, r := range d.DLQs {
		if r.Scanned > 0 || (r.Complete && r.Note == "") {
			n++
		}
	}
	return n
}

// ScannedTotal counts the messages read in every DLQ.
func (d SearchData) ScannedTotal() int64 {
	var n int64
	for _, r := range d.DLQs {
		n += int64(r.Scanned)
	}
	return n
}

// Bounds says what bounded the search, for the answer's first line.
func (d SearchData) Bounds() string {
	return "budget " + queue.HumanDuration(d.Budget) + " · at most " + Exact(int64(d.PerDLQ)) + " " + Plural(d.PerDLQ, "message", "messages") + " read per DLQ · " + Exact(int64(d.Limit)) + " results at most"
}

// TookText is how long the search took: milliseconds under a second.
func (d SearchData) TookText() string {
	if d.Took < time.Second {
		return strconv.FormatInt(d.Took.Milliseconds(), 10) + " ms"
	}
	return strconv.FormatFloat(d.Took.Seconds(), 'f', 1, 64) + " s"
}
