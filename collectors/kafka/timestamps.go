package kafka

import (
	"context"
	"sort"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// fetchPartitionBytes bounds what one partition returns when reading the
// record at a committed offset: enough for a typical batch, small enough that
// thousands of partitions fit in one response. A batch larger than this comes
// back empty (Kafka returns oversized batches only for the first partition)
// and that partition's lag seconds are interpolated instead.
const fetchPartitionBytes = 64 << 10

type offsetKey struct {
	topic     string
	partition int32
	offset    int64
}

// record is what a poll needs of the record at an offset: its timestamp in
// unix milliseconds (-1 when it could not be read) and, for dead letters,
// the topic it originally came from according to its headers.
type record struct {
	ts     int64
	source string
	// gen is the last poll that used the record (Source.gen).
	gen uint64
}

// recordCache maps (topic, partition, offset) to the record there. Each poll
// keeps only the entries it used, so the cache is bounded by the number of
// group-partitions and DLQ partitions. Entries are marked with the poll that
// used them and the rest dropped, rather than copied into a new map: one
// lookup per group-partition, where a copy costs three.
type recordCache map[offsetKey]record

// fillLagSeconds sets LagSeconds for every lagging partition of every group:
// the age of the record at the offset the group reads next. It also reads the
// records at extra offsets (DLQ heads) and returns every record it knows.
//
// Lag never waits for lag seconds. On the first poll, when no timestamp is
// cached, reading one record per lagging group-partition (tens of thousands
// on a large cluster) would delay the first snapshot; those partitions are
// marked pending and their records are read by Finish, which the scheduler
// calls once the snapshot is published, before polling again. Later polls
// read only the records of groups that moved, and wait for them. DLQ heads
// are few and name a DLQ's source, a label, so they are always read before
// returning.
func (s *Source) fillLagSeconds(ctx context.Context, snap *queue.Snapshot, meta map[tp]partitionMeta, extra []offsetKey, now time.Time) recordCache {
	s.gen++
	gen := s.gen
	// use looks k up and marks it used by this poll.
	use := func(k offsetKey) (record, bool) {
		r, ok := s.records[k]
		if ok && r.gen != gen {
			r.gen = gen
			s.records[k] = r
		}
		return r, ok
	}
	var pending map[offsetKey]bool // only before the first read of the cache
	if !s.warm {
		pending = map[offsetKey]bool{}
	}
	var read []offsetKey // records to read before returning
	reading := map[offsetKey]bool{}
	var later []*queue.PartitionLag // partitions waiting for those reads
	for gi := range snap.Groups {
		ps := snap.Groups[gi].Partitions
		for pi := range ps {
			pl := &ps[pi]
			if pl.Lag == 0 {
				continue
			}
			k := offsetKey{pl.Topic, pl.Partition, nextOffset(pl)}
			switch r, ok := use(k); {
			case ok:
				s.setLagSeconds(pl, r, k.offset, now)
			case !s.warm:
				pending[k] = true
				pl.LagSecondsPending = true
			default:
				if !reading[k] {
					reading[k] = true
					read = append(read, k)
				}
				later = append(later, pl)
			}
		}
	}
	for _, k := range extra {
		if _, ok := use(k); !ok && !reading[k] {
			reading[k] = true
			read = append(read, k)
		}
	}
	if !s.warm {
		s.unread, s.unreadMeta = pending, meta
		s.warm = len(pending) == 0 // nothing to read: the cache is complete
	}
	got := s.fetchRecords(ctx, read, meta)
	for _, k := range read {
		r, ok := got[k]
		if !ok {
			r = record{ts: -1} // unreadable: interpolated from now on
		}
		r.gen = gen
		s.records[k] = r
	}
	for _, pl := range later {
		off := nextOffset(pl)
		s.setLagSeconds(pl, s.records[offsetKey{pl.Topic, pl.Partition, off}], off, now)
	}
	for k, r := range s.records {
		if r.gen != gen {
			delete(s.records, k)
		}
	}
	return s.records
}

// setLagSeconds sets a partition's lag seconds from the record at off, or,
// when it could not be read, from the end-offset history.
func (s *Source) setLagSeconds(pl *queue.PartitionLag, r record, off int64, now time.Time) {
	if r.ts >= 0 {
		pl.LagSeconds = max(now.Sub(time.UnixMilli(r.ts)).Seconds(), 0)
		return
	}
	if at, ok := s.ends.producedAt(tp{pl.Topic, pl.Partition}, off); ok {
		pl.LagSeconds = max(now.Sub(at).Seconds(), 0)
		pl.LagSecondsEstimated = true
	}
}

// Finish reads the record timestamps the last poll left pending and
// reports whether it read any: the next poll then fills the snapshot's lag
// seconds from the cache. The scheduler calls it after publishing a
// snapshot, never during a poll. Records it cannot read are cached as
// unreadable, as a poll's own reads do, so their lag seconds are
// interpolated.
func (s *Source) Finish(ctx context.Context) bool {
	keys := s.unread
	if len(keys) == 0 {
		return false
	}
	want := make([]offsetKey, 0, len(keys))
	for k := range keys {
		want = append(want, k)
	}
	got := s.fetchRecords(ctx, want, s.unreadMeta)
	for _, k := range want {
		r, ok := got[k]
		if !ok {
			r = record{ts: -1}
		}
		s.records[k] = r
	}
	s.unread, s.unreadMeta, s.warm = nil, nil, true
	return true
}

// nextOffset is the offset of the next record the group will read.
func nextOffset(pl *queue.PartitionLag) int64 {
	if !pl.HasCommit || pl.Committed < pl.LogStart {
		return pl.LogStart
	}
	return pl.Committed
}

// endSample is one observation of a partition's high watermark.
type endSample struct {
	at  time.Time
	end int64
}

// maxEndSamples bounds the end-offset history per partition. When full, every
// other older sample is dropped, so the history thins out with age but keeps
// reaching back: about 48 samples cover hours of polling.
const maxEndSamples = 48

// endHistory remembers when each partition's end offset reached which value,
// to estimate when a record was produced when it cannot be fetched.
type endHistory map[tp][]endSample

func (h endHistory) observe(at time.Time, offsets offsetTable) {
	for topic, ps := range offsets {
		for p, o := range ps {
			k := tp{topic, p}
			samples := h[k]
			if n := len(samples); n > 0 && samples[n-1].end == o.End {
				continue
			}
			if len(samples) >= maxEndSamples {
				samples = thin(samples)
			}
			h[k] = append(samples, endSample{at, o.End})
		}
	}
	for k := range h {
		if _, ok := offsets[k.topic][k.partition]; !ok {
			delete(h, k)
		}
	}
}

// thin keeps every other sample of the older half and all of the newer half.
func thin(s []endSample) []endSample {
	half := len(s) / 2
	out := s[:0]
	for i := 0; i < half; i += 2 {
		out = append(out, s[i])
	}
	return append(out, s[half:]...)
}

// producedAt estimates when the record at offset was produced: the time the
// end offset first passed it, interpolated linearly between samples. Before
// the first sample it answers the first sample's time (a lower bound on age).
func (h endHistory) producedAt(p tp, offset int64) (time.Time, bool) {
	s := h[p]
	if len(s) == 0 {
		return time.Time{}, false
	}
	i := sort.Search(len(s), func(i int) bool { return s[i].end > offset })
	switch {
	case i == len(s):
		return time.Time{}, false
	case i == 0:
		return s[0].at, true
	}
	a, b := s[i-1], s[i]
	frac := float64(offset-a.end) / float64(b.end-a.end)
	return a.at.Add(time.Duration(frac * float64(b.at.Sub(a.at)))), true
}
