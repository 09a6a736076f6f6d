package queue

import (
	"net/url"
	"time"
)

// ShareGroup is one Kafka share group (KIP-932, "queues for Kafka") as of a
// poll. Its members share partitions: records are acquired, acknowledged
// and redelivered one by one, so a share group has no committed offset per
// partition but a share-partition start offset (SPSO), below which every
// record is done with (accepted, or archived after a reject or the
// delivery limit).
type ShareGroup struct {
	Cluster  string
	Name     string
	State    string // Stable, Empty, Dead, ...
	Assignor string
	Members  []ShareMember
	// Err is why the group could not be fully read; its partitions may be
	// empty and its status is StatusError.
	Err string

	// Partitions are sorted by topic, partition.
	Partitions []SharePartition

	// Status and StatusReason are the group's status judged against the
	// previous poll, filled by alerts evaluation.
	Status       Status
	StatusReason string
	// StatusSince is when the current non-ok condition began (see Onset),
	// filled by alerts evaluation; zero when ok.
	StatusSince time.Time
}

// ShareMember is one consumer of a share group and what it is assigned.
type ShareMember struct {
	ID       string
	ClientID string
	Host     string
	Assigned []TopicPartitions
}

// TopicPartitions are some partitions of one topic.
type TopicPartitions struct {
	Topic      string
	Partitions []int32
}

// LagSource says where a share partition's lag comes from.
type LagSource string

// Lag sources. The broker's lag (KIP-1226, Kafka 4.2 and later) leaves
// out records already acknowledged past the start offset; the estimate,
// end offset − start offset, counts them too, so it is an upper bound.
const (
	LagFromBroker LagSource = "broker"
	LagEstimated  LagSource = "estimate"
)

// SharePartition is a share group's position on one partition.
type SharePartition struct {
	Topic     string
	Partition int32
	// Initialized is false until a member first fetched the partition:
	// the broker then has no start offset, and Start and Lag mean nothing.
	Initialized bool
	// Start is the share-partition start offset: every record before it
	// is done with.
	Start int64
	// End is the partition's high watermark when the poll read it.
	End       int64
	Lag       int64
	LagSource LagSource
	Err       string
}

// TotalLag is the sum of lag over the group's initialised partitions.
func (g *ShareGroup) TotalLag() int64 {
	var n int64
	for _, p := range g.Partitions {
		if p.Initialized {
			n += p.Lag
		}
	}
	return n
}

// LagEstimated reports whether some partition's lag is an estimate.
func (g *ShareGroup) LagEstimated() bool {
	for _, p := range g.Partitions {
		if p.Initialized && p.LagSource == LagEstimated {
			return true
		}
	}
	return false
}

// EffectiveStatus is the status g shows everywhere (see EffectiveStatus).
func (g *ShareGroup) EffectiveStatus() Status { return EffectiveStatus(g.Err, g.Status) }

// EffectiveReason is the sentence that goes with g's EffectiveStatus.
func (g *ShareGroup) EffectiveReason() string { return EffectiveReason(g.Err, g.StatusReason) }

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Reader is g in the shape every reader shares: its backlog is its lag,
// and Kafka tells no share partition's age, so it has no lag age.
func (g *ShareGroup) Reader() Reader {
	r := Reader{
		Broker: Kafka, Cluster: g.Cluster, Name: g.Name, Title: "share " + g.Name,
		Status: g.EffectiveStatus(), Reason: g.EffectiveReason(), StatusSince: g.StatusSince,
		Backlog: g.TotalLag(), BacklogUnit: UnitMessages, BacklogKnown: true,
		LagBasis: LagUnknown, Members: len(g.Members), Err: g.Err,
		Page: ShareGroupPage(g.Cluster, g.Name),
	}
	return r.known()
}

// ShareGroupPage is the path of a Kafka share group's page.
func ShareGroupPage(cluster, group string) string {
	return "/kafka/" + url.PathEscape(cluster) + "/share-groups/" + url.PathEscape(group)
}

// ShareGroup returns the share group with the given name, if the snapshot
// has it.
func (s *Snapshot) ShareGroup(name string) (*ShareGroup, bool) {
	for i := range s.ShareGroups {
		if s.ShareGroups[i].Name == name {
			return &s.ShareGroups[i], true
		}
	}
	return nil, false
}
