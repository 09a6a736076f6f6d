package components

import (
	"strings"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// TabKinesis is the overview tab of Kinesis KCL applications.
const TabKinesis = "kinesis"

// KinesisRow is one KCL application in the overview table.
type KinesisRow struct {
	A      *queue.KinesisApplication
	Status queue.Status
	Trend  Spark
}

// KinesisAppData is what a KCL application's page shows.
type KinesisAppData struct {
	Links  Links
	Chrome Chrome
	App    *queue.KinesisApplication
	Status queue.Status
	// Stream is the application's stream as the same read described it;
	// nil when the streams filter leaves it out or it could not be read.
	Stream *queue.KinesisStream
	// ReadAt is when the account was read (polls in between serve it).
	ReadAt time.Time
	// HistoryURL is the JSON endpoint the chart reads; Range its initial
	// time range.
	HistoryURL string
	Range      string
}

// KinesisAppURL is the path of a KCL application's page.
func KinesisAppURL(a *queue.KinesisApplication) string {
	return queue.KinesisApplicationPage(a.Cluster, a.Name)
}

// kinesisLag writes an application's largest lag: "12s on shardId-…1",
// "—" when no checkpoint was read.
func kinesisLag(a *queue.KinesisApplication) string {
	lag, _, ok := a.Lag()
	if !ok {
		return "—"
	}
	return queue.HumanDuration(lag)
}

// kinesisLagTitle is the hover text of an application's lag.
func kinesisLagTitle(a *queue.KinesisApplication) string {
	lag, shard, ok := a.Lag()
	if !ok {
		return "no checkpoint was read"
	}
	return Exact(lag.Milliseconds()) + " ms behind the newest record (MillisBehindLatest) at the checkpoint of " + shard
}

// leaseLag writes how far a lease's checkpoint is behind its shard's
// newest record, or why that is not known.
func leaseLag(l queue.KinesisLease) string {
	switch {
	case l.LagErr != "":
		return "?"
	case l.Finished():
		return "done"
	case !l.HasLag:
		return "—"
	}
	return queue.HumanDuration(l.Behind)
}

// leaseArrival writes when the checkpointed record arrived, as an age.
func leaseArrival(l queue.KinesisLease, now time.Time) string {
	if l.Arrival.IsZero() {
		return "—"
	}
	return queue.HumanAgo(l.Arrival, now)
}

// shardState is a lease's shard: open, or closed by a reshard.
func shardState(l queue.KinesisLease) string {
	if l.Open {
		return "open"
	}
	return "closed"
}

// commaList joins names with ", ".
func commaList(names []string) string { return strings.Join(names, ", ") }

// shortCheckpoint shortens a sequence number (56 digits) to its last 12
// for the table; a sentinel stays whole. The whole one is on hover.
func shortCheckpoint(c string) string {
	if len(c) <= 16 {
		return c
	}
	return "…" + c[len(c)-12:]
}
