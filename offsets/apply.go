package offsets

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Errors Apply wraps when it refuses a plan; callers branch on them (the CLI
// exits 1 with the message, the API will answer 409).
var (
	// ErrGroupActive: the group has members (it is not Empty or Dead).
	ErrGroupActive = errors.New("group is not empty")
	// ErrStale: a committed offset moved since the plan, or a target is no
	// longer within its partition's log; re-plan.
	ErrStale = errors.New("plan is stale")
	// ErrPlanModified: the plan's offsets do not match its ID, or it is
	// another cluster's.
	ErrPlanModified = errors.New("plan does not match its plan_id")
	// ErrBusy: another process sharing the audit store is applying a
	// reset of the same group (Locker).
	ErrBusy = errors.New("another apply of this group is under way")
	// ErrAudit: the audit log could not be written. Wrapped with no commit
	// when the apply could not be recorded before it; wrapped alongside
	// the receipt when its result could not be recorded after it.
	ErrAudit = errors.New("audit")
)

// ResultApplying is the result an apply is recorded with before its commit,
// replaced by its end result when it finishes.
const ResultApplying Result = "applying"

// CommitTimeout bounds the commit and its read-back, which run to their
// end even when the caller's context ends: a commit cut off mid-request may
// still land, and the receipt must say what did.
const CommitTimeout = 30 * time.Second

// Result is how an apply ended, the result label of
// queuewatch_offset_resets_total.
type Result string

// The results of Apply.
const (
	ResultOK      Result = "ok"      // every planned partition committed
	ResultPartial Result = "partial" // some committed, some failed
	ResultFailed  Result = "failed"  // none committed
	ResultRefused Result = "refused" // the group has members, or the plan was modified
	ResultStale   Result = "stale"   // offsets moved since the plan
)

// PartitionResult is what apply did to one partition.
type PartitionResult struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Target    int64  `json:"target"`
	// Committed is the offset read back after the commit, null when none.
	Committed *int64 `json:"committed"`
	// Result is "committed" when the read-back offset is the target,
	// "failed" otherwise, with Error saying why.
	Result string `json:"result"`
	Error  string `json:"error,omitempty"`
}

// Receipt is the outcome of one apply.
type Receipt struct {
	PlanID     string            `json:"plan_id"`
	Cluster    string            `json:"cluster"`
	Group      string            `json:"group"`
	Who        string            `json:"who"`
	At         time.Time         `json:"at"`
	Result     Result            `json:"result"`
	Error      string            `json:"error,omitempty"`
	Partitions []PartitionResult `json:"partitions"`
}

// Entry is what the audit log keeps of an apply: who applied which plan,
// when, and the receipt.
type Entry struct {
	Plan    Plan    `json:"plan"`
	Receipt Receipt `json:"receipt"`
}

// Auditor records applies. The audit store implements it; an apply is
// recorded whatever its result, refusals included, in two steps: Begin
// before anything is committed (result "applying"), Finish with the end
// result. An apply that cannot Begin commits nothing.
type Auditor interface {
	// Begin records e, whose result is ResultApplying, and returns its id.
	Begin(ctx context.Context, e Entry) (int64, error)
	// Finish replaces the record id with e, the apply's end.
	Finish(ctx context.Context, id int64, e Entry) error
}

// ApplyOptions are who applies and where the apply is recorded.
type ApplyOptions struct {
	// Who is the operator, as the audit log names them ("cli:alice").
	Who string
	// Audit records the apply; nil records nothing.
	Audit Auditor
	// Metrics counts the apply; nil counts nothing.
	Metrics *Metrics
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Lock serialises the applies of one group across processes; nil
	// serialises them within this process only.
	Lock Locker
}

// Locker serialises the applies of one group across the processes that
// share an audit store (a CLI apply beside serve, or replicas of serve):
// the in-process lock cannot see the others.
type Locker interface {
	// Lock holds cluster's group until unlock is called. It fails,
	// wrapping ErrBusy, while another process holds it.
	Lock(ctx context.Context, cluster, group string) (unlock func(), err error)
}

// Apply commits plan on b, if it is still true: the group is Empty or
// Dead, every committed offset is the plan's Current, and every target is
// within its partition's log. It is recorded (Auditor.Begin) before
// anything is committed, and commits nothing when it cannot be. Applies of
// one group of one cluster run one at a time within the process, and
// across processes with o.Lock (refused with ErrBusy while another holds
// it). The
// commit and its read-back outlive ctx (bounded by CommitTimeout); each
// partition is reported from the offsets read back. The error is non-nil
// when the apply was refused (wrapping ErrGroupActive, ErrStale or
// ErrPlanModified), could not run, or some partition failed; the receipt is
// filled in every case.
func Apply(ctx context.Context, b Broker, plan Plan, o ApplyOptions) (Receipt, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	r := Receipt{PlanID: plan.ID, Cluster: b.Cluster(), Group: plan.Group, Who: o.Who, At: now().UTC(), Partitions: []PartitionResult{}}
	// The audit has a context of its own so an interrupted CLI still
	// leaves its trace.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var id int64
	if o.Audit != nil {
		begun := r
		begun.Result = ResultApplying
		var aerr error
		if id, aerr = o.Audit.Begin(actx, Entry{Plan: plan, Receipt: begun}); aerr != nil {
			err := fmt.Errorf("%w: the apply could not be recorded, so nothing was committed: %w", ErrAudit, aerr)
			r.Result, r.Error = ResultFailed, err.Error()
			o.Metrics.count(r)
			return r, err
		}
	}
	unlock := lockGroup(b.Cluster(), plan.Group)
	err := lockedApply(ctx, b, plan, &r, o.Lock)
	unlock()
	switch {
	case errors.Is(err, ErrGroupActive), errors.Is(err, ErrPlanModified), errors.Is(err, ErrBusy):
		r.Result = ResultRefused
	case errors.Is(err, ErrStale):
		r.Result = ResultStale
	}
	if err != nil {
		r.Error = err.Error()
	}
	o.Metrics.count(r)
	if o.Audit != nil {
		if aerr := o.Audit.Finish(actx, id, Entry{Plan: plan, Receipt: r}); aerr != nil {
			err = errors.Join(err, fmt.Errorf("%w: the result was not recorded (the log says applying): %w", ErrAudit, aerr))
		}
	}
	return r, err
}

// groupLocks serialise the applies of one group of one cluster within the
// process: describe, stale checks, commit and read-back run under it.
var groupLocks = struct {
	sync.Mutex
	m map[[2]string]*groupLock
}{m: map[[2]string]*groupLock{}}

type groupLock struct {
	sync.Mutex
	users int
}

// lockGroup locks cluster's group and returns the unlock.
func lockGroup(cluster, group string) func() {
	k := [2]string{cluster, group}
	groupLocks.Lock()
	l := groupLocks.m[k]
	if l == nil {
		l = &groupLock{}
		groupLocks.m[k] = l
	}
	l.users++
	groupLocks.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		groupLocks.Lock()
		if l.users--; l.users == 0 {
			delete(groupLocks.m, k)
		}
		groupLocks.Unlock()
	}
}

// lockedApply runs apply holding l's lock on the group, when l is set.
// A lock that cannot be taken refuses the apply (ErrBusy) or fails it.
func lockedApply(ctx context.Context, b Broker, plan Plan, r *Receipt, l Locker) error {
	if l != nil {
		release, err := l.Lock(ctx, b.Cluster(), plan.Group)
		if err != nil {
			if !errors.Is(err, ErrBusy) {
				r.Result = ResultFailed
			}
			return err
		}
		defer release()
	}
	return apply(ctx, b, plan, r)
}

// apply does Apply's work and fills r.Result for every outcome but a
// refusal.
func apply(ctx context.Context, b Broker, plan Plan, r *Receipt) error {
	if plan.Cluster != b.Cluster() {
		return fmt.Errorf("%w: it is for cluster %s, not %s", ErrPlanModified, plan.Cluster, b.Cluster())
	}
	if plan.Kind != KindOf(b) {
		return fmt.Errorf("%w: it is for a group of kind %q, not %q", ErrPlanModified, plan.Kind, KindOf(b))
	}
	if id := plan.identity(); id != plan.ID {
		return fmt.Errorf("%w: its offsets hash to %s, not %s; re-plan rather than edit a plan", ErrPlanModified, id, plan.ID)
	}
	g, err := b.Describe(ctx, plan.Group)
	if err != nil {
		r.Result = ResultFailed
		return err
	}
	if !g.Resettable() {
		return fmt.Errorf("%w: %s", ErrGroupActive, refusal(plan.Group, g))
	}
	parts := make([]TP, len(plan.Partitions))
	for i, pp := range plan.Partitions {
		parts[i] = TP{pp.Topic, pp.Partition}
	}
	now, err := b.Committed(ctx, plan.Group, parts)
	if err != nil {
		r.Result = ResultFailed
		return err
	}
	if moved := stale(plan, now); len(moved) > 0 {
		return fmt.Errorf("%w: committed offsets moved since the plan (%s); re-plan", ErrStale, strings.Join(moved, ", "))
	}
	targets := map[TP]int64{}
	for _, pp := range plan.Partitions {
		if pp.Target != nil {
			targets[TP{pp.Topic, pp.Partition}] = *pp.Target
		}
	}
	if err := inLog(ctx, b, plan, targets); err != nil {
		if !errors.Is(err, ErrStale) {
			r.Result = ResultFailed
		}
		return err
	}
	// Once sent, a commit may land whatever happens to the caller: run it
	// and its read-back to their end, bounded.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CommitTimeout)
	defer cancel()
	perPart, commitErr := b.Commit(cctx, plan.Group, targets)
	after, err := b.Committed(cctx, plan.Group, parts)
	if err != nil {
		// The commit was sent; say what it answered and that it is unverified.
		after = nil
		if commitErr != nil {
			r.Result = ResultFailed
			return fmt.Errorf("%w; and the offsets could not be read back to see whether it landed: %w", commitErr, err)
		}
	}
	return r.report(plan, perPart, commitErr, after, err)
}

// inLog checks every target is still within its partition's log: retention
// may have moved the log start past an earliest target since the plan, and
// a commit below it would send the group to auto.offset.reset.
func inLog(ctx context.Context, b Broker, plan Plan, targets map[TP]int64) error {
	if len(targets) == 0 {
		return nil
	}
	byTopic := map[string][]int32{}
	var topics []string
	for _, pp := range plan.Partitions {
		if pp.Target == nil {
			continue
		}
		if _, ok := byTopic[pp.Topic]; !ok {
			topics = append(topics, pp.Topic)
		}
		byTopic[pp.Topic] = append(byTopic[pp.Topic], pp.Partition)
	}
	req := Request{Group: plan.Group}
	for _, t := range topics {
		req.Topics = append(req.Topics, TopicScope{Topic: t, Partitions: byTopic[t]})
	}
	pos, err := b.Positions(ctx, req)
	if err != nil {
		return fmt.Errorf("read the log bounds again: %w", err)
	}
	bounds := map[TP]Position{}
	for _, ps := range pos {
		bounds[TP{ps.Topic, ps.Partition}] = ps
	}
	var out []string
	for _, pp := range plan.Partitions {
		if pp.Target == nil {
			continue
		}
		ps, ok := bounds[TP{pp.Topic, pp.Partition}]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s[%d] no longer read", pp.Topic, pp.Partition))
		case *pp.Target < ps.LogStart:
			out = append(out, fmt.Sprintf("%s[%d] target %d is below the log start, now %d", pp.Topic, pp.Partition, *pp.Target, ps.LogStart))
		case *pp.Target > ps.LogEnd:
			out = append(out, fmt.Sprintf("%s[%d] target %d is above the log end, now %d", pp.Topic, pp.Partition, *pp.Target, ps.LogEnd))
		case ps.Mark != pp.Mark:
			out = append(out, fmt.Sprintf("%s[%d] planned at %s, now %s", pp.Topic, pp.Partition, pp.Mark, ps.Mark))
		}
	}
	if len(out) > 0 {
		return fmt.Errorf("%w: the log moved since the plan (%s); re-plan", ErrStale, strings.Join(out, ", "))
	}
	return nil
}

// stale lists the partitions whose committed offset is not the plan's.
func stale(plan Plan, now map[TP]int64) []string {
	var moved []string
	for _, pp := range plan.Partitions {
		got, ok := now[TP{pp.Topic, pp.Partition}]
		switch {
		case pp.Current == nil && !ok:
		case pp.Current != nil && ok && *pp.Current == got:
		default:
			cur := "none"
			if ok {
				cur = fmt.Sprint(got)
			}
			moved = append(moved, fmt.Sprintf("%s[%d] planned from %s, now %s", pp.Topic, pp.Partition, orDash(pp.Current), cur))
		}
	}
	return moved
}

// report fills r's partitions from the commit's answers and the offsets
// read back, and sets its result.
// A commit that failed as a whole (commitErr) may still have landed: its
// partitions are reported from the read-back.
func (r *Receipt) report(plan Plan, perPart map[TP]error, commitErr error, after map[TP]int64, readErr error) error {
	var failed int
	for _, pp := range plan.Partitions {
		if pp.Target == nil {
			continue
		}
		tp := TP{pp.Topic, pp.Partition}
		res := PartitionResult{Topic: pp.Topic, Partition: pp.Partition, Target: *pp.Target, Result: "committed"}
		if got, ok := after[tp]; ok {
			res.Committed = &got
		}
		switch {
		case perPart[tp] != nil:
			res.Result, res.Error = "failed", perPart[tp].Error()
		case readErr != nil:
			res.Result, res.Error = "failed", "committed but not read back: "+readErr.Error()
		case res.Committed == nil || *res.Committed != *pp.Target:
			res.Result, res.Error = "failed", "read back "+orDash(res.Committed)+", not the target"
			if commitErr != nil {
				res.Error += " (commit: " + commitErr.Error() + ")"
			}
		}
		if res.Result == "failed" {
			failed++
		}
		r.Partitions = append(r.Partitions, res)
	}
	switch {
	case failed == 0:
		r.Result = ResultOK
		return nil
	case failed == len(r.Partitions):
		r.Result = ResultFailed
	default:
		r.Result = ResultPartial
	}
	return fmt.Errorf("%d of %d partitions failed to commit", failed, len(r.Partitions))
}
