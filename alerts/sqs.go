package alerts

import (
	"strings"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// SQS queues are judged by their consumers from two reads of their
// account, minutes apart (AWS bills every request), not over the window:
// polls between two reads serve the last read as it is, and judge it the
// same way again. The rule is SQSStatus: stop ("no consumer") for a
// visible backlog that grew with nothing in flight at either read, stall
// at SQS's in-flight limit, ok otherwise, and ok for a DLQ. A queue read
// again after a DLQ job is judged by sqsRereadStatus from the status it
// had. Statuses are not held by hysteresis: two reads minutes apart are
// already what hysteresis waits for, and the alerts wait for a second
// read.

// sqsReads are what the next reads of one SQS source are judged against.
type sqsReads struct {
	// last and prev are the times of the last two account reads seen.
	last, prev time.Time
	// read and before are the queues of those two reads that were read
	// whole: a queue of the account's next read is judged against before,
	// the read before the one that gave its counts.
	read, before map[string]*queue.SQSQueue
	// judged is each queue's status at the last evaluation, which a
	// re-read after a job starts from.
	judged map[string]queue.Status
}

// evaluateSQS judges latest's SQS queues, tracks their onsets and says
// since when in their sentences. A "no consumer" began by the read before
// the one that found it: nothing was in flight at either. The durations
// are as of the read, like its counts.
func (e *Evaluator) evaluateSQS(latest *queue.Snapshot) {
	if latest.SQS == nil {
		return
	}
	r := e.sqsOf(keyOf(latest))
	r.judge(latest)
	if e.on == nil {
		return
	}
	for i := range latest.SQSQueues {
		q := &latest.SQSQueues[i]
		e.sqsHeadroom(q)
		st := q.EffectiveStatus()
		start := latest.Time
		if st == queue.StatusStop && !r.prev.IsZero() {
			start = r.prev
		}
		q.StatusSince = e.since(sqsOnset(q.Name), st, start)
		q.StatusReason = sqsReason(q.StatusReason, st, q.StatusSince, latest.Time)
	}
}

// sqsOf returns the reads kept of key's SQS source. Called with e.mu held.
func (e *Evaluator) sqsOf(key sourceKey) *sqsReads {
	if e.sqs == nil {
		e.sqs = make(map[sourceKey]*sqsReads)
	}
	r := e.sqs[key]
	if r == nil {
		r = &sqsReads{}
		e.sqs[key] = r
	}
	return r
}

// judge fills the status of every queue of s, an account read, a poll
// serving it, or a re-read after a job, and keeps what the next ones are
// judged against.
func (r *sqsReads) judge(s *queue.Snapshot) {
	if at := s.SQS.ReadAt; at.After(r.last) {
		r.prev, r.last = r.last, at
		r.before, r.read = r.read, accountRead(s)
	}
	judged := make(map[string]queue.Status, len(s.SQSQueues))
	for i := range s.SQSQueues {
		q := &s.SQSQueues[i]
		if q.Read.AfterJob != "" {
			q.Status, q.StatusReason = sqsRereadStatus(r.judged[q.Name], q)
		} else {
			q.Status, q.StatusReason = SQSStatus(r.before[q.Name], q)
		}
		judged[q.Name] = q.Status
	}
	r.judged = judged
}

// accountRead is the queues of s the account's read read whole: not those
// a job's re-read gave, so that a job's target nobody consumes from is
// still found by the next read.
func accountRead(s *queue.Snapshot) map[string]*queue.SQSQueue {
	out := make(map[string]*queue.SQSQueue, len(s.SQSQueues))
	for i := range s.SQSQueues {
		q := &s.SQSQueues[i]
		if q.ARN != "" && q.Read.AfterJob == "" {
			out[q.Name] = &queue.SQSQueue{Name: q.Name, Visible: q.Visible, InFlight: q.InFlight}
		}
	}
	return out
}

// sqsRereadStatus judges a queue re-read after a job (see
// queue.DepthRead) from the status it had before, read, and the counts
// read now, cur. A job's own sends are no sign of a missing consumer, so
// a backlog that grew since the read is not judged stop for that; the
// next account read compares its counts with the read before the job
// again. What the read found stays true while the counts still show it:
//
//   - stall: cur's in-flight count is at queue.SQSInFlightLimit;
//   - stop: the read found no consumer, and cur still has visible messages
//     and none in flight (read stop, 10 visible and 0 in flight now:
//     still stop);
//
// and ok otherwise, with the counts as the reason.
func sqsRereadStatus(read queue.Status, cur *queue.SQSQueue) (queue.Status, string) {
	if !cur.DLQ && cur.InFlight < queue.SQSInFlightLimit && read == queue.StatusStop && cur.Visible > 0 && cur.InFlight == 0 {
		return queue.StatusStop, "no consumer: " + queue.ExactCount(cur.Visible) + " visible and none in flight, as at the last account read"
	}
	return SQSStatus(nil, cur)
}

// sqsReason is an SQS queue's sentence, queue.SQSStatus's, with how long
// its condition lasted (since its onset), which one read cannot tell.
func sqsReason(reason string, st queue.Status, since, now time.Time) string {
	if since.IsZero() || !since.Before(now) {
		return reason
	}
	d := queue.HumanSince(since, now)
	switch st {
	case queue.StatusStop:
		return strings.Replace(reason, "no consumer: ", "no consumer "+d+": ", 1)
	case queue.StatusStall:
		return strings.Replace(reason, ": receives fail", " "+d+": receives fail", 1)
	}
	return reason
}

// SQSStatus judges a queue's consumers from two reads: prev (nil before
// the second read) and cur. SQS says nothing of consumers but the in-flight
// count, so only two cases are certain, from the most severe:
//
//   - stop, "no consumer": the visible backlog grew since the last read
//     and nothing was in flight at either read (with 10 visible now, 4
//     before and 0 in flight: nobody receives);
//   - stall: the in-flight count is at queue.SQSInFlightLimit, so no consumer can
//     receive more until some are deleted;
//
// and ok otherwise, with the counts as the reason. A DLQ is ok with
// queue.DLQReason: nothing receiving from it is normal.
//
// The Evaluator calls it for every SQS queue; it is exported for tests
// elsewhere that build a judged snapshot (web's).
func SQSStatus(prev, cur *queue.SQSQueue) (queue.Status, string) {
	switch {
	case cur.DLQ:
		return queue.StatusOK, queue.DLQReason
	case cur.InFlight >= queue.SQSInFlightLimit:
		return queue.StatusStall, "in flight at the SQS limit of " + queue.ExactCount(queue.SQSInFlightLimit) + ": receives fail until some are deleted"
	case prev != nil && cur.Visible > prev.Visible && cur.InFlight == 0 && prev.InFlight == 0:
		return queue.StatusStop, "no consumer: " + queue.ExactCount(cur.Visible) + " visible, up from " + queue.ExactCount(prev.Visible) + " at the last read, and none in flight"
	}
	return queue.StatusOK, queue.ExactCount(cur.Visible) + " visible, " + queue.ExactCount(cur.InFlight) + " in flight"
}
