package alerts

import (
	"strconv"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// Hysteresis. A window's judgement can flip at one poll and back at the
// next (a burst lands between two commits: ok, warn, stall, ok), and a
// status that flips every few polls tells on-call nothing and reorders
// every list. So a reader's shown status, the one the UI, the API and the
// status series carry, moves to a new value only once the window judged
// that value at N polls in a row (alerts.hysteresis_polls); until then it
// keeps the status it had, and its sentence says what the last poll found.
//
// Both ways alike: an escalation (ok to stall) and a recovery (stall to ok)
// wait N polls, so a condition of L polls is shown for L polls, N-1 polls
// late, and the status series holds it as long as it held. The rules' status
// alerts wait N polls of the series ("for:"), so they fire for what was
// shown N polls, not for every excursion that reached the page.
//
// An error is shown at once, and so is the first status after one: an
// error says the reader could not be read, and a status held from before
// would be an all-clear (or an alarm) for data never read. A reader seen
// for the first time, or again after a restart, shows its status at once.

// hold is what hysteresis keeps of one reader between polls.
type hold struct {
	shown queue.Status
	// next is the status the last polls judged instead of shown, count
	// how many in a row, and start when its condition began as far as the
	// first of them showed.
	next  queue.Status
	count int
	start time.Time
}

// sourceHolds are the holds of one source's readers.
type sourceHolds struct {
	// cur is after the last evaluation; before is after the one before it,
	// which a completing poll (Evaluator.Complete) starts from again, since
	// it takes the last poll's place.
	cur, before map[string]hold
	base, next  map[string]hold
}

// holdsOf returns the holds of key's source, begun for an evaluation.
// Called with e.mu held.
func (e *Evaluator) holdsOf(key sourceKey, completes bool) *sourceHolds {
	if e.held == nil {
		e.held = make(map[sourceKey]*sourceHolds)
	}
	h := e.held[key]
	if h == nil {
		h = &sourceHolds{}
		e.held[key] = h
	}
	h.begin(completes)
	return h
}

// begin starts an evaluation of the source.
func (h *sourceHolds) begin(completes bool) {
	if !completes {
		h.before = h.cur
	}
	h.base, h.next = h.before, make(map[string]hold, len(h.cur))
}

// finish ends an evaluation: readers not seen are forgotten.
func (h *sourceHolds) finish() { h.cur, h.base, h.next = h.next, nil, nil }

// step records that the window judged reader raw at this poll, its
// condition having begun at start, and returns the status to show, when
// that status's condition began (zero when it is the shown one kept), and
// whether the shown status differs from raw.
func (h *sourceHolds) step(reader string, raw queue.Status, start time.Time, polls int) (queue.Status, time.Time, bool) {
	if raw == "" {
		raw = queue.StatusOK
	}
	old, seen := h.base[reader]
	if !seen || polls <= 1 || raw == old.shown || raw == queue.StatusError || old.shown == queue.StatusError {
		h.next[reader] = hold{shown: raw}
		return raw, start, false
	}
	cur := old
	if cur.next == raw {
		cur.count++
		cur.start = minTime(cur.start, start)
	} else {
		cur.next, cur.count, cur.start = raw, 1, start
	}
	if cur.count >= polls {
		h.next[reader] = hold{shown: raw}
		return raw, cur.start, false
	}
	h.next[reader] = cur
	return old.shown, time.Time{}, true
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// settle applies hysteresis to reader, judged raw by the window at this
// poll with its condition begun at start, and returns the status to show,
// its onset and its sentence; reason writes the raw judgement's sentence
// given its onset (zero when not known: the sentence then says what the
// window shows). Without onsets (a failed poll), raw is shown as it is.
func (e *Evaluator) settle(reader string, raw queue.Status, start, now time.Time, reason func(since time.Time) string) (queue.Status, time.Time, string) {
	if e.on == nil || e.holds == nil {
		return raw, time.Time{}, reason(time.Time{})
	}
	shown, begun, held := e.holds.step(reader, raw, start, e.hysteresis)
	if !held {
		since := e.on.see(reader, shown, begun)
		return shown, since, reason(since)
	}
	// The shown condition goes on: see keeps its onset (now only when none
	// is known, after a restart).
	since := e.on.see(reader, shown, now)
	e.on.await(reader, raw)
	return shown, since, heldReason(shown, since, now, raw, reason(time.Time{}), e.hysteresis)
}

// heldReason is the sentence of a reader shown in status shown, held since
// since, while the last poll judged it raw for rawReason: "stall since
// 05:09 UTC (1h 14m); the last poll found ok (…), shown once 2 polls in a
// row find it".
func heldReason(shown queue.Status, since, now time.Time, raw queue.Status, rawReason string, polls int) string {
	found := "the last poll found " + string(raw)
	if rawReason != "" {
		found += " (" + rawReason + ")"
	}
	found += ", shown once " + strconv.Itoa(polls) + " polls in a row find it"
	if shown == queue.StatusOK {
		return found
	}
	head := string(shown)
	if !since.IsZero() && since.Before(now) {
		head += " " + queue.HumanSince(since, now)
	}
	return head + "; " + found
}
