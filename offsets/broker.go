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
	// offset, as far as it can read them before ctx ends; a partition it
	// could not read is missing from the result.
	Timestamps(ctx context.Context, at map[TP]int64) map[TP]time.Time
	// Committed returns the group's committed offsets on parts; a partition
	// without a commit is missing from the result.
	Committed(ctx context.Context, group string, parts []TP) (map[TP]int64, error)
	// Commit commits offsets for the group and returns the error of each
	// partition the broker refused; the error is for the request as a
	// whole.
	Commit(ctx context.Context, group string, offsets map[TP]int64) (map[TP]error, error)
}

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
	ts := b.Timestamps(tctx, at)
	for i := range p.Partitions {
		pp := &p.Partitions[i]
		next := nextRead(*pp)
		switch t, ok := ts[TP{pp.Topic, pp.Partition}]; {
		case next == nil:
		case ok:
			pp.TargetTimestamp = &t
		case *next >= pp.LogEnd:
			pp.TimestampNote = NoteEndOfLog
		default:
			pp.TimestampNote = NoteUnknown
		}
	}
	p.Seal()
	return p, nil
}

// nextRead is the offset the group reads next after apply: the target, or
// the current commit of a partition left as it is.
func nextRead(pp PartitionPlan) *int64 {
	if pp.Target != nil {
		return pp.Target
	}
	return pp.Current
}
