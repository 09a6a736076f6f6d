package config

// Metrics granularities: the finest level at which consumer lag is
// exported.
const (
	GranularityPartition = "partition"
	GranularityTopic     = "topic"
	GranularityGroup     = "group"
)

// Metrics chooses which series /metrics exports, so a Prometheus (or a
// hosted one billed per series) pays only for what is graphed.
type Metrics struct {
	// Granularity is partition, topic or group.
	Granularity string `yaml:"granularity"`
}

func (m *Metrics) validate(p *problems) {
	switch m.Granularity {
	case GranularityPartition, GranularityTopic, GranularityGroup:
	default:
		p.add("metrics.granularity", "must be partition, topic or group, got %s", quoteScalar(m.Granularity))
	}
}
