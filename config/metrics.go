package config

// Metrics granularities: the finest level at which consumer lag is
// exported.
const (
	GranularityPartition = "partition"
	GranularityTopic     = "topic"
	GranularityGroup     = "group"
)

// Metrics chooses which series /metrics exports, so a Prometheus (or a
// hosted one billed per series) pays only for what is graphed. The
// granularity sets the level of the lag families; the booleans add
// per-partition families that most users never graph and that cost one
// series per group-partition (or per partition) each. An opt-in family is
// exported at every granularity: asking for it is explicit.
type Metrics struct {
	// Granularity is partition, topic or group.
	//   - partition: lag per group-partition, lag and lag seconds per group
	//     and topic, and the group aggregates.
	//   - topic: lag and lag seconds per group and topic, and each group's
	//     status: one series per group-topic for each, what a budget allows.
	//   - group: group aggregates only (total lag, max lag seconds, status,
	//     members, info, catch-up ETA).
	Granularity string `yaml:"granularity"`
	// CommittedOffsets exports queuewatch_kafka_consumergroup_committed_offset
	// per group-partition.
	CommittedOffsets bool `yaml:"committed_offsets"`
	// PartitionOffsets exports queuewatch_kafka_partition_high_watermark,
	// _log_start_offset and _last_stable_offset per partition.
	PartitionOffsets bool `yaml:"partition_offsets"`
	// PartitionLagSeconds exports queuewatch_kafka_consumergroup_lag_seconds
	// per group-partition; without it lag seconds are exported per group
	// and topic (the worst partition's).
	PartitionLagSeconds bool `yaml:"partition_lag_seconds"`
	// CommitGaps exports queuewatch_kafka_consumergroup_uncommitted_partitions
	// and queuewatch_kafka_consumergroup_lost_messages per group and topic.
	CommitGaps bool `yaml:"commit_gaps"`
}

// PerPartition reports whether lag is exported per group-partition.
func (m Metrics) PerPartition() bool { return m.Granularity == GranularityPartition }

// PerTopic reports whether lag and lag seconds are exported per group and
// topic (the partition and topic granularities).
func (m Metrics) PerTopic() bool { return m.Granularity != GranularityGroup }

// GroupDetails reports whether each group's members, info, catch-up ETA and
// max lag seconds are exported. The topic granularity leaves them out: its
// budget is one series per group-topic for lag and for lag seconds, and
// max lag seconds is their max by (cluster, group).
func (m Metrics) GroupDetails() bool { return m.Granularity != GranularityTopic }

func (m *Metrics) validate(p *problems) {
	switch m.Granularity {
	case GranularityPartition, GranularityTopic, GranularityGroup:
	default:
		p.add("metrics.granularity", "must be partition, topic or group, got %s", quoteScalar(m.Granularity))
	}
}
