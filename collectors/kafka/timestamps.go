package kafka

import (
	"context"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
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
}

// recordCache maps (topic, partition, offset) to the record there. Each poll
// keeps only the entries it used, so the cache is bounded by the number of
// group-partitions and DLQ partitions.
type recordCache map[offsetKey]record

// fillLagSeconds sets LagSeconds for every lagging partition of every group:
// the age of the record at the offset the group reads next. It also reads the
// records at extra offsets (DLQ heads) and returns every record it knows.
//
// Lag never waits for lag seconds. On the first poll, when no timestamp is
// cached, reading one record per lagging group-partition (tens of thousands
// on a large cluster) would delay the first snapshot by seconds; those reads
// go to the background and the partitions are marked pending, and Refreshed
// tells the scheduler to poll again when they are done. Later polls read only
// the records of groups that moved, and wait for them. DLQ heads are few and
// name a DLQ's source, a label, so they are always read before returning.
func (s *Source) fillLagSeconds(ctx context.Context, snap *queue.Snapshot, meta map[tp]partitionMeta, extra []offsetKey, now time.Time) recordCache {
	s.collectFill()
	next := recordCache{}
	var missing, missingExtra []offsetKey
	pending := map[offsetKey]bool{}
	need := func(k offsetKey, isExtra bool) {
		if _, seen := next[k]; seen || pending[k] {
			return
		}
		if r, ok := s.records[k]; ok {
			next[k] = r
			return
		}
		switch {
		case isExtra:
			missingExtra = append(missingExtra, k)
		case !s.warm:
			pending[k] = true
			missing = append(missing, k)
			return
		default:
			missing = append(missing, k)
		}
		next[k] = record{ts: -1}
	}
	for gi := range snap.Groups {
		ps := snap.Groups[gi].Partitions
		for pi := range ps {
			if ps[pi].Lag > 0 {
				need(offsetKey{ps[pi].Topic, ps[pi].Partition, nextOffset(&ps[pi])}, false)
			}
		}
	}
	for _, k := range extra {
		need(k, true)
	}
	if !s.warm && s.fill == nil && len(missing) == 0 {
		s.warm = true // nothing to read: the cache is complete
	}
	if s.warm {
		missingExtra = append(missingExtra, missing...)
	} else if s.fill == nil && len(missing) > 0 {
		s.startFill(missing, meta)
	}
	for k, r := range s.fetchRecords(ctx, missingExtra, meta) {
		next[k] = r
	}
	s.records = next

	for gi := range snap.Groups {
		for pi := range snap.Groups[gi].Partitions {
			pl := &snap.Groups[gi].Partitions[pi]
			if pl.Lag == 0 {
				continue
			}
			off := nextOffset(pl)
			k := offsetKey{pl.Topic, pl.Partition, off}
			if pending[k] {
				pl.LagSecondsPending = true
				continue
			}
			if r := next[k]; r.ts >= 0 {
				pl.LagSeconds = max(now.Sub(time.UnixMilli(r.ts)).Seconds(), 0)
				continue
			}
			if at, ok := s.ends.producedAt(tp{pl.Topic, pl.Partition}, off); ok {
				pl.LagSeconds = max(now.Sub(at).Seconds(), 0)
				pl.LagSecondsEstimated = true
			}
		}
	}
	return next
}

// timestampFill is one background read of record timestamps.
type timestampFill struct {
	keys map[offsetKey]bool
	done chan struct{}
	got  map[offsetKey]record // written before done is closed
}

// fillTimeout bounds a background read; what it did not read by then is
// interpolated like a record that could not be fetched.
const fillTimeout = time.Minute

// startFill reads the records at keys in the background and signals
// Refreshed when done.
func (s *Source) startFill(keys []offsetKey, meta map[tp]partitionMeta) {
	f := &timestampFill{keys: make(map[offsetKey]bool, len(keys)), done: make(chan struct{})}
	for _, k := range keys {
		f.keys[k] = true
	}
	s.fill = f
	go func() {
		ctx, cancel := context.WithTimeout(s.life, fillTimeout)
		defer cancel()
		f.got = s.fetchRecords(ctx, keys, meta)
		close(f.done)
		select {
		case s.refreshed <- struct{}{}:
		default: // a signal is already waiting
		}
	}()
}

// collectFill moves a finished background read into the record cache. Keys
// it could not read are cached as unreadable (-1), as a poll's own fetch
// does, so they are interpolated rather than read again.
func (s *Source) collectFill() {
	f := s.fill
	if f == nil {
		return
	}
	select {
	case <-f.done:
	default:
		return
	}
	for k := range f.keys {
		r, ok := f.got[k]
		if !ok {
			r = record{ts: -1}
		}
		s.records[k] = r
	}
	s.fill, s.warm = nil, true
}

// nextOffset is the offset of the next record the group will read.
func nextOffset(pl *queue.PartitionLag) int64 {
	if !pl.HasCommit || pl.Committed < pl.LogStart {
		return pl.LogStart
	}
	return pl.Committed
}

// fetchRecords reads the first record at or after each offset, with one
// Fetch request per partition leader. Offsets it cannot read are absent from
// the result.
func (s *Source) fetchRecords(ctx context.Context, keys []offsetKey, meta map[tp]partitionMeta) map[offsetKey]record {
	out := map[offsetKey]record{}
	if len(keys) == 0 {
		return out
	}
	byLeader := map[int32][]offsetKey{}
	for _, k := range keys {
		m, ok := meta[tp{k.topic, k.partition}]
		if !ok || m.leader < 0 {
			continue
		}
		byLeader[m.leader] = append(byLeader[m.leader], k)
	}
	for leader, ks := range byLeader {
		s.fetchFrom(ctx, leader, ks, meta, out)
	}
	return out
}

// fetchFrom fetches from one leader. A partition can appear only once per
// Fetch request, so several groups at different offsets of one partition
// take several rounds (one per distinct offset of the busiest partition).
//
// A partition whose next batch is larger than fetchPartitionBytes comes back
// empty unless it is the first in the request, so such partitions are
// fetched again one at a time, each first in its own request, with room for
// a batch up to Kafka's default message size.
func (s *Source) fetchFrom(ctx context.Context, leader int32, keys []offsetKey, meta map[tp]partitionMeta, out map[offsetKey]record) {
	var oversized []offsetKey
	for len(keys) > 0 {
		round, rest := splitDistinctPartitions(keys)
		keys = rest
		resp, err := s.cl.Broker(int(leader)).Request(ctx, fetchRequest(round, meta, fetchPartitionBytes))
		if err != nil {
			s.log.Debug("fetch for lag seconds failed", "leader", leader, "err", err)
			return
		}
		oversized = append(oversized, parseFetch(resp.(*kmsg.FetchResponse), round, meta, out)...)
	}
	for _, k := range oversized {
		resp, err := s.cl.Broker(int(leader)).Request(ctx, fetchRequest([]offsetKey{k}, meta, maxBatchBytes))
		if err != nil {
			s.log.Debug("fetch for lag seconds failed", "leader", leader, "err", err)
			return
		}
		parseFetch(resp.(*kmsg.FetchResponse), []offsetKey{k}, meta, out)
	}
}

// maxBatchBytes is Kafka's default maximum record batch size
// (message.max.bytes): room for any batch a default broker accepts.
const maxBatchBytes = 1 << 20

func splitDistinctPartitions(keys []offsetKey) (round, rest []offsetKey) {
	seen := map[tp]bool{}
	for _, k := range keys {
		p := tp{k.topic, k.partition}
		if seen[p] {
			rest = append(rest, k)
			continue
		}
		seen[p] = true
		round = append(round, k)
	}
	return round, rest
}

func fetchRequest(keys []offsetKey, meta map[tp]partitionMeta, partitionBytes int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 0
	req.MaxBytes = 32 << 20
	req.SessionEpoch = -1 // no fetch session: this is a one-off read
	byTopic := map[string]int{}
	for _, k := range keys {
		i, ok := byTopic[k.topic]
		if !ok {
			i = len(req.Topics)
			byTopic[k.topic] = i
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = k.topic
			rt.TopicID = meta[tp{k.topic, k.partition}].topicID
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = k.partition
		rp.FetchOffset = k.offset
		rp.PartitionMaxBytes = partitionBytes
		rp.CurrentLeaderEpoch = -1
		rp.LogStartOffset = -1
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	return req
}

// parseFetch stores the first record at or after each key's offset in out
// and returns the keys whose partition had records there but sent none: a
// batch too large for the request.
func parseFetch(resp *kmsg.FetchResponse, keys []offsetKey, meta map[tp]partitionMeta, out map[offsetKey]record) (oversized []offsetKey) {
	want := map[tp]int64{}
	names := map[[16]byte]string{}
	for _, k := range keys {
		want[tp{k.topic, k.partition}] = k.offset
		names[meta[tp{k.topic, k.partition}].topicID] = k.topic
	}
	dec := kgo.DefaultDecompressor()
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		topic := rt.Topic
		if topic == "" {
			topic = names[rt.TopicID]
		}
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			off, ok := want[tp{topic, rp.Partition}]
			if !ok || rp.ErrorCode != 0 {
				continue
			}
			fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
				Offset: off, Topic: topic, Partition: rp.Partition,
			}, rp, dec, nil)
			k := offsetKey{topic, rp.Partition, off}
			switch {
			case len(fp.Records) > 0:
				r := fp.Records[0]
				out[k] = record{ts: r.Timestamp.UnixMilli(), source: brokerkafka.OriginalTopic(r.Headers)}
			case len(rp.RecordBatches) == 0 && rp.HighWatermark > off:
				oversized = append(oversized, k)
			}
		}
	}
	return oversized
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
