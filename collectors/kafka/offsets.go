package kafka

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/queue"
)

type tp struct {
	topic     string
	partition int32
}

// offsetTable holds the listed offsets of every partition of the consumed
// topics. Topics missing from it were deleted or could not be listed.
type offsetTable map[string]map[int32]queue.PartitionOffsets

func (o offsetTable) sorted() []queue.PartitionOffsets {
	var out []queue.PartitionOffsets
	for _, ps := range o {
		for _, p := range ps {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b queue.PartitionOffsets) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
	return out
}

// partitionMeta is what fetching record timestamps needs from metadata.
type partitionMeta struct {
	leader  int32
	topicID [16]byte
}

// metadata reads the partitions, leaders and topic IDs of every topic in one
// request: DLQ detection needs all topic names, and the offsets below need
// leaders only for the topics in use.
func (s *Source) metadata(ctx context.Context) (map[tp]partitionMeta, error) {
	// Any broker can answer; franz-go picks one per attempt, so a second
	// attempt usually avoids a broker that just failed.
	var md kadm.Metadata
	var err error
	for range 3 {
		if md, err = s.adm.Metadata(ctx); err == nil || ctx.Err() != nil {
			break
		}
		s.log.Debug("metadata request failed, retrying", "err", err)
	}
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	meta := map[tp]partitionMeta{}
	for _, td := range md.Topics {
		if td.Err != nil || td.IsInternal {
			continue
		}
		for _, pd := range td.Partitions {
			meta[tp{td.Topic, pd.Partition}] = partitionMeta{leader: pd.Leader, topicID: td.ID}
		}
	}
	return meta, nil
}

// listOffsets lists log start, high watermark and last stable offset of every
// partition of topics, with one ListOffsets request per leader each. A
// partition whose listing fails is left out (and so is its lag).
func (s *Source) listOffsets(ctx context.Context, meta map[tp]partitionMeta, topics []string) (offsetTable, error) {
	table := offsetTable{}
	want := map[string]bool{}
	for _, t := range topics {
		want[t] = true
	}
	used := map[tp]partitionMeta{}
	for k, m := range meta {
		if want[k.topic] {
			used[k] = m
		}
	}
	if len(used) == 0 {
		return table, nil
	}
	// The three listings are independent requests: they go out together.
	var starts, ends, stables map[tp]int64
	var errs [3]error
	var wg sync.WaitGroup
	wg.Go(func() { starts, errs[0] = s.listAt(ctx, used, -2, 0) })
	wg.Go(func() { ends, errs[1] = s.listAt(ctx, used, -1, 0) })
	wg.Go(func() { stables, errs[2] = s.listAt(ctx, used, -1, 1) })
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for k := range used {
		end, ok := ends[k]
		if !ok {
			continue
		}
		stable, ok := stables[k]
		if !ok {
			stable = end
		}
		if table[k.topic] == nil {
			table[k.topic] = map[int32]queue.PartitionOffsets{}
		}
		table[k.topic][k.partition] = queue.PartitionOffsets{
			Topic: k.topic, Partition: k.partition, LogStart: starts[k], End: end, LastStable: stable,
		}
	}
	return table, nil
}

// listAt sends one sharded ListOffsets request for every partition in meta;
// franz-go splits it per partition leader.
func (s *Source) listAt(ctx context.Context, meta map[tp]partitionMeta, timestamp int64, isolation int8) (map[tp]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = isolation
	byTopic := map[string]int{}
	for k := range meta {
		i, ok := byTopic[k.topic]
		if !ok {
			i = len(req.Topics)
			byTopic[k.topic] = i
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = k.topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = k.partition
		rp.Timestamp = timestamp
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	out := make(map[tp]int64, len(meta))
	var firstErr error
	for _, shard := range s.cl.RequestSharded(ctx, req) {
		if shard.Err != nil {
			firstErr = shard.Err
			continue
		}
		resp := shard.Resp.(*kmsg.ListOffsetsResponse)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if kerr.ErrorForCode(p.ErrorCode) != nil || p.Offset < 0 {
					continue
				}
				out[tp{t.Topic, p.Partition}] = p.Offset
			}
		}
	}
	if len(out) == 0 && firstErr != nil {
		return nil, fmt.Errorf("list offsets: %w", firstErr)
	}
	if firstErr != nil {
		s.log.Warn("some partition leaders did not list offsets", "err", firstErr)
	}
	return out, nil
}

// buildGroup computes one group's lag from what the poll read.
func buildGroup(opts Options, g kadm.ListedGroup, d described, f kadm.FetchOffsetsResponse, offsets offsetTable) queue.ConsumerGroup {
	cg := queue.ConsumerGroup{
		Cluster: opts.Cluster.Name(), Name: g.Group, State: d.state, Protocol: d.protocol, Type: d.typ, Members: d.members,
	}
	if cg.State == "" {
		cg.State = g.State
	}
	if cg.Type == "" {
		cg.Type = queue.GroupClassic
	}
	if d.err != nil {
		cg.Err = "describe: " + errString(d.err)
	}
	if f.Err != nil {
		cg.Err = "fetch offsets: " + errString(f.Err)
		return cg
	}

	topics := map[string]struct{}{}
	for t := range f.Fetched {
		topics[t] = struct{}{}
	}
	for t := range d.assigned {
		topics[t] = struct{}{}
	}
	for _, t := range d.subscribed {
		topics[t] = struct{}{}
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	slices.Sort(names)

	n := 0
	for _, t := range names {
		n += len(offsets[t])
	}
	// Sized once: growing it by appends left a third of a large
	// snapshot's biggest array as slack.
	cg.Partitions = make([]queue.PartitionLag, 0, n)
	for _, t := range names {
		parts, ok := offsets[t]
		if !ok {
			continue // deleted topic, or its offsets could not be listed
		}
		ids := make([]int32, 0, len(parts))
		for p := range parts {
			ids = append(ids, p)
		}
		slices.Sort(ids)
		for _, p := range ids {
			cg.Partitions = append(cg.Partitions, partitionLag(opts, parts[p], f, d))
		}
	}
	return cg
}

func partitionLag(opts Options, po queue.PartitionOffsets, f kadm.FetchOffsetsResponse, d described) queue.PartitionLag {
	pl := queue.PartitionLag{Topic: po.Topic, Partition: po.Partition, LogStart: po.LogStart, End: po.End}
	if opts.ReadCommitted {
		pl.End = po.LastStable
	}
	if o, ok := f.Fetched.Lookup(po.Topic, po.Partition); ok && o.Err == nil && o.At >= 0 {
		pl.Committed, pl.HasCommit = o.At, true
	}
	pl.Lag, pl.Lost = queue.Lag(pl.Committed, pl.HasCommit, pl.LogStart, pl.End)
	if m, ok := d.assigned[po.Topic][po.Partition]; ok {
		pl.Member, pl.Host = m.id, m.host
	}
	return pl
}
