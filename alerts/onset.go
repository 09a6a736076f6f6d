package alerts

import (
	"context"
	"log/slog"
	"maps"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// Onsets. The window judges a condition, but cannot say how long it has
// lasted beyond its own length: a group memberless for an hour would read
// "no members for 2m" next to a lag of 1h. So the Evaluator remembers, per
// reader, when its current non-ok condition (its status) began:
//
//   - a reader whose status is the same as at the last evaluation keeps its
//     onset;
//   - a reader whose status newly is not ok gets the start of the condition
//     found inside the window (the first memberless poll of the trailing
//     run, the window's first poll for a stall), or the latest poll's time;
//   - a reader that is ok again, or gone, is forgotten.
//
// With an OnsetStore (Persist) onsets outlive the process and are shared by
// the replicas of a shard: each source's onsets are read at its first
// evaluation, and an onset read is taken up by a reader found in the same
// condition. Conditions judged only over a full window (stall, warn) are not
// visible before the window fills again after a restart, so an onset read
// stays kept, though not shown, until the first evaluation over a full
// window; one whose reader is not found in its condition then is dropped.
// The store holds one row per reader that is not ok, written only when an
// onset begins, changes or ends: not at every poll.

// OnsetStore keeps onsets where a restart or another replica finds them
// (the audit store). Sources are named by broker and cluster.
type OnsetStore interface {
	// Onsets returns the onsets kept for a source.
	Onsets(ctx context.Context, broker, cluster string) ([]queue.Onset, error)
	// SaveOnsets keeps put, each replacing its reader's onset, and forgets
	// the onsets of the readers named in del.
	SaveOnsets(ctx context.Context, broker, cluster string, put []queue.Onset, del []string) error
}

// onsetTimeout bounds a store call: evaluation runs on the poller's
// goroutine, and a slow store must not hold the poll up for long.
const onsetTimeout = 5 * time.Second

// Persist makes e keep its onsets in store, logging failures to log (a
// store that fails costs durations their history, never a poll). It may be
// called once polling runs: each source's onsets are read at its next
// evaluation, and the earlier one of the same condition wins.
func (e *Evaluator) Persist(store OnsetStore, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.store, e.log = store, log
	for _, o := range e.onsets {
		o.loaded = false
	}
}

// sourceOnsets are the onsets of one source's readers.
type sourceOnsets struct {
	// current are the onsets of the readers not ok at the last evaluation.
	current map[string]queue.Onset
	// next is current being built by the evaluation under way.
	next map[string]queue.Onset
	// pending are onsets read from the store that no evaluation over a full
	// window took up or dropped yet.
	pending map[string]queue.Onset
	// stored is what the store holds, as far as this Evaluator knows.
	stored map[string]queue.Onset
	loaded bool
	// awaited are readers whose kept onset the window judges again at this
	// evaluation, but hysteresis does not show yet: it stays pending.
	awaited map[string]bool
}

// onsetsOf returns the onsets of latest's source, read from the store
// first if they were not yet. Called with e.mu held.
func (e *Evaluator) onsetsOf(key sourceKey) *sourceOnsets {
	if e.onsets == nil {
		e.onsets = make(map[sourceKey]*sourceOnsets)
	}
	o := e.onsets[key]
	if o == nil {
		o = &sourceOnsets{current: map[string]queue.Onset{}, pending: map[string]queue.Onset{}, stored: map[string]queue.Onset{}}
		e.onsets[key] = o
	}
	o.next = make(map[string]queue.Onset, len(o.current))
	if e.store == nil || o.loaded {
		return o
	}
	ctx, cancel := context.WithTimeout(context.Background(), onsetTimeout)
	defer cancel()
	kept, err := e.store.Onsets(ctx, string(key.broker), key.cluster)
	if err != nil {
		e.log.Warn("read status onsets", "broker", key.broker, "cluster", key.cluster, "err", err)
		return o // tried again at the next evaluation
	}
	o.loaded = true
	for _, k := range kept {
		o.stored[k.Reader] = k
		cur, ok := o.current[k.Reader]
		switch {
		case !ok:
			o.pending[k.Reader] = k
		case cur.Condition == k.Condition && k.Since.Before(cur.Since):
			// Seen here before the store was: the store's is older.
			cur.Since = k.Since
			o.current[k.Reader] = cur
		}
	}
	return o
}

// see records that reader is in status at this evaluation, its condition
// having begun at start as far as the window shows, and returns the onset
// of the condition: zero for ok.
func (o *sourceOnsets) see(reader string, status queue.Status, start time.Time) time.Time {
	if status == queue.StatusOK || status == "" {
		return time.Time{}
	}
	cond := string(status)
	// To the millisecond, as the store keeps it: every replica, and this
	// process after a restart, shows the same onset.
	since := start.Truncate(time.Millisecond)
	if cur, ok := o.current[reader]; ok && cur.Condition == cond {
		since = cur.Since
	} else if p, ok := o.pending[reader]; ok && p.Condition == cond && p.Since.Before(since) {
		since = p.Since
	}
	// A kept onset is taken up, or contradicted by another condition.
	delete(o.pending, reader)
	o.next[reader] = queue.Onset{Reader: reader, Condition: cond, Since: since}
	return since
}

// await records that the window judged reader in status, not shown yet
// (hysteresis.go): a kept onset of that condition stays pending for the
// poll that shows it.
func (o *sourceOnsets) await(reader string, status queue.Status) {
	if p, ok := o.pending[reader]; ok && p.Condition == string(status) {
		if o.awaited == nil {
			o.awaited = map[string]bool{}
		}
		o.awaited[reader] = true
	}
}

// finish ends an evaluation: readers not seen in a condition are forgotten,
// and so are kept onsets not taken up when the window was full. It
// returns what the store must learn.
func (o *sourceOnsets) finish(full bool) (put []queue.Onset, del []string) {
	o.current, o.next = o.next, nil
	if full {
		maps.DeleteFunc(o.pending, func(r string, _ queue.Onset) bool { return !o.awaited[r] })
	}
	clear(o.awaited)
	for r, k := range o.current {
		if s, ok := o.stored[r]; !ok || s.Condition != k.Condition || !s.Since.Equal(k.Since) {
			put = append(put, k)
		}
	}
	for r := range o.stored {
		if _, ok := o.current[r]; ok {
			continue
		}
		if _, ok := o.pending[r]; ok {
			continue
		}
		del = append(del, r)
	}
	return put, del
}

// save writes what finish found to the store; on failure the store is
// assumed unchanged, so the next evaluation tries again.
func (e *Evaluator) save(key sourceKey, o *sourceOnsets, put []queue.Onset, del []string) {
	if e.store == nil || !o.loaded || len(put)+len(del) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), onsetTimeout)
	defer cancel()
	if err := e.store.SaveOnsets(ctx, string(key.broker), key.cluster, put, del); err != nil {
		e.log.Warn("keep status onsets", "broker", key.broker, "cluster", key.cluster, "err", err)
		return
	}
	o.stored = make(map[string]queue.Onset, len(o.current)+len(o.pending))
	maps.Copy(o.stored, o.pending)
	maps.Copy(o.stored, o.current)
}

// Reader names in onsets: the kind, then the reader within its source.
func groupOnset(name string) string            { return "group:" + name }
func consumerOnset(stream, name string) string { return "consumer:" + stream + "/" + name }
func shareOnset(name string) string            { return "share:" + name }
func streamsOnset(name string) string          { return "streams:" + name }
func tableOnset(table string) string           { return "table:" + table }
func slotOnset(slot string) string             { return "slot:" + slot }
func sqsOnset(name string) string              { return "queue:" + name }
func kinesisOnset(name string) string          { return "application:" + name }
