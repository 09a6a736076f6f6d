package alerts

import (
	"fmt"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// EvaluateOutbox fills Status and StatusReason of every outbox table and
// replication slot in latest from history (earlier snapshots of the same
// source, oldest first), with the window rules of consumer groups: trends
// are judged over a full window only.
//
// A table is
//   - error when it could not be read;
//   - stall when it had pending rows at every poll of the window and no row
//     was published between any two of them (the worker is stuck);
//   - warn when its backlog grew across the window: it never touched zero
//     nor fell below where the window began, and ended higher by more than
//     a tenth of the rows inserted meanwhile (rows arrive faster than they
//     are published; see backlogRising);
//   - ok otherwise, including whenever nothing is pending.
//
// A slot is error when it could not be read, stop when no client streams
// from it (WAL piles up on the server), warn when its lag in bytes grew
// across the window (it never fell below where the window began and stood
// more than a WAL segment above it through the window's later half; see
// slotLagRising), and ok otherwise; a slot whose lag is unknown says why
// in its reason, and its polls are no part of a trend.
//
// For example, with a window of 3, pending 40, 40, 40 and a publish rate of
// 0 at the last two polls make the table stall: "40 rows pending and none
// published for 2m; the oldest is 5m old".
func EvaluateOutbox(history []*queue.Snapshot, latest *queue.Snapshot, opts StatusOptions) {
	if latest == nil {
		return
	}
	window := opts.window()
	evaluateOutbox(outboxWindow(history, latest, window), latest, window, windowSettle)
}

// settleFunc returns the status to show of reader, judged raw at this poll
// with its condition begun at start, its onset and its sentence, which
// reason writes given the onset (Evaluator.settle).
type settleFunc func(reader string, raw queue.Status, start, now time.Time, reason func(since time.Time) string) (queue.Status, time.Time, string)

// windowSettle is settle without an Evaluator: the status as judged, its
// onset where the window shows the condition began.
func windowSettle(_ string, raw queue.Status, start, _ time.Time, reason func(since time.Time) string) (queue.Status, time.Time, string) {
	if raw == queue.StatusOK {
		return raw, time.Time{}, reason(time.Time{})
	}
	return raw, start, reason(start)
}

// evaluateOutbox is EvaluateOutbox over past, the window already chosen,
// the shown statuses and onsets from settle.
func evaluateOutbox(past []*queue.Snapshot, latest *queue.Snapshot, window int, settle settleFunc) {
	for i := range latest.OutboxTables {
		t := &latest.OutboxTables[i]
		start := evaluateTable(past, latest, t, window)
		raw, reason := t.Status, t.StatusReason
		t.Status, t.StatusSince, t.StatusReason = settle(tableOnset(t.Table), raw, start, latest.Time, func(since time.Time) string {
			if raw == queue.StatusStall {
				return stallReason(t, since, start, latest.Time)
			}
			return reason
		})
	}
	for i := range latest.Slots {
		sl := &latest.Slots[i]
		start := evaluateSlot(past, latest, sl, window)
		reason := sl.StatusReason
		sl.Status, sl.StatusSince, sl.StatusReason = settle(slotOnset(sl.Slot), sl.Status, start, latest.Time,
			func(time.Time) string { return reason })
	}
}

// stallReason is a stalled table's sentence, its condition having begun at
// since (start within the window when since is not known).
func stallReason(t *queue.OutboxTable, since, start, now time.Time) string {
	lasted := "for " + queue.HumanDuration(now.Sub(start))
	if !since.IsZero() {
		lasted = queue.HumanSince(since, now)
	}
	return fmt.Sprintf("%s pending and none published %s; the oldest is %s old",
		rows(t.Pending), lasted, queue.HumanDuration(t.OldestPendingAge))
}

// outboxWindow returns the last window-1 usable snapshots of latest's
// source, oldest first.
func outboxWindow(history []*queue.Snapshot, latest *queue.Snapshot, window int) []*queue.Snapshot {
	var past []*queue.Snapshot
	for i := len(history) - 1; i >= 0 && len(past) < window-1; i-- {
		s := history[i]
		if s == nil || s == latest || s.Err != nil || s.Cluster != latest.Cluster || !s.Time.Before(latest.Time) {
			continue
		}
		past = append([]*queue.Snapshot{s}, past...)
	}
	return past
}

type tableObs struct {
	at time.Time
	t  *queue.OutboxTable
}

// evaluateTable sets t's status and reason, and returns when its condition
// began as far as the window shows.
func evaluateTable(past []*queue.Snapshot, latest *queue.Snapshot, t *queue.OutboxTable, window int) time.Time {
	if t.Err != "" {
		t.Status, t.StatusReason = queue.StatusError, t.Err
		return latest.Time
	}
	var obs []tableObs
	for _, s := range past {
		for i := range s.OutboxTables {
			if p := &s.OutboxTables[i]; p.Table == t.Table && p.Err == "" {
				obs = append(obs, tableObs{s.Time, p})
			}
		}
	}
	obs = append(obs, tableObs{latest.Time, t})
	t.Status, t.StatusReason = queue.StatusOK, tableSummary(t)
	if t.Pending == 0 || len(obs) < window {
		return latest.Time
	}
	first := obs[0]
	span := latest.Time.Sub(first.at)
	stalled := true
	for i, o := range obs {
		if o.t.Pending == 0 {
			stalled = false
		}
		if i > 0 && (!o.t.HasPublishRate || o.t.PublishRate > 0) {
			stalled = false
		}
	}
	switch {
	case stalled:
		// The sentence, which says since when, is stallReason's.
		t.Status = queue.StatusStall
	case backlogRising(obs):
		t.Status = queue.StatusWarn
		t.StatusReason = fmt.Sprintf("backlog growing from %s to %s rows over %s while %s rows/s are published",
			queue.ExactCount(first.t.Pending), queue.ExactCount(t.Pending), queue.HumanDuration(span), rate(t.PublishRate))
	}
	return first.at
}

// backlogRising reports whether a table's backlog grew across the window,
// by the rule consumer groups' lag follows: it touched zero at no poll
// before the last, never dipped below where the window started, and ended
// higher by more than a tenth of the rows inserted meanwhile. Inserted is
// the growth plus the rows published, the publish rate times the time
// between polls, summed (a step without a rate counts none); like the
// rate, it is a lower bound, so the margin errs toward warning. The margin
// keeps a busy table's jitter, a few rows up while thousands are
// published, from reading as a publisher falling behind.
//
// For example, pending 10, 20, 30 a minute apart at 0.5 rows/s published
// grew by 20 while 80 rows were inserted: 200 > 80, so it is rising;
// pending 100, 104, 103 at 50 rows/s grew by 3 of 6,003: it is not.
func backlogRising(obs []tableObs) bool {
	first, last := obs[0], obs[len(obs)-1]
	growth := last.t.Pending - first.t.Pending
	if growth <= 0 {
		return false
	}
	var published float64
	for i, o := range obs {
		if o.t.Pending < first.t.Pending || o.t.Pending == 0 && i < len(obs)-1 {
			return false
		}
		if i > 0 && o.t.HasPublishRate {
			published += o.t.PublishRate * o.at.Sub(obs[i-1].at).Seconds()
		}
	}
	return float64(growth)*10 > float64(growth)+published
}

// tableSummary is a healthy table's sentence.
func tableSummary(t *queue.OutboxTable) string {
	if t.Pending == 0 {
		return "no rows pending"
	}
	s := fmt.Sprintf("%s pending, the oldest %s old", rows(t.Pending), queue.HumanDuration(t.OldestPendingAge))
	if t.HasPublishRate {
		s += ", " + rate(t.PublishRate) + " rows/s published"
	}
	return s
}

func rate(r float64) string { return fmt.Sprintf("%.1f", r) }

// rows counts rows for a sentence: "1 row", "1,200 rows".
func rows(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return queue.ExactCount(n) + " rows"
}

// evaluateSlot sets sl's status and reason, and returns when its condition
// began as far as the window shows.
func evaluateSlot(past []*queue.Snapshot, latest *queue.Snapshot, sl *queue.ReplicationSlot, window int) time.Time {
	switch {
	case sl.Err != "":
		sl.Status, sl.StatusReason = queue.StatusError, sl.Err
		return latest.Time
	case !sl.Active && sl.LagUnknown != "":
		sl.Status, sl.StatusReason = queue.StatusStop, "no client is streaming from the slot; its lag is unknown: "+sl.LagUnknown
		return latest.Time
	case !sl.Active:
		sl.Status = queue.StatusStop
		sl.StatusReason = "no client is streaming from the slot; the server retains " + HumanBytes(sl.LagBytes) + " of WAL for it"
		return latest.Time
	case sl.LagUnknown != "":
		sl.Status, sl.StatusReason = queue.StatusOK, "active, lag is unknown: "+sl.LagUnknown
		return latest.Time
	}
	sl.Status, sl.StatusReason = queue.StatusOK, "active, "+HumanBytes(sl.LagBytes)+" behind"
	var lags []int64
	var since time.Time
	for _, s := range past {
		for i := range s.Slots {
			// A poll that could not tell the lag is no step of a trend.
			if p := &s.Slots[i]; p.Slot == sl.Slot && p.Err == "" && p.LagUnknown == "" {
				if since.IsZero() {
					since = s.Time
				}
				lags = append(lags, p.LagBytes)
			}
		}
	}
	lags = append(lags, sl.LagBytes)
	if len(lags) < window || !slotLagRising(lags) {
		return latest.Time
	}
	sl.Status = queue.StatusWarn
	sl.StatusReason = fmt.Sprintf("lag growing from %s to %s over %s", HumanBytes(lags[0]), HumanBytes(sl.LagBytes), queue.HumanDuration(latest.Time.Sub(since)))
	return since
}

// walSegment is PostgreSQL's default WAL segment size (wal_segment_size).
const walSegment = 16 << 20

// slotLagRising reports whether a slot's lag grew across the window, by
// the rule outbox tables and consumer groups follow, with the slot's own
// notion of jitter: its lag never dipped below where the window started,
// and at every poll of the window's later half it stood more than one WAL
// segment (16 MiB) above that start. A slot's lag is a sawtooth even when
// its client keeps up: it climbs with the WAL written between two of the
// client's confirms (Debezium confirms on its offset flush interval) and
// falls back at each. Only a client that falls behind raises the troughs
// too, so a later trough as low as the start means the client caught up,
// as a table that touched zero did. The margin is a segment because
// PostgreSQL retains and recycles WAL in whole segments: less growth keeps
// no extra file on disk, and a quiet database's creep (a few hundred bytes
// a minute of checkpoint and running-transaction records until the client
// next confirms) and a busy one's jitter stay below it. A slot whose lag
// is high but steady is the lag threshold's alert, not this one.
//
// For example, a window of lags 10, 40, 70 MiB is rising; 5, 20, 35, 50,
// 5, 20 MiB (a confirm every fourth poll) and 10, 200, 12 MiB (growth then
// drain) are not.
func slotLagRising(lags []int64) bool {
	start := lags[0]
	for i, l := range lags {
		if l < start || i >= len(lags)/2 && l-start <= walSegment {
			return false
		}
	}
	return true
}

// HumanBytes is queue.HumanBytes, kept for the rule generator's callers.
func HumanBytes(n int64) string { return queue.HumanBytes(n) }
