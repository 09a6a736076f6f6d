package queue

import "time"

// DepthRead says when a queue's counts were read, for a source that reads
// them less often than it is polled: an SQS account is read every few
// minutes (AWS bills every request) and polls in between serve that read.
// After a DLQ job the queues it touched are read again at once, so their
// counts are newer than the account's read; AfterJob says so.
//
// The zero value is a source read at every poll, which needs no sentence.
type DepthRead struct {
	// At is when the counts were read.
	At time.Time
	// Every is how often the whole account is read.
	Every time.Duration
	// AfterJob is the job after which the counts were read again, between
	// two reads of the account; empty when they are the account's read.
	AfterJob string
}

// Sentence says where the counts come from, for the pages: "depth read 3m
// 12s ago (account read every 4m)", or after a job "depth re-read after job
// job-1 at 05:12:03 UTC, 40s ago (account read every 4m)". It is empty
// for the zero value.
func (r DepthRead) Sentence(now time.Time) string {
	if r.At.IsZero() {
		return ""
	}
	every := ""
	if r.Every > 0 {
		every = " (account read every " + HumanDuration(r.Every) + ")"
	}
	if r.AfterJob != "" {
		return "depth re-read after job " + r.AfterJob + " at " + r.At.UTC().Format("15:04:05") + " UTC, " + HumanAgo(r.At, now) + every
	}
	return "depth read " + HumanAgo(r.At, now) + every
}
