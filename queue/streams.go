package queue

import (
	"net/url"
	"time"
)

// StreamsGroup is one Kafka Streams application's group under the streams
// rebalance protocol (KIP-1071, group type "streams") as of a poll. The
// broker assigns it tasks, not partitions: a task is one partition of one
// subtopology, active on one member and maybe standby or warming up on
// others. Its members commit offsets like a consumer group's, on the
// source topics of its subtopologies, repartition topics included.
type StreamsGroup struct {
	Cluster string
	Name    string
	// State is the broker's: Empty, NotReady, Assigning, Reconciling,
	// Stable or Dead.
	State string
	// Epoch is the group epoch and AssignmentEpoch the target
	// assignment's: they differ while the broker computes an assignment.
	Epoch, AssignmentEpoch int32
	Assignor               string
	Members                []StreamsMember
	Subtopologies          []Subtopology
	// Err is why the group could not be fully read; its status is then
	// StatusError.
	Err string

	// Partitions are the source partitions with their lag, sorted by
	// topic, partition.
	Partitions []StreamsPartition

	// Status and StatusReason are the group's status judged against the
	// previous poll, filled by alerts evaluation.
	Status       Status
	StatusReason string
	// StatusSince is when the current non-ok condition began (see Onset),
	// filled by alerts evaluation; zero when ok.
	StatusSince time.Time
}

// StreamsMember is one stream thread of an application instance: Kafka
// Streams joins the group once per thread, and the threads of one
// instance share a ProcessID.
type StreamsMember struct {
	ID         string
	ProcessID  string
	ClientID   string
	Host       string
	InstanceID string // static membership, else ""
	// Active, Standby and Warmup are the member's tasks by subtopology.
	Active, Standby, Warmup []StreamsTasks
}

// StreamsTasks are the tasks of one subtopology: one per partition.
type StreamsTasks struct {
	Subtopology string
	Partitions  []int32
}

// Subtopology is one independent part of the application's topology,
// with the topics it reads (its source topics, repartition topics among
// them) and writes for the next subtopology.
type Subtopology struct {
	ID                string
	SourceTopics      []string
	RepartitionSource []string // repartition topics it reads
	RepartitionSink   []string // repartition topics it writes
	Changelogs        []string // its state stores' changelog topics
}

// StreamsPartition is the group's position on one partition of a source
// topic.
type StreamsPartition struct {
	Topic     string
	Partition int32
	// Internal marks a repartition topic: the application writes it
	// itself, so its lag is work in flight between subtopologies.
	Internal bool
	// Committed is -1 before the group's first commit on the partition.
	Committed int64
	End       int64
	Lag       int64
	Err       string
}

// TotalLag is the sum of the group's partition lags.
func (g *StreamsGroup) TotalLag() int64 {
	var n int64
	for _, p := range g.Partitions {
		n += p.Lag
	}
	return n
}

// Tasks counts the group's active, standby and warm-up tasks.
func (g *StreamsGroup) Tasks() (active, standby, warmup int) {
	for _, m := range g.Members {
		active += countTasks(m.Active)
		standby += countTasks(m.Standby)
		warmup += countTasks(m.Warmup)
	}
	return active, standby, warmup
}

func countTasks(ts []StreamsTasks) int {
	n := 0
	for _, t := range ts {
		n += len(t.Partitions)
	}
	return n
}

// Processes is how many application instances (distinct process ids) the
// members belong to.
func (g *StreamsGroup) Processes() int {
	seen := map[string]bool{}
	for _, m := range g.Members {
		seen[m.ProcessID] = true
	}
	return len(seen)
}

// EffectiveStatus is the status g shows everywhere (see EffectiveStatus).
func (g *StreamsGroup) EffectiveStatus() Status { return EffectiveStatus(g.Err, g.Status) }

// EffectiveReason is the sentence that goes with g's EffectiveStatus.
func (g *StreamsGroup) EffectiveReason() string { return EffectiveReason(g.Err, g.StatusReason) }

// Reader is g in the shape every reader shares: its backlog is its lag
// over every source partition, repartition topics included (records there
// still wait for the next subtopology); queuewatch reads no record's age
// for it, so it has no lag age.
func (g *StreamsGroup) Reader() Reader {
	r := Reader{
		Broker: Kafka, Cluster: g.Cluster, Name: g.Name, Title: "streams " + g.Name,
		Status: g.EffectiveStatus(), Reason: g.EffectiveReason(), StatusSince: g.StatusSince,
		Backlog: g.TotalLag(), BacklogUnit: UnitMessages, BacklogKnown: true,
		LagBasis: LagUnknown, Members: len(g.Members), Err: g.Err,
		Page: StreamsGroupPage(g.Cluster, g.Name),
	}
	return r.known()
}

// StreamsGroupPage is the path of a Kafka streams group's page.
func StreamsGroupPage(cluster, group string) string {
	return "/kafka/" + url.PathEscape(cluster) + "/streams-groups/" + url.PathEscape(group)
}

// StreamsGroup returns the streams group with the given name, if the
// snapshot has it.
func (s *Snapshot) StreamsGroup(name string) (*StreamsGroup, bool) {
	for i := range s.StreamsGroups {
		if s.StreamsGroups[i].Name == name {
			return &s.StreamsGroups[i], true
		}
	}
	return nil, false
}
