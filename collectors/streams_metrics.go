package collectors

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/queue"
)

// Kafka streams group families (KIP-1071), named like the share groups'.
// A streams group commits offsets like a consumer group, so its lag is a
// consumer group's (end offset − committed); its partitions carry whether
// the topic is one of the application's repartition topics, whose lag is
// work between its own subtopologies rather than input not yet read.
var (
	descStreamsLag       = desc("kafka_streamsgroup_lag", "Records the streams group has yet to process on a partition of its source topics: end offset minus committed offset (internal=\"true\" for its repartition topics).", append(partitionLabels, "internal")...)
	descStreamsCommitted = desc("kafka_streamsgroup_committed_offset", "The streams group's committed offset on the partition.", partitionLabels...)
	descStreamsMembers   = desc("kafka_streamsgroup_members", "Members (stream threads) currently in the streams group.", groupLabels...)
	descStreamsTasks     = desc("kafka_streamsgroup_tasks", "Tasks assigned to the streams group's members, by kind (active, standby, warmup).", append(groupLabels, "kind")...)
	descStreamsStatus    = statusDesc("kafka_streamsgroup_status", "streams group", groupLabels...)

	streamsFamilies = []*family{descStreamsLag, descStreamsCommitted, descStreamsMembers, descStreamsTasks, descStreamsStatus}
)

// describeStreams sends the streams group descriptors.
func describeStreams(ch chan<- *prometheus.Desc) {
	for _, f := range streamsFamilies {
		ch <- f.desc
	}
}

// collectStreams emits the snapshot's streams groups. A group that could
// not be read has only its status series (error), like a consumer group;
// a partition without a commit has a lag but no committed offset.
func collectStreams(ch sink, snap *queue.Snapshot) {
	cl := snap.Cluster
	for i := range snap.StreamsGroups {
		g := &snap.StreamsGroups[i]
		emitStatus(ch, descStreamsStatus, g.EffectiveStatus(), cl, g.Name)
		if g.Err != "" {
			continue
		}
		ch.gauge(descStreamsMembers, float64(len(g.Members)), cl, g.Name)
		active, standby, warmup := g.Tasks()
		ch.gauge(descStreamsTasks, float64(active), cl, g.Name, "active")
		ch.gauge(descStreamsTasks, float64(standby), cl, g.Name, "standby")
		ch.gauge(descStreamsTasks, float64(warmup), cl, g.Name, "warmup")
		for _, p := range g.Partitions {
			part := strconv.Itoa(int(p.Partition))
			ch.gauge(descStreamsLag, float64(p.Lag), cl, g.Name, p.Topic, part, strconv.FormatBool(p.Internal))
			if p.Committed >= 0 {
				ch.gauge(descStreamsCommitted, float64(p.Committed), cl, g.Name, p.Topic, part)
			}
		}
	}
}
