package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
)

// maxBatchBytes is Kafka's default maximum record batch size
// (message.max.bytes): room for any batch a default broker accepts.
const maxBatchBytes = 1 << 20

// fetchResponseBytes bounds one Fetch response; partitions that do not fit
// are read in the next round.
const fetchResponseBytes = 4 << 20

// maxFetchRounds bounds the requests one leader gets in one read: each round
// resolves every wanted offset that the returned batches cover.
const maxFetchRounds = 64

// fetchRecords reads the first record at or after each offset, with Fetch
// requests to every partition leader at once. Offsets it cannot read are
// absent from the result.
func (s *Source) fetchRecords(ctx context.Context, keys []offsetKey, meta map[tp]partitionMeta) map[offsetKey]record {
	out := make(map[offsetKey]record, len(keys))
	if len(keys) == 0 {
		return out
	}
	byLeader := map[int32]map[tp][]int64{}
	for _, k := range keys {
		p := tp{k.topic, k.partition}
		m, ok := meta[p]
		if !ok || m.leader < 0 {
			continue
		}
		if byLeader[m.leader] == nil {
			byLeader[m.leader] = map[tp][]int64{}
		}
		byLeader[m.leader][p] = append(byLeader[m.leader][p], k.offset)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for leader, want := range byLeader {
		wg.Go(func() {
			got := s.fetchFrom(ctx, leader, want, meta)
			mu.Lock()
			maps.Copy(out, got)
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// fetchFrom reads the wanted offsets of each partition from one leader.
//
// A partition is fetched from its lowest wanted offset, and every wanted
// offset that the returned batches cover is resolved from that one answer:
// groups a few records apart on one partition cost one request, not one
// each. Offsets past what came back are fetched in a next round.
//
// A partition whose next batch is larger than fetchPartitionBytes comes back
// empty unless it is the first in the request, so such partitions are
// fetched again one at a time, each first in its own request, with room for
// a batch up to Kafka's default message size.
func (s *Source) fetchFrom(ctx context.Context, leader int32, want map[tp][]int64, meta map[tp]partitionMeta) map[offsetKey]record {
	out := map[offsetKey]record{}
	for p, offs := range want {
		slices.Sort(offs)
		want[p] = slices.Compact(offs)
	}
	oversized := s.fetchRounds(ctx, leader, want, meta, fetchPartitionBytes, out)
	for _, p := range oversized {
		s.fetchRounds(ctx, leader, map[tp][]int64{p: want[p]}, meta, maxBatchBytes, out)
	}
	return out
}

// fetchRounds fetches until every wanted offset is resolved or a round
// makes no progress, storing records in out. It returns the partitions whose
// batch did not fit in partitionBytes (their offsets stay in want).
func (s *Source) fetchRounds(ctx context.Context, leader int32, want map[tp][]int64, meta map[tp]partitionMeta, partitionBytes int32, out map[offsetKey]record) (oversized []tp) {
	pending := maps.Clone(want)
	pos := make(map[tp]int64, len(pending))
	names := map[[16]byte]string{}
	for p, offs := range pending {
		pos[p] = offs[0]
		names[meta[p].topicID] = p.topic
	}
	dec := kgo.DefaultDecompressor()
	for round := 0; len(pending) > 0 && round < maxFetchRounds; round++ {
		resp, err := s.cl.Broker(int(leader)).Request(ctx, fetchRequest(pos, meta, partitionBytes))
		if err != nil {
			s.log.Debug("fetch for lag seconds failed", "leader", leader, "err", err)
			return oversized
		}
		progress := false
		for i := range resp.(*kmsg.FetchResponse).Topics {
			rt := &resp.(*kmsg.FetchResponse).Topics[i]
			topic := rt.Topic
			if topic == "" {
				topic = names[rt.TopicID]
			}
			for j := range rt.Partitions {
				rp := &rt.Partitions[j]
				p := tp{topic, rp.Partition}
				offs, ok := pending[p]
				if !ok {
					continue
				}
				progress = true
				if rp.ErrorCode != 0 {
					delete(pending, p)
					continue
				}
				rest, end, err := readRecords(rp.RecordBatches, p, offs, dec, out)
				switch {
				case err != nil:
					s.log.Debug("decode records for lag seconds", "topic", p.topic, "partition", p.partition, "err", err)
					delete(pending, p)
				case len(rest) == 0:
					delete(pending, p)
				case end == 0 && rp.HighWatermark > pos[p]: // no whole batch fit
					oversized = append(oversized, p)
					delete(pending, p)
				case end <= pos[p]:
					delete(pending, p) // nothing more to read there
				default:
					pending[p], pos[p] = rest, max(rest[0], end)
				}
			}
		}
		if !progress {
			break
		}
		for p := range pos {
			if _, ok := pending[p]; !ok {
				delete(pos, p)
			}
		}
	}
	return oversized
}

func fetchRequest(pos map[tp]int64, meta map[tp]partitionMeta, partitionBytes int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 0
	// Small responses, several rounds: every leader is read at once, and
	// what a response holds is in memory until it is decoded.
	req.MaxBytes = fetchResponseBytes
	req.SessionEpoch = -1 // no fetch session: this is a one-off read
	byTopic := map[string]int{}
	for p, at := range pos {
		i, ok := byTopic[p.topic]
		if !ok {
			i = len(req.Topics)
			byTopic[p.topic] = i
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = p.topic
			rt.TopicID = meta[p].topicID
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = p.partition
		rp.FetchOffset = at
		rp.PartitionMaxBytes = partitionBytes
		rp.CurrentLeaderEpoch = -1
		rp.LogStartOffset = -1
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	return req
}

// errOldMessageFormat is a batch older than Kafka 0.11's format (magic 2),
// which a broker sends only for topics written long ago by old clients.
var errOldMessageFormat = errors.New("record batch older than magic 2")

// readRecords resolves the wanted offsets (sorted) of one partition from its
// raw record batches: each gets the first data record at or after it. It
// returns the offsets past the last record returned, and end, the offset
// after the last batch (data or control) returned.
//
// It reads batch headers and each record's offset and timestamp only; a
// record's headers (which name a dead letter's source) are decoded for the
// wanted records alone.
func readRecords(raw []byte, p tp, offs []int64, dec kgo.Decompressor, out map[offsetKey]record) (rest []int64, end int64, err error) {
	for len(raw) >= 17 && len(offs) > 0 {
		length := int32(binary.BigEndian.Uint32(raw[8:]))
		if length < 5 || 12+int(length) > len(raw) {
			break // a batch cut short by the response size: read again
		}
		b := raw[:12+length]
		raw = raw[12+length:]
		if b[16] != 2 {
			return offs, end, errOldMessageFormat
		}
		var batch kmsg.RecordBatch
		if err := batch.ReadFrom(b); err != nil {
			return offs, end, err
		}
		end = max(end, batch.FirstOffset+int64(batch.LastOffsetDelta)+1)
		if batch.Attributes&0x20 != 0 {
			continue // control batch: transaction markers, never read by a consumer
		}
		recs := batch.Records
		if codec := kgo.CompressionCodecType(batch.Attributes & 0x07); codec != kgo.CodecNone {
			if recs, err = dec.Decompress(recs, codec); err != nil {
				return offs, end, err
			}
		}
		logAppendTime := batch.Attributes&0x08 != 0
		for n := int32(0); n < batch.NumRecords && len(recs) > 0 && len(offs) > 0; n++ {
			rec, next, off, ts, ok := nextRecord(recs)
			if !ok {
				break
			}
			recs = next
			off += batch.FirstOffset
			ts += batch.FirstTimestamp
			if logAppendTime {
				ts = batch.MaxTimestamp
			}
			if offs[0] > off {
				continue
			}
			r := record{ts: ts, source: recordSource(rec)}
			for len(offs) > 0 && offs[0] <= off {
				out[offsetKey{p.topic, p.partition, offs[0]}] = r
				offs = offs[1:]
			}
		}
	}
	return offs, end, nil
}

// nextRecord splits the first record off recs and reads its offset and
// timestamp deltas.
func nextRecord(recs []byte) (rec, rest []byte, offsetDelta, tsDelta int64, ok bool) {
	l, n := binary.Varint(recs)
	if n <= 0 || l < 1 || int64(len(recs)-n) < l {
		return nil, nil, 0, 0, false
	}
	rec, rest = recs[:n+int(l)], recs[n+int(l):]
	body := rec[n+1:] // after the attributes byte
	tsDelta, m := binary.Varint(body)
	if m <= 0 {
		return nil, nil, 0, 0, false
	}
	offsetDelta, k := binary.Varint(body[m:])
	if k <= 0 {
		return nil, nil, 0, 0, false
	}
	return rec, rest, offsetDelta, tsDelta, true
}

// recordSource is the topic a dead letter came from, by its headers; "" for
// a record without such headers.
func recordSource(rec []byte) string {
	var r kmsg.Record
	if err := r.ReadFrom(rec); err != nil || len(r.Headers) == 0 {
		return ""
	}
	hs := make([]kgo.RecordHeader, len(r.Headers))
	for i, h := range r.Headers {
		hs[i] = kgo.RecordHeader{Key: h.Key, Value: h.Value}
	}
	return brokerkafka.OriginalTopic(hs)
}
