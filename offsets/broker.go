package offsets

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// TP names one partition of a topic.
type TP struct {
	Topic     string
	Partition int32
}

// ErrScope is wrapped by Positions when a request's scope names nothing
// to reset: a topic or partition the cluster does not have, or no topic
// for a group without commits. The API answers it 400.
var ErrScope = errors.New("invalid scope")

// ErrUnsupported is wrapped when a broker cannot do what was asked: a
// server too old for the call (named with its version), or a reader the
// broker will not move. The API answers it 501.
var ErrUnsupported = errors.New("not supported by the broker")

// Broker is the I/O a reset needs from one cluster: reads for the plan,
// reads and a commit for apply. It decides nothing; Plan and Apply do.
type Broker interface {
	// Broker is the broker's name in plans ("kafka").
	Broker() string
	// Cluster is the configured cluster name.
	Cluster() string
	// Describe returns the group's state and members.
	Describe(ctx context.Context, group string) (GroupInfo, error)
	// Positions reads the inputs of Resolve for every partition in req's
	// scope. It fails when a partition cannot be read, naming it.
	Positions(ctx context.Context, req Request) ([]Position, error)
	// Timestamps returns the timestamp of the first record at or after each
	// offset that the group's consumers will read, as far as it can read
	// them before ctx ends; a partition it could not read is missing from
	// the result. A zero time says there is no such record before the log
	// end (on Kafka: only transaction markers, or records of aborted
	// transactions for a read_committed reader, follow the offset).
	Timestamps(ctx context.Context, at map[TP]int64) map[TP]time.Time
	// Committed returns the group's committed offsets on parts; a partition
	// without a commit is missing from the result.
	Committed(ctx context.Context, group string, parts []TP) (map[TP]int64, error)
	// Commit commits offsets for the group and returns the error of each
	// partition the broker refused; the error is for the request as a
	// whole.
	Commit(ctx context.Context, group string, offsets map[TP]int64) (map[TP]error, error)
}

// PendingCounter is a Broker that counts itself the messages a reader has
// to read from a position: JetStream's num_pending honours the consumer's
// filter subjects, which a difference of sequences does not. MakePlan
// fills PendingAfter from it.
type PendingCounter interface {
	// PendingFrom returns, for each partition, the messages group would
	// have to read were it at the offset, as far as it can count them
	// before ctx ends; a partition it could not count is missing.
	PendingFrom(ctx context.Context, group string, at map[TP]int64) map[TP]int64
}

// GroupTimestamps is a Broker whose readers do not read every record from
// an offset (a JetStream consumer's filter subjects skip the rest):
// MakePlan asks it, not Timestamps, for the time of the record the group
// reads next.
type GroupTimestamps interface {
	// GroupTimestamps is Timestamps for what group reads.
	GroupTimestamps(ctx context.Context, group string, at map[TP]int64) map[TP]time.Time
}

// Pauser is a Broker whose readers the broker itself can pause (JetStream
// consumers): a paused reader is delivered nothing until it is resumed or
// its deadline passes, and may then be reset safely.
type Pauser interface {
	// Pause pauses group until until, which must be in the future
	// (ErrPauseInPast otherwise).
	Pause(ctx context.Context, group string, until time.Time) (PauseState, error)
	// Resume resumes group at once.
	Resume(ctx context.Context, group string) (PauseState, error)
	// PauseOf reads whether group is paused, and until when.
	PauseOf(ctx context.Context, group string) (PauseState, error)
}

// ConnectRestarter is a Broker whose cluster has Kafka Connect clusters
// working on it: it restarts a connector and its failed tasks, leaving the
// running ones alone.
type ConnectRestarter interface {
	// RestartConnector restarts connector of the Connect cluster connect
	// (its config name); a connector or Connect cluster it does not have
	// matches queue.ErrNotFound.
	RestartConnector(ctx context.Context, connect, connector string) (RestartState, error)
}

// RestartState is what Connect answered to a restart: the connector's
// state and each task's as the restart left them (RESTARTING for what it
// restarts); Restarted is false when Connect had nothing to restart.
type RestartState struct {
	Restarted bool           `json:"restarted"`
	State     string         `json:"state,omitempty"`
	Tasks     map[int]string `json:"tasks,omitempty"`
}

// PauseState is a reader's pause as the broker reports it.
type PauseState struct {
	Paused bool `json:"paused"`
	// Until is when the broker resumes it by itself; zero when not paused.
	Until time.Time `json:"pause_until,omitzero"`
}

// ErrPauseInPast is returned for a pause deadline that is not in the
// future: the broker would take it as a resume.
var ErrPauseInPast = errors.New("pause deadline is not in the future")

// TimestampTimeout bounds how long a plan waits to read the target
// records' timestamps: they are a help for the review, not worth a hanging
// plan.
const TimestampTimeout = 3 * time.Second

// MakePlan plans req on b. It changes nothing.
func MakePlan(ctx context.Context, b Broker, req Request, now time.Time) (Plan, error) {
	g, err := b.Describe(ctx, req.Group)
	if err != nil {
		return Plan{}, err
	}
	pos, err := b.Positions(ctx, req)
	if err != nil {
		return Plan{}, err
	}
	if req.To.Kind == Offset && len(pos) != 1 {
		return Plan{}, fmt.Errorf("%w: %s sets one partition, and the scope has %d: name it with --topic T:P", ErrSpec, req.To, len(pos))
	}
	p := Plan{
		Broker: b.Broker(), Cluster: b.Cluster(), Group: req.Group, Kind: KindOf(b), GroupState: g.State, Members: g.Members,
		To: req.To, Topics: req.Topics, Created: now.UTC(), Partitions: make([]PartitionPlan, 0, len(pos)),
	}
	if p.Members == nil {
		p.Members = []Member{}
	}
	at := map[TP]int64{}
	for _, ps := range pos {
		pp := Resolve(req.To, ps)
		p.Partitions = append(p.Partitions, pp)
		if next := nextRead(pp); next != nil && *next < pp.LogEnd {
			at[TP{pp.Topic, pp.Partition}] = *next
		}
	}
	tctx, cancel := context.WithTimeout(ctx, TimestampTimeout)
	defer cancel()
	var ts map[TP]time.Time
	if gt, ok := b.(GroupTimestamps); ok {
		ts = gt.GroupTimestamps(tctx, req.Group, at)
	} else {
		ts = b.Timestamps(tctx, at)
	}
	pendingAfter(tctx, b, req.Group, p.Partitions)
	for i := range p.Partitions {
		pp := &p.Partitions[i]
		next := nextRead(*pp)
		switch t, ok := ts[TP{pp.Topic, pp.Partition}]; {
		case next == nil:
		case ok && !t.IsZero():
			pp.TargetTimestamp = &t
		case ok, *next >= pp.LogEnd:
			pp.TimestampNote = NoteEndOfLog
		default:
			pp.TimestampNote = NoteUnknown
		}
		if req.To.Kind == Timestamp && pp.Warning == "" && pp.TargetTimestamp != nil && pp.TargetTimestamp.Before(req.To.Time) {
			pp.Warning = WarnOlderThanTime
		}
	}
	p.Seal()
	return p, nil
}

// WarnOlderThanTime is the warning of a timestamp target whose next record
// is older than the time asked: the broker's time index found an offset
// before it, as Kafka's does for a transaction marker, which carries the
// broker's clock rather than its records' times.
const WarnOlderThanTime = "the record at the target is older than the time asked: the log's time index points here " +
	"(on Kafka, at a transaction marker, stamped with the broker's clock; kafka-consumer-groups gives the same offset)"

// nextRead is the offset the group reads next after apply: the target, or
// the current commit of a partition left as it is.
func nextRead(pp PartitionPlan) *int64 {
	if pp.Target != nil {
		return pp.Target
	}
	return pp.Current
}

// pendingAfter fills each partition's PendingAfter when b counts pending
// messages itself.
func pendingAfter(ctx context.Context, b Broker, group string, parts []PartitionPlan) {
	pc, ok := b.(PendingCounter)
	if !ok {
		return
	}
	at := map[TP]int64{}
	for _, pp := range parts {
		if next := nextRead(pp); next != nil {
			at[TP{pp.Topic, pp.Partition}] = *next
		}
	}
	counts := pc.PendingFrom(ctx, group, at)
	for i := range parts {
		if n, ok := counts[TP{parts[i].Topic, parts[i].Partition}]; ok {
			parts[i].PendingAfter = &n
		}
	}
}
