package collectors

import (
	"log/slog"
	"sync"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// sourceState is everything kept about one source. Snapshots are immutable
// once published, so readers take the pointer under the lock and use it
// without holding it.
type sourceState struct {
	src       Source
	log       *slog.Logger
	maxPoints int

	polling sync.Mutex // held for the whole poll: polls never overlap

	mu          sync.RWMutex
	latest      *queue.Snapshot // the last good snapshot
	polled      bool
	up          bool
	lastPoll    time.Time
	lastSuccess time.Time
	lastErr     string
	duration    time.Duration
	consecutive int // consecutive failures
	// readers is every reader's history (queue.Snapshot.Readers), what the
	// overview's cards and rows and a group's chart draw.
	readers map[queue.ReaderKey][]queue.ReaderPoint
	dlqs    map[string][]queue.DLQPoint
	// outbox, slots and consumers are the detail histories of the outbox
	// page and the JetStream consumer page, their pages' specific
	// sections: their charts draw more than a reader's point (a table's
	// oldest age, a slot's activity, a consumer's ack pending).
	outbox    map[string][]queue.OutboxPoint // by table
	slots     map[string][]queue.SlotPoint   // by slot
	consumers map[consumerKey][]queue.ConsumerPoint
	// completing is set when the next poll completes the latest snapshot:
	// it runs at once after Finish read what that one left pending.
	completing bool
}

func (s *sourceState) fail(err error, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.polled, s.up = true, false
	s.lastPoll, s.lastErr = at, err.Error()
	s.consecutive++
	s.completing = false // the snapshot stays, as a poll of its own
}

func (s *sourceState) failures() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.consecutive
}

func (s *sourceState) attempted() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.polled
}

func (s *sourceState) publish(snap *queue.Snapshot, took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.polled, s.up = true, true
	s.lastPoll, s.lastSuccess, s.lastErr = snap.Time, snap.Time, ""
	s.duration = took
	s.consecutive = 0
	s.latest = snap
	s.recordHistory(snap)
}

// recordHistory appends the snapshot's readers and DLQs, and forgets the
// ones that are gone, so history memory follows what exists.
func (s *sourceState) recordHistory(snap *queue.Snapshot) {
	dlqs := make(map[string][]queue.DLQPoint, len(snap.DLQs))
	for i := range snap.DLQs {
		d := &snap.DLQs[i]
		dlqs[d.ID()] = appendBounded(s.dlqs[d.ID()], queue.DLQPoint{At: snap.Time, Messages: d.Messages}, s.maxPoints)
	}
	s.dlqs = dlqs
	s.recordReaders(snap)
	s.recordConsumers(snap)
	s.recordOutboxHistory(snap)
}

// recordReaders appends a point for every reader of the snapshot and
// forgets readers that are gone. A reader whose poll is not worth a point
// (queue.Reader.Point) keeps its history as it was, so a chart shows the
// gap's neighbours rather than a false zero. Points are per reader, never
// per partition: 100k group-partitions are some 1,700 histories.
func (s *sourceState) recordReaders(snap *queue.Snapshot) {
	all := snap.Readers()
	readers := make(map[queue.ReaderKey][]queue.ReaderPoint, len(all))
	for i := range all {
		k := all[i].Key()
		p, ok := all[i].Point(snap.Time)
		if !ok {
			if h, kept := s.readers[k]; kept {
				readers[k] = h
			}
			continue
		}
		readers[k] = appendBounded(s.readers[k], p, s.maxPoints)
	}
	s.readers = readers
}

// readerHistory is a copy of the kept history of the reader k.
func (s *sourceState) readerHistory(k queue.ReaderKey) []queue.ReaderPoint {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]queue.ReaderPoint(nil), s.readers[k]...)
}

// recordOutboxHistory does for outbox tables and replication slots what
// recordHistory does for groups: one point per poll, gone ones forgotten.
// A table or slot that could not be read this poll, or a slot whose lag
// is unknown, gets no point, so a chart shows a gap's neighbours rather
// than a false zero.
func (s *sourceState) recordOutboxHistory(snap *queue.Snapshot) {
	tables := make(map[string][]queue.OutboxPoint, len(snap.OutboxTables))
	for i := range snap.OutboxTables {
		t := &snap.OutboxTables[i]
		if t.Err != "" {
			tables[t.Table] = s.outbox[t.Table]
			continue
		}
		p := queue.OutboxPoint{At: snap.Time, Pending: t.Pending, OldestPendingAge: t.OldestPendingAge}
		tables[t.Table] = appendBounded(s.outbox[t.Table], p, s.maxPoints)
	}
	s.outbox = tables
	slots := make(map[string][]queue.SlotPoint, len(snap.Slots))
	for i := range snap.Slots {
		sl := &snap.Slots[i]
		if sl.Err != "" || sl.LagUnknown != "" {
			slots[sl.Slot] = s.slots[sl.Slot]
			continue
		}
		slots[sl.Slot] = appendBounded(s.slots[sl.Slot], queue.SlotPoint{At: snap.Time, LagBytes: sl.LagBytes, Active: sl.Active}, s.maxPoints)
	}
	s.slots = slots
}

// appendBounded appends p, dropping the oldest points beyond limit. Once
// full, it shifts the points down in place rather than allocating a new
// array each poll: the backing array stays at its size, and a poll of 1,700
// full histories allocates nothing. That is safe because histories are
// written and copied out only under sourceState.mu.
func appendBounded[T any](points []T, p T, limit int) []T {
	if len(points) < limit {
		return append(points, p)
	}
	n := copy(points, points[len(points)-limit+1:])
	return append(points[:n], p)
}

func (s *sourceState) markCompleting() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.completing = true
}

// takeCompleting reports whether this poll completes the latest snapshot,
// and clears it.
func (s *sourceState) takeCompleting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.completing
	s.completing = false
	return c
}

func (s *sourceState) latestSnapshot() *queue.Snapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.latest
}

func (s *sourceState) status() queue.SourceStatus {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := queue.SourceStatus{
		Broker: s.src.Broker(), Cluster: s.src.Cluster(), Up: s.up, Polled: s.polled,
		LastPoll: s.lastPoll, LastSuccess: s.lastSuccess, LastError: s.lastErr, Duration: s.duration,
	}
	if s.latest != nil {
		st.Partial = s.latest.Partial
	}
	st.PolledBy = polledBy(s.src)
	return st
}

func (s *sourceState) dlqHistory(id string) []queue.DLQPoint {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h, ok := s.dlqs[id]
	if !ok {
		return nil
	}
	return append([]queue.DLQPoint{}, h...)
}

func (s *sourceState) outboxHistory(table string) []queue.OutboxPoint {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]queue.OutboxPoint(nil), s.outbox[table]...)
}

func (s *sourceState) slotHistory(slot string) []queue.SlotPoint {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]queue.SlotPoint(nil), s.slots[slot]...)
}
