package kafka

import (
	"cmp"
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/queue"
)

// streamsType is a streams group's type in a ListGroups answer (KIP-1071).
// The classic DescribeGroups answers GROUP_ID_NOT_FOUND for such a group,
// so it is described with StreamsGroupDescribe instead. A Kafka Streams
// application on the classic protocol lists as a classic group and stays
// a consumer group.
const streamsType = "streams"

// streamsRead is what StreamsGroupDescribe answered for the watched streams
// groups, by name; a group missing from it gets err (its shard's error).
type streamsRead struct {
	groups map[string]kmsg.StreamsGroupDescribeResponseGroup
	errs   map[string]error
}

// describeStreams describes the streams groups named, batched per
// coordinator; it makes no request when there are none, so a broker
// without streams groups (Kafka 4.0) is never asked about them.
func (s *Source) describeStreams(ctx context.Context, names []string) streamsRead {
	r := streamsRead{groups: map[string]kmsg.StreamsGroupDescribeResponseGroup{}, errs: map[string]error{}}
	if len(names) == 0 {
		return r
	}
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = names
	for _, shard := range s.cl.RequestSharded(ctx, req) {
		if shard.Err != nil {
			for _, g := range shard.Req.(*kmsg.StreamsGroupDescribeRequest).Groups {
				r.errs[g] = shard.Err
			}
			continue
		}
		for _, g := range shard.Resp.(*kmsg.StreamsGroupDescribeResponse).Groups {
			r.groups[g.Group] = g
		}
	}
	return r
}

// topics is every topic the streams groups read: the source topics of
// their subtopologies, repartition topics included. Their end offsets are
// listed with the consumer groups' topics (committed ones are there too).
func (r streamsRead) topics() []string {
	var out []string
	for _, g := range r.groups {
		if g.Topology == nil {
			continue
		}
		for _, st := range g.Topology.Subtopologies {
			out = append(out, st.SourceTopics...)
			for _, t := range st.RepartitionSourceTopics {
				out = append(out, t.Topic)
			}
		}
	}
	return out
}

// pollStreams builds the snapshot's streams groups; alerts evaluation
// judges their statuses against the previous poll.
func pollStreams(opts Options, snap *queue.Snapshot, names []string, r streamsRead, committed kadm.FetchOffsetsResponses, offsets offsetTable) {
	for _, name := range names {
		g := buildStreamsGroup(opts, name, r, committed[name], offsets)
		if g.Err != "" {
			snap.Partial = append(snap.Partial, "streams group "+name+": "+g.Err)
		}
		snap.StreamsGroups = append(snap.StreamsGroups, g)
	}
}

// buildStreamsGroup builds one streams group from its description and its
// committed offsets.
func buildStreamsGroup(opts Options, name string, r streamsRead, f kadm.FetchOffsetsResponse, offsets offsetTable) queue.StreamsGroup {
	g := queue.StreamsGroup{Cluster: opts.Cluster.Name(), Name: name}
	d, ok := r.groups[name]
	switch {
	case !ok:
		g.Err = "describe: " + errString(describeErr(r.errs[name]))
	case d.ErrorCode != 0:
		g.Err = "describe: " + errString(kerr.ErrorForCode(d.ErrorCode))
	}
	g.State, g.Epoch, g.AssignmentEpoch = d.State, d.Epoch, d.AssignmentEpoch
	if d.AssignorName != nil {
		g.Assignor = *d.AssignorName
	}
	for _, m := range d.Members {
		g.Members = append(g.Members, streamsMember(m))
	}
	internal := map[string]bool{}
	if d.Topology != nil {
		for _, st := range d.Topology.Subtopologies {
			sub := subtopology(st)
			for _, t := range sub.RepartitionSource {
				internal[t] = true
			}
			g.Subtopologies = append(g.Subtopologies, sub)
		}
	}
	if f.Err != nil {
		g.Err = cmp.Or(g.Err, "fetch offsets: "+errString(f.Err))
		return g
	}
	g.Partitions = streamsPartitions(opts, g.Subtopologies, internal, f, offsets)
	return g
}

func streamsMember(m kmsg.StreamsGroupDescribeResponseGroupMember) queue.StreamsMember {
	sm := queue.StreamsMember{
		ID: m.MemberID, ProcessID: m.ProcessID, ClientID: m.ClientID, Host: clientHost(m.ClientHost),
		Active: streamsTasks(m.Assignment.ActiveTasks), Standby: streamsTasks(m.Assignment.StandbyTasks),
		Warmup: streamsTasks(m.Assignment.WarmupTasks),
	}
	if m.InstanceID != nil {
		sm.InstanceID = *m.InstanceID
	}
	return sm
}

func streamsTasks(ts []kmsg.TaskIDs) []queue.StreamsTasks {
	var out []queue.StreamsTasks
	for _, t := range ts {
		ps := slices.Clone(t.Partitions)
		slices.Sort(ps)
		out = append(out, queue.StreamsTasks{Subtopology: t.SubtopologyID, Partitions: ps})
	}
	slices.SortFunc(out, func(a, b queue.StreamsTasks) int { return cmp.Compare(a.Subtopology, b.Subtopology) })
	return out
}

func subtopology(st kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology) queue.Subtopology {
	sub := queue.Subtopology{ID: st.SubtopologyID, SourceTopics: st.SourceTopics, RepartitionSink: st.RepartitionSinkTopics}
	for _, t := range st.RepartitionSourceTopics {
		sub.RepartitionSource = append(sub.RepartitionSource, t.Topic)
	}
	for _, t := range st.StateChangelogTopics {
		sub.Changelogs = append(sub.Changelogs, t.Topic)
	}
	return sub
}

// streamsPartitions is the lag of every partition the group reads or
// committed on, as a consumer group's (a partition with no commit counts
// from the log start), repartition topics marked internal.
func streamsPartitions(opts Options, subs []queue.Subtopology, internal map[string]bool, f kadm.FetchOffsetsResponse, offsets offsetTable) []queue.StreamsPartition {
	topics := map[string]bool{}
	for t := range f.Fetched {
		topics[t] = true
	}
	for _, sub := range subs {
		for _, t := range append(slices.Clone(sub.SourceTopics), sub.RepartitionSource...) {
			topics[t] = true
		}
	}
	var out []queue.StreamsPartition
	for t := range topics {
		for _, po := range offsets[t] {
			pl := partitionLag(opts, po, f, described{})
			p := queue.StreamsPartition{Topic: t, Partition: po.Partition, Internal: internal[t], Committed: -1, End: pl.End, Lag: pl.Lag}
			if pl.HasCommit {
				p.Committed = pl.Committed
			}
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b queue.StreamsPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
