package collectors

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/queue"
)

// Kafka share group families (KIP-932). A share group is named by cluster
// and group like a consumer group; its partitions carry where their lag
// comes from, since a broker before KIP-1226 (Kafka 4.2) sends none and
// the estimate (end − start offset) is an upper bound.
var (
	descShareLag     = desc("kafka_sharegroup_lag", "Records the share group has yet to finish on the partition: the broker's share-partition lag (lag_source=\"broker\", KIP-1226) or end offset minus start offset (lag_source=\"estimate\", an upper bound).", append(partitionLabels, "lag_source")...)
	descShareStart   = desc("kafka_sharegroup_start_offset", "The share-partition start offset: every record before it was accepted, or archived after a reject or the delivery limit.", partitionLabels...)
	descShareMembers = desc("kafka_sharegroup_members", "Members currently in the share group.", groupLabels...)
	descShareStatus  = statusDesc("kafka_sharegroup_status", "share group", groupLabels...)

	shareFamilies = []*family{descShareLag, descShareStart, descShareMembers, descShareStatus}
)

// describeShare sends the share group descriptors.
func describeShare(ch chan<- *prometheus.Desc) {
	for _, f := range shareFamilies {
		ch <- f.desc
	}
}

// collectShare emits the snapshot's share groups. A group that could not
// be read has only its status series (error), like a consumer group; a
// partition no member fetched yet has no start offset, so no series.
func collectShare(ch sink, snap *queue.Snapshot) {
	cl := snap.Cluster
	for i := range snap.ShareGroups {
		g := &snap.ShareGroups[i]
		emitStatus(ch, descShareStatus, g.EffectiveStatus(), cl, g.Name)
		if g.Err != "" {
			continue
		}
		ch.gauge(descShareMembers, float64(len(g.Members)), cl, g.Name)
		for _, p := range g.Partitions {
			if !p.Initialized || p.Err != "" {
				continue
			}
			part := strconv.Itoa(int(p.Partition))
			ch.gauge(descShareLag, float64(p.Lag), cl, g.Name, p.Topic, part, string(p.LagSource))
			ch.gauge(descShareStart, float64(p.Start), cl, g.Name, p.Topic, part)
		}
	}
}
