package offsets

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Request asks for a plan: move Group of a cluster as To says, on Topics
// (every topic the group has commits on when empty).
type Request struct {
	Group  string       `json:"group"`
	To     Spec         `json:"to"`
	Topics []TopicScope `json:"topics,omitempty"`
	// Kind is the kind of group (KindShare), "" for a consumer group.
	Kind string `json:"kind,omitempty"`
}

// Member is a live member of a group, as the broker describes it.
type Member struct {
	ID       string `json:"id"`
	ClientID string `json:"client_id,omitempty"`
	Host     string `json:"host,omitempty"`
}

// GroupInfo is a group's state and members.
type GroupInfo struct {
	State   string
	Members []Member
}

// Resettable reports whether a group in this state may have its offsets
// reset: only Empty (no members), Dead (no such group, or all its state
// expired) or Paused (a JetStream consumer delivers nothing while paused,
// so a reset lands before anyone reads again). Any other state has members
// that would overwrite the reset with their next commit, and a Kafka broker
// refuses commits from outside the generation anyway.
func (g GroupInfo) Resettable() bool {
	return g.State == "Empty" || g.State == "Dead" || g.State == "Paused"
}

// Position is what a broker reads for one partition in a plan's scope: the
// inputs of Resolve.
type Position struct {
	Topic     string
	Partition int32
	// Current is the group's committed offset, nil when it has none.
	Current *int64
	// LogStart and LogEnd bound the partition: the first offset still in
	// the log and the offset the next record will get.
	LogStart, LogEnd int64
	// AfterTime is, for a Timestamp spec, the first offset whose record's
	// timestamp is at or after the spec's time, nil when no record is.
	AfterTime *int64
	// Other is, for a Group spec, the other group's committed offset, nil
	// when it has none on this partition.
	Other *int64
	// Mark is what else a broker reads of the reader's position that a
	// commit would overwrite (JetStream: the ack floor), "" for none. It is
	// part of the plan's ID, and apply refuses as stale when it changed.
	Mark string
	// Pending is the messages the reader has still to read now, where the
	// broker counts them itself (JetStream's num_pending); nil elsewhere.
	Pending *int64
}

// PartitionPlan is one partition of a plan.
type PartitionPlan struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Current is the committed offset now, null when there is none.
	Current *int64 `json:"current"`
	// Target is what apply commits, null when the partition is left as it
	// is (see Warning).
	Target *int64 `json:"target"`
	// Delta is Target − Current, null when either is.
	Delta    *int64 `json:"delta"`
	LogStart int64  `json:"log_start"`
	LogEnd   int64  `json:"log_end"`
	// Reprocess and Skip count the records the group will read again or
	// never read, measured from where it would read next now: Current, or
	// the log start when retention has passed it. Both are 0 without a
	// Current commit, since where such a group starts depends on its
	// consumers' auto.offset.reset.
	Reprocess int64 `json:"reprocess"`
	Skip      int64 `json:"skip"`
	// LagAfter is the records between the target (or the current commit
	// when left as it is) and the log end.
	LagAfter int64 `json:"lag_after"`
	// TargetTimestamp is the timestamp of the record at the target (the
	// next one the group will read); null with TimestampNote saying why.
	TargetTimestamp *time.Time `json:"target_timestamp"`
	TimestampNote   string     `json:"target_timestamp_note,omitempty"`
	// Warning says where the target was clamped to the log, where no record
	// follows the timestamp, or why the partition is left as it is.
	Warning string `json:"warning,omitempty"`
	// Mark is Position.Mark, checked again by apply.
	Mark string `json:"mark,omitempty"`
	// PendingBefore and PendingAfter are the messages the reader has to
	// read now and would have after apply, as the broker counts them
	// (JetStream's num_pending, which honours the consumer's filter); null
	// for brokers that do not count (Kafka: LagAfter is the count) or when
	// the count could not be made.
	PendingBefore *int64 `json:"pending_before,omitempty"`
	PendingAfter  *int64 `json:"pending_after,omitempty"`
}

// Notes for a target record's timestamp that could not be given.
const (
	NoteEndOfLog = "no record at the target yet: the group will wait for the next one"
	NoteUnknown  = "unknown: the record could not be read"
)

// Resolve is the target of one partition under spec, with Kafka's
// kafka-consumer-groups semantics where the issue agrees with them:
//
//   - earliest is the log start and latest the log end;
//   - shift:N moves the current commit by N and offset:N sets N, both
//     clamped to [log start, log end] with a warning; a partition without a
//     commit has nothing to shift and is left as it is, with a warning
//     (kafka-consumer-groups refuses the whole reset instead);
//   - timestamp:T is the first offset at or after T, or the log end with a
//     warning when no record is;
//   - group:G copies G's commit, clamped like offset:N; a partition without
//     a commit in G is left as it is, with a warning.
//
// For example, a partition with log start 100, end 200 and a commit at 150:
//
//	spec          target  delta  reprocess  skip  warning
//	earliest      100     -50    50         0
//	latest        200     +50    0          50
//	shift:-80     100     -50    50         0     clamped to the log start
//	offset:170    170     +20    0          20
func Resolve(spec Spec, p Position) PartitionPlan {
	out := PartitionPlan{
		Topic: p.Topic, Partition: p.Partition, Current: p.Current, LogStart: p.LogStart, LogEnd: p.LogEnd,
		Mark: p.Mark, PendingBefore: p.Pending,
	}
	var target int64
	switch spec.Kind {
	case Earliest:
		target = p.LogStart
	case Latest:
		target = p.LogEnd
	case Timestamp:
		if spec.Time.Before(time.Unix(0, 0)) {
			// Kafka reads negative times as its special offsets (-1 the
			// end, -2 the start): a time before 1970 is before every
			// record, so every record is read again.
			target = p.LogStart
			out.Warning = "timestamp " + spec.Time.Format(time.RFC3339Nano) + " is before 1970, before every record: set to the log start"
		} else if p.AfterTime == nil {
			target = p.LogEnd
			out.Warning = "no record at or after " + spec.Time.Format(time.RFC3339) + ": set to the log end"
		} else {
			target = *p.AfterTime
		}
	case Shift:
		if p.Current == nil {
			out.Warning = "no committed offset to shift: left as it is"
			return out.account()
		}
		target, out.Warning = clamp(addSaturating(*p.Current, spec.N), p.LogStart, p.LogEnd)
	case Offset:
		target, out.Warning = clamp(spec.N, p.LogStart, p.LogEnd)
	case Group:
		if p.Other == nil {
			out.Warning = "group " + spec.Group + " has no committed offset here: left as it is"
			return out.account()
		}
		target, out.Warning = clamp(*p.Other, p.LogStart, p.LogEnd)
	}
	out.Target = &target
	return out.account()
}

// addSaturating is a+b, held at the int64 bounds rather than wrapping, so
// that shift:+9223372036854775807 clamps to the log end, not the start.
func addSaturating(a, b int64) int64 {
	switch s := a + b; {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	default:
		return s
	}
}

// clamp keeps offset within [start, end] and says when it had to.
func clamp(offset, start, end int64) (int64, string) {
	switch {
	case offset < start:
		return start, "offset " + strconv.FormatInt(offset, 10) + " is before the log start: clamped to " + strconv.FormatInt(start, 10)
	case offset > end:
		return end, "offset " + strconv.FormatInt(offset, 10) + " is past the log end: clamped to " + strconv.FormatInt(end, 10)
	}
	return offset, ""
}

// account fills Delta, Reprocess, Skip and LagAfter from the offsets.
func (pp PartitionPlan) account() PartitionPlan {
	next := pp.Target
	if next == nil {
		next = pp.Current
	}
	if next != nil {
		pp.LagAfter = max(pp.LogEnd-*next, 0)
	} else {
		pp.LagAfter = pp.LogEnd - pp.LogStart
	}
	if pp.Current == nil || pp.Target == nil {
		return pp
	}
	d := *pp.Target - *pp.Current
	pp.Delta = &d
	from := min(max(*pp.Current, pp.LogStart), pp.LogEnd)
	pp.Reprocess = max(from-*pp.Target, 0)
	pp.Skip = max(*pp.Target-from, 0)
	return pp
}

// Totals sum a plan's partitions.
type Totals struct {
	Partitions int `json:"partitions"`
	// Changed counts the partitions whose commit apply changes.
	Changed   int   `json:"changed"`
	Reprocess int64 `json:"reprocess"`
	Skip      int64 `json:"skip"`
	LagAfter  int64 `json:"lag_after"`
}

// Plan is a reviewed-before-applied offset reset of one group. It is what
// `queuewatch offsets plan` prints and `queuewatch offsets apply` reads.
type Plan struct {
	// ID is PlanID of the plan's contents.
	ID         string          `json:"plan_id"`
	Broker     string          `json:"broker"`
	Cluster    string          `json:"cluster"`
	Group      string          `json:"group"`
	GroupState string          `json:"group_state"`
	Members    []Member        `json:"members"`
	To         Spec            `json:"to"`
	Topics     []TopicScope    `json:"topics,omitempty"`
	Created    time.Time       `json:"created_at"`
	Partitions []PartitionPlan `json:"partitions"`
	Totals     Totals          `json:"totals"`
	Warnings   []string        `json:"warnings,omitempty"`
	// ApplyRefused says why apply will be refused if the group stays as it
	// is now (it has members); empty when apply may proceed.
	ApplyRefused string `json:"apply_refused,omitempty"`
	// Kind is the kind of group (KindShare), absent for a consumer group.
	Kind string `json:"kind,omitempty"`
}

// Seal sorts the partitions, sums the totals, gathers the warnings, says
// whether apply will be refused and sets the ID. Call it once the
// partitions are final.
func (p *Plan) Seal() {
	slices.SortFunc(p.Partitions, func(a, b PartitionPlan) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	p.Totals = Totals{Partitions: len(p.Partitions)}
	p.Warnings = nil
	for _, pp := range p.Partitions {
		if pp.Target != nil && (pp.Current == nil || *pp.Current != *pp.Target) {
			p.Totals.Changed++
		}
		p.Totals.Reprocess += pp.Reprocess
		p.Totals.Skip += pp.Skip
		p.Totals.LagAfter += pp.LagAfter
		if pp.Warning != "" {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s[%d]: %s", pp.Topic, pp.Partition, pp.Warning))
		}
	}
	p.ApplyRefused = ""
	if g := (GroupInfo{State: p.GroupState, Members: p.Members}); !g.Resettable() {
		p.ApplyRefused = refusal(p.Group, g)
	}
	p.ID = p.identity()
}

// PlanID is the identity of a plan: the first 24 hex digits of the SHA-256
// of these lines, each ending in a newline:
//
//	queuewatch offsets plan v1
//	<cluster>
//	<group>
//	<topic> <partition> <current or -> <target or ->   (one line per partition, sorted by topic, then partition)
//
// A partition with a Mark has it after the target, separated by a space,
// so Kafka plans (no marks) keep the IDs they always had.
//
// It covers what apply commits and what it checks first, and nothing else
// (not the time, the spec or the warnings), so it is stable: planning twice
// over the same offsets gives the same ID, and any change to the offsets
// gives another.
func PlanID(cluster, group string, parts []PartitionPlan) string {
	return planHash("queuewatch offsets plan v1", cluster, group, parts)
}

// planHash is PlanID under another first line.
func planHash(header, cluster, group string, parts []PartitionPlan) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", header, cluster, group)
	sorted := slices.SortedFunc(slices.Values(parts), func(a, b PartitionPlan) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	for _, pp := range sorted {
		line := fmt.Sprintf("%s %d %s %s", pp.Topic, pp.Partition, orDash(pp.Current), orDash(pp.Target))
		if pp.Mark != "" {
			line += " " + pp.Mark
		}
		fmt.Fprintln(h, line)
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

func orDash(o *int64) string {
	if o == nil {
		return "-"
	}
	return strconv.FormatInt(*o, 10)
}

// refusal says why a group in g's state cannot be reset.
func refusal(group string, g GroupInfo) string {
	names := make([]string, len(g.Members))
	for i, m := range g.Members {
		names[i] = m.ID
		if m.Host != "" {
			names[i] += "@" + m.Host
		}
	}
	return fmt.Sprintf("group %s is %s with %d member(s) %v: stop its consumers first (only an Empty, Dead or Paused group can be reset)",
		group, g.State, len(g.Members), names)
}
