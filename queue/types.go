package queue

import (
	"strconv"
	"strings"
	"time"
)

// Broker names the messaging system a cluster runs.
type Broker string

// The brokers queuewatch understands.
const (
	Kafka    Broker = "kafka"
	RabbitMQ Broker = "rabbitmq"
	NATS     Broker = "nats"
	// Outbox is a database's transactional outbox: the producer side.
	Outbox Broker = "outbox"
)

// Snapshot is everything one poll of one cluster learned. A snapshot is
// immutable once published: readers share it without locking.
type Snapshot struct {
	Broker  Broker
	Cluster string
	// Time is when the poll started; ages and lag seconds are relative to it.
	Time time.Time
	// Duration is how long the poll took.
	Duration time.Duration
	// Err is set when the poll failed as a whole; Partial is set when some
	// parts (a group, a vhost) failed and the rest is still valid.
	Err     error
	Partial []string

	Groups     []ConsumerGroup
	Partitions []PartitionOffsets
	Queues     []Queue
	DLQs       []DLQ

	// Kafka share groups (KIP-932).
	ShareGroups []ShareGroup
	// Kafka Streams applications' groups (KIP-1071).
	StreamsGroups []StreamsGroup
	// Kafka Connect connectors of the cluster's Connect clusters.
	Connectors []Connector

	// NATS JetStream: streams and their durable consumers.
	Streams   []Stream
	Consumers []StreamConsumer

	// Outbox sources: pending rows per table and CDC slot lag.
	OutboxTables []OutboxTable
	Slots        []ReplicationSlot

	// SQS accounts: queues, and what reading the account costs.
	SQSQueues []SQSQueue
	SQS       *SQSAccount

	// Kinesis accounts: streams, KCL applications (readers), read cost.
	KinesisStreams []KinesisStream
	KinesisApps    []KinesisApplication
	Kinesis        *KinesisAccount
	// Pub/Sub projects: subscriptions, and what the read learned.
	PubSubSubscriptions []PubSubSubscription
	PubSub              *PubSubProject

	// PolledBy names the replica that polled the broker when it was not
	// this process: a standby serves the snapshot the poll lease's holder
	// stored (collectors/standby). Empty when this process polled.
	PolledBy string `json:",omitempty"`
}

// LagSecondsPending reports whether some group's lag seconds are still being
// read: the first poll after a start publishes lag before them.
func (s *Snapshot) LagSecondsPending() bool {
	for i := range s.Groups {
		if s.Groups[i].LagSecondsPending() {
			return true
		}
	}
	return false
}

// Group returns the consumer group with the given name, if the snapshot has it.
func (s *Snapshot) Group(name string) (*ConsumerGroup, bool) {
	for i := range s.Groups {
		if s.Groups[i].Name == name {
			return &s.Groups[i], true
		}
	}
	return nil, false
}

// PartitionOffsets are the offsets of one Kafka partition, listed once per
// poll for the union of all topics that any group consumes.
type PartitionOffsets struct {
	Topic     string
	Partition int32
	// LogStart is the first offset still on the broker (earlier records were
	// deleted by retention).
	LogStart int64
	// End is the high watermark: the offset the next produced record gets.
	End int64
	// LastStable is the end for read_committed consumers: the first offset
	// of a still-open transaction, or End when there is none.
	LastStable int64
}

// GroupType distinguishes classic consumer groups from KIP-848 ones.
type GroupType string

// Group types as Kafka reports them.
const (
	GroupClassic  GroupType = "classic"
	GroupConsumer GroupType = "consumer"
)

// ConsumerGroup is one Kafka consumer group as of a poll.
type ConsumerGroup struct {
	Cluster  string
	Name     string
	State    string // Stable, Empty, PreparingRebalance, ...
	Protocol string // assignor, e.g. range, cooperative-sticky, uniform
	Type     GroupType
	Members  int
	// Err is why the group could not be fully read (authorization, timeout);
	// its partitions may be empty and its status is StatusError.
	Err string

	Partitions []PartitionLag

	// Status, StatusReason and ETA are filled by alerts evaluation over the
	// poll history; collectors leave them zero.
	Status       Status
	StatusReason string
	ETA          ETA
	// StatusSince is when the group's current non-ok condition began, as
	// the evaluation tracks it beyond its window (see Onset); zero when
	// the group is ok.
	StatusSince time.Time
	// Judged are the partitions the evaluation did not find ok, worst
	// first (by severity, then the size of the problem); Culprits are
	// those that made Status.
	Judged []PartitionStatus `json:",omitempty"`
	// Headroom is the shortest retention headroom over the group's lagging
	// partitions (collectors fill it; Where names the partition).
	Headroom Headroom `json:",omitzero"`
}

// TotalLag is the sum of lag over the group's partitions.
func (g *ConsumerGroup) TotalLag() int64 {
	var n int64
	for _, p := range g.Partitions {
		n += p.Lag
	}
	return n
}

// LagSecondsPending reports whether some partition's lag seconds are still
// being read, so that MaxLagSeconds is only a lower bound.
func (g *ConsumerGroup) LagSecondsPending() bool {
	for i := range g.Partitions {
		if g.Partitions[i].LagSecondsPending {
			return true
		}
	}
	return false
}

// MaxLagSeconds is the largest lag in seconds over the group's partitions.
func (g *ConsumerGroup) MaxLagSeconds() float64 {
	var m float64
	for _, p := range g.Partitions {
		m = max(m, p.LagSeconds)
	}
	return m
}

// TopicLag is a group's lag summed per topic.
type TopicLag struct {
	Topic         string
	Lag           int64
	Partitions    int
	Uncommitted   int   // partitions without a committed offset
	Lost          int64 // records the group never read because retention deleted them
	MaxLagSeconds float64
	// LagSecondsPending is set while some partition's lag seconds are
	// still being read.
	LagSecondsPending bool
}

// Topics sums the group's partitions per topic, in topic order of first
// appearance (partitions are kept sorted by topic, partition).
func (g *ConsumerGroup) Topics() []TopicLag {
	var out []TopicLag
	for _, p := range g.Partitions {
		if len(out) == 0 || out[len(out)-1].Topic != p.Topic {
			out = append(out, TopicLag{Topic: p.Topic})
		}
		t := &out[len(out)-1]
		t.Lag += p.Lag
		t.Partitions++
		t.Lost += p.Lost
		if !p.HasCommit {
			t.Uncommitted++
		}
		t.MaxLagSeconds = max(t.MaxLagSeconds, p.LagSeconds)
		t.LagSecondsPending = t.LagSecondsPending || p.LagSecondsPending
	}
	return out
}

// PartitionLag is one group's position on one partition. There is one per
// group-partition in a snapshot (100,000 for a large cluster, and a poll
// builds the next while the last is served), so fields are ordered to pack
// tightly.
type PartitionLag struct {
	Topic string
	// Committed is the group's committed offset: the next record it will
	// read. Meaningless when HasCommit is false.
	Committed int64
	// End is what lag was measured against: the high watermark, or the last
	// stable offset for read_committed groups.
	End      int64
	LogStart int64
	Lag      int64
	// Lost counts records between the committed offset and the log start:
	// deleted by retention before the group read them.
	Lost int64
	// LagSeconds is the age of the next record the group will read; 0 when
	// caught up. LagSecondsEstimated is set when it was interpolated from the
	// end-offset history because that record could not be fetched.
	// LagSecondsPending is set while that record's timestamp is still being
	// read (the first poll after a start publishes lag before it): LagSeconds
	// is then unknown, not 0, and is left out of metrics and shown as pending.
	LagSeconds float64
	// Member is the client assigned this partition, if any.
	Member string
	Host   string

	Partition           int32
	HasCommit           bool
	LagSecondsEstimated bool
	LagSecondsPending   bool
}

// Queue is one RabbitMQ queue as of a poll.
type Queue struct {
	Cluster   string
	VHost     string
	Name      string
	Type      string // classic, quorum, stream
	Policy    string
	Ready     int64
	Unacked   int64
	Consumers int
	// HeadMessageAge is the age of the oldest message when the broker knows
	// it (head_message_timestamp); HasHeadAge tells whether it does.
	HeadMessageAge time.Duration
	HasHeadAge     bool
	// DeadLetterExchange and DeadLetterRoutingKey are the effective
	// dead-letter settings (arguments win over policy).
	DeadLetterExchange   string
	DeadLetterRoutingKey string
	HasDeadLetter        bool
	Arguments            map[string]any
	// MessageTTL, MaxLength and MaxLengthBytes are the effective limits
	// (the lower of argument and policy, as the broker applies them; 0
	// for none); DropHead is set when reaching a length limit drops the
	// head (overflow drop-head, the default) rather than refusing
	// publishes.
	MessageTTL     time.Duration `json:",omitempty"`
	MaxLength      int64         `json:",omitempty"`
	MaxLengthBytes int64         `json:",omitempty"`
	DropHead       bool          `json:",omitempty"`
	// Counters are the management API's message_stats of the queue, which
	// its rates come from (HasCounters false when the broker sent none:
	// a queue with no traffic yet, or statistics turned off).
	Counters    MessageCounters
	HasCounters bool
	// CountersAt is when Counters were read, zero when at the poll's time.
	// A poll that takes depths from rabbitmq_prometheus carries the last
	// listing's counters and time, so rates are deltas between the reads
	// that produced them.
	CountersAt time.Time
	// Utilisation is consumer_utilisation: the share of time the queue
	// could deliver to its consumers at once (0 to 1); HasUtilisation is
	// false when the broker does not say (no consumers, or a quorum queue
	// on some versions).
	Utilisation    float64
	HasUtilisation bool

	// Status, StatusReason, StatusSince and ETA are filled by the status
	// evaluation over the poll history (alerts); collectors leave them
	// zero. A queue that is a DLQ is ok with DLQReason.
	Status       Status
	StatusReason string
	StatusSince  time.Time
	ETA          ETA
}

// MessageCounters are a RabbitMQ queue's lifetime message counts as the
// management API's message_stats give them. They restart from zero when
// the queue is re-created or its node restarts.
type MessageCounters struct {
	// Published is publish: messages routed into the queue.
	Published int64
	// Consumed is ack + deliver_no_ack + get_no_ack: messages consumers
	// took off the queue for good (acknowledged, or taken without ack).
	Consumed int64
	// Delivered is deliver_get: every delivery and get, redeliveries too.
	Delivered int64
}

// Messages is ready plus unacknowledged messages.
func (q *Queue) Messages() int64 { return q.Ready + q.Unacked }

// DLQDetection records why a queue or topic is considered a DLQ, in order of
// trust.
type DLQDetection string

// Ways a DLQ is found.
const (
	DetectedConfig   DLQDetection = "config"
	DetectedTopology DLQDetection = "topology"
	DetectedName     DLQDetection = "name"
)

// DLQ is a dead-letter queue (RabbitMQ queue or Kafka topic) and its depth.
type DLQ struct {
	Broker  Broker
	Cluster string
	VHost   string // empty for Kafka
	Name    string
	// Sources are the queues or topics that dead-letter into this DLQ.
	Sources   []string
	Detection DLQDetection
	// Messages is the depth: messages neither replayed nor removed.
	Messages int64
	// OldestAge is the age of the oldest message; HasOldestAge tells whether
	// it is known, and OldestAgeBasis how it was obtained (the zero value
	// is exact).
	OldestAge      time.Duration
	HasOldestAge   bool
	OldestAgeBasis AgeBasis
	Err            string
	// AtLeast marks Messages as a lower bound: what a count saw (a
	// Pub/Sub DLQ subscription pulled and given back without Cloud
	// Monitoring), shown as "≥ N".
	AtLeast bool
	// Read says when Messages was read, for a source that reads its
	// counts less often than it is polled (an SQS account); the zero
	// value for one read at every poll.
	Read DepthRead
}

// AgeBasis says how a DLQ's oldest age was obtained. Reading the head
// message of some queues would change them (a RabbitMQ quorum queue
// counts every return as a delivery), so some ages are estimates.
type AgeBasis string

// How an oldest age is known.
const (
	// AgeExact is read from the broker: a record or message timestamp.
	AgeExact AgeBasis = ""
	// AgeBrowsed is the head message's dead-letter time (or timestamp) as
	// the last browse of the DLQ read it; the head may have changed since
	// without the depth showing it.
	AgeBrowsed AgeBasis = "browsed"
	// AgeBacklog is from when polls first saw the current backlog: the
	// last poll that found the queue empty (the oldest message arrived
	// after it, so the age is at most one poll interval too high), or,
	// for a backlog already there when queuewatch began watching, that
	// first poll (a lower bound: the oldest message may be much older).
	AgeBacklog AgeBasis = "backlog"
)

// Estimated reports whether the age is an estimate rather than read from
// the broker.
func (b AgeBasis) Estimated() bool { return b != AgeExact }

// maxSourceLabel bounds Source in bytes. A DLQ fed by 5,000 queues would
// otherwise carry a ~45 KB label value on every one of its series, which
// Prometheus stores and Mimir refuses (2,048 bytes by default).
const maxSourceLabel = 256

// Source is the DLQ's sources joined by commas, for a metric label and the
// pages: all of them when they fit in 256 bytes, else the first ones that
// fit and "+N more". Sources are sorted, so the value is stable from poll
// to poll; len(Sources) has the count.
func (d *DLQ) Source() string {
	all := strings.Join(d.Sources, ",")
	if len(all) <= maxSourceLabel {
		return all
	}
	// Leave room for the longest suffix; the first name is always kept.
	budget := maxSourceLabel - len(" +1000000 more")
	n, size := 1, len(d.Sources[0])
	for ; n < len(d.Sources) && size+1+len(d.Sources[n]) <= budget; n++ {
		size += 1 + len(d.Sources[n])
	}
	return strings.Join(d.Sources[:n], ",") + " +" + strconv.Itoa(len(d.Sources)-n) + " more"
}

// SourceStatus is the health of one source, as the scheduler sees it.
type SourceStatus struct {
	Broker      Broker
	Cluster     string
	Up          bool
	Polled      bool // at least one poll finished
	LastPoll    time.Time
	LastSuccess time.Time
	LastError   string
	// Partial lists what the last good poll could not read.
	Partial  []string
	Duration time.Duration
	// PolledBy is the replica whose snapshot a standby serves (see
	// Snapshot.PolledBy); empty when this process polls the source.
	PolledBy string
}

// DLQPoint is one poll's depth of a DLQ.
type DLQPoint struct {
	At       time.Time
	Messages int64
}
