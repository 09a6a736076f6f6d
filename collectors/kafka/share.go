package kafka

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/queuewatch/queuewatch/queue"
)

// shareType is a share group's type in a ListGroups answer.
const shareType = "share"

// pollShares builds the snapshot's share groups; alerts evaluation judges
// their statuses against the previous poll.
func pollShares(cluster string, snap *queue.Snapshot, names []string, r shareRead, offsets offsetTable) {
	for _, name := range names {
		g := buildShareGroup(cluster, name, r, offsets)
		if g.Err != "" {
			snap.Partial = append(snap.Partial, "share group "+name+": "+g.Err)
		}
		snap.ShareGroups = append(snap.ShareGroups, g)
	}
}

// shareRead is what describing the watched share groups learned: their
// members (ShareGroupDescribe) and start offsets and lag
// (DescribeShareGroupOffsets), each batched per coordinator. A group
// missing from an answer gets the call's error.
type shareRead struct {
	groups     kadm.DescribedShareGroups
	groupsErr  error
	offsets    kadm.DescribedShareGroupsOffsets
	offsetsErr error
}

// describeShare reads the share groups named; it makes no request when
// there are none, so a broker without share groups (Kafka 4.0, where they
// are off by default) is never asked about them.
func (s *Source) describeShare(ctx context.Context, names []string) shareRead {
	if len(names) == 0 {
		return shareRead{}
	}
	var r shareRead
	r.groups, r.groupsErr = s.adm.DescribeShareGroups(ctx, names...)
	r.offsets, r.offsetsErr = s.adm.DescribeShareGroupOffsets(ctx, names...)
	return r
}

// topics is every topic the share groups read: those with a start offset
// and those assigned; their end offsets are listed with the consumer
// groups' topics.
func (r shareRead) topics() []string {
	var out []string
	for _, g := range r.offsets {
		for t := range g.Offsets {
			out = append(out, t)
		}
	}
	for _, g := range r.groups {
		for _, m := range g.Members {
			out = append(out, m.Assignment.Topics()...)
		}
	}
	return out
}

// buildShareGroup builds one share group from what the poll read.
func buildShareGroup(cluster, name string, r shareRead, offsets offsetTable) queue.ShareGroup {
	g := queue.ShareGroup{Cluster: cluster, Name: name}
	d, ok := r.groups[name]
	switch {
	case !ok:
		g.Err = "describe: " + errString(describeErr(r.groupsErr))
	case d.Err != nil:
		g.Err = "describe: " + errString(d.Err)
	}
	g.State, g.Assignor = d.GroupState, d.Assignor
	assigned := map[queue.TopicPartition]bool{}
	for _, m := range d.Members {
		sm := queue.ShareMember{ID: m.MemberID, ClientID: m.ClientID, Host: clientHost(m.ClientHost)}
		for _, t := range m.Assignment.Sorted() {
			sm.Assigned = append(sm.Assigned, queue.TopicPartitions{Topic: t.Topic, Partitions: t.Partitions})
			for _, p := range t.Partitions {
				assigned[queue.TopicPartition{Topic: t.Topic, Partition: p}] = true
			}
		}
		g.Members = append(g.Members, sm)
	}

	o, ok := r.offsets[name]
	switch {
	case !ok:
		g.Err = cmp.Or(g.Err, "describe offsets: "+errString(describeErr(r.offsetsErr)))
	case o.Err != nil:
		g.Err = cmp.Or(g.Err, "describe offsets: "+errString(o.Err))
	}
	o.Offsets.Each(func(so kadm.ShareOffset) {
		delete(assigned, queue.TopicPartition{Topic: so.Topic, Partition: so.Partition})
		g.Partitions = append(g.Partitions, sharePartition(so, offsets))
	})
	// A partition assigned but never fetched has no start offset yet.
	for tp := range assigned {
		g.Partitions = append(g.Partitions, queue.SharePartition{Topic: tp.Topic, Partition: tp.Partition, End: offsets[tp.Topic][tp.Partition].End})
	}
	slices.SortFunc(g.Partitions, func(a, b queue.SharePartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return g
}

// sharePartition is one partition's start offset and lag: the broker's lag
// (KIP-1226) when it sends one, else end − start offset, an upper bound
// (records acknowledged past the start offset count too).
func sharePartition(so kadm.ShareOffset, offsets offsetTable) queue.SharePartition {
	p := queue.SharePartition{Topic: so.Topic, Partition: so.Partition, Start: so.StartOffset, LagSource: queue.LagFromBroker}
	end, hasEnd := offsets[so.Topic][so.Partition]
	p.End = end.End
	switch {
	case so.Err != nil:
		p.Err = errString(so.Err)
		return p
	case so.StartOffset < 0:
		return p
	}
	p.Initialized = true
	switch {
	case so.Lag >= 0:
		p.Lag = so.Lag
	case hasEnd:
		p.Lag, p.LagSource = max(0, end.End-so.StartOffset), queue.LagEstimated
	default:
		p.Err = errString(errors.New("no end offset for the lag estimate"))
	}
	return p
}
