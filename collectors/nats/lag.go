package nats

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/queue"
)

// nextKey names the lookup of a consumer's next message: the first message
// of stream at or after seq matching filter (the consumer's filter subjects
// joined).
type nextKey struct {
	stream, filter string
	seq            uint64
}

// nextMsg is what a lookup found: the message's sequence and store time, or
// none when no message matched.
type nextMsg struct {
	seq  uint64
	at   time.Time
	none bool
}

// coldLookups bounds the next-message reads of the first poll after a
// start: beyond it the snapshot is published with those consumers' lag
// seconds unknown, and Finish reads them right after, so an operator who
// restarts queuewatch sees every consumer's backlog at once (a thousand
// lagging consumers cost a thousand reads).
const coldLookups = 32

// nextCache maps lookups to their answers. Each poll keeps only the entries
// it used, so the cache is bounded by the number of lagging consumers.
type nextCache map[nextKey]nextMsg

// fillLagSeconds sets LagSeconds of every consumer: 0 when nothing is
// pending, else the age of its next undelivered message.
func (s *Source) fillLagSeconds(ctx context.Context, cl *brokernats.Client, snap *queue.Snapshot, now time.Time) {
	first := make(map[string]uint64, len(snap.Streams))
	for _, st := range snap.Streams {
		first[st.Name] = st.FirstSeq
	}
	next := nextCache{}
	var missing []nextKey
	for i := range snap.Consumers {
		c := &snap.Consumers[i]
		if c.Err != "" || c.Pending == 0 {
			continue
		}
		k := keyOf(c, first[c.Stream])
		if _, seen := next[k]; seen {
			continue
		}
		// A cached message below the stream's first sequence was removed
		// by limits: the next one is another message now.
		if m, ok := s.next[k]; ok && !m.none && m.seq >= first[c.Stream] {
			next[k] = m
			continue
		}
		next[k] = nextMsg{none: true}
		missing = append(missing, k)
	}
	if !s.warm && len(missing) > coldLookups {
		for _, k := range missing {
			delete(next, k) // unknown, not "no message"
		}
		s.deferred, missing = missing, nil
	}
	s.warm = true
	failed := s.lookup(ctx, cl, missing, next)
	s.next = next

	for i := range snap.Consumers {
		c := &snap.Consumers[i]
		switch {
		case c.Err != "":
			continue
		case c.Pending == 0:
			c.LagSeconds, c.HasLagSeconds = 0, true
			continue
		}
		k := keyOf(c, first[c.Stream])
		if err, ok := failed[k]; ok {
			snap.Partial = append(snap.Partial, "consumer "+c.Stream+"/"+c.Name+": lag seconds: "+err.Error())
			continue
		}
		if m, ok := next[k]; ok && !m.none {
			c.LagSeconds, c.HasLagSeconds = max(now.Sub(m.at).Seconds(), 0), true
		}
	}
}

// Finish reads the next messages the first poll left unread, so the poll
// the scheduler runs at once after it carries every consumer's lag seconds.
// It reports whether there was anything to read.
func (s *Source) Finish(ctx context.Context) bool {
	if len(s.deferred) == 0 {
		return false
	}
	keys := s.deferred
	s.deferred = nil
	cl, err := s.conn(ctx)
	if err != nil {
		return false
	}
	found := nextCache{}
	s.lookup(ctx, cl, keys, found)
	for k, m := range found {
		s.next[k] = m
	}
	return true
}

// keyOf is the lookup of c's next undelivered message. Below the stream's
// first sequence the server delivers from the first one.
func keyOf(c *queue.StreamConsumer, firstSeq uint64) nextKey {
	return nextKey{stream: c.Stream, filter: strings.Join(c.FilterSubject, " "), seq: max(c.DeliveredSeq+1, firstSeq)}
}

// lookup reads the missing keys, a few at a time, into next; it returns the
// keys whose lookup failed. A multi-filter consumer costs one request per
// filter subject, the earliest match winning.
func (s *Source) lookup(ctx context.Context, cl *brokernats.Client, keys []nextKey, next nextCache) map[nextKey]error {
	var mu sync.Mutex
	failed := map[nextKey]error{}
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, k := range keys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			m, err := lookupOne(ctx, cl, k)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed[k] = err
				return
			}
			next[k] = m
		})
	}
	wg.Wait()
	return failed
}

func lookupOne(ctx context.Context, cl *brokernats.Client, k nextKey) (nextMsg, error) {
	filters := strings.Fields(k.filter)
	if len(filters) == 0 {
		filters = []string{">"}
	}
	best := nextMsg{none: true}
	for _, f := range filters {
		seq, at, err := cl.NextMsg(ctx, k.stream, k.seq, f)
		switch {
		case errors.Is(err, brokernats.ErrNoMessage):
			continue
		case err != nil:
			return nextMsg{}, err
		}
		if best.none || seq < best.seq {
			best = nextMsg{seq: seq, at: at}
		}
	}
	return best, nil
}
