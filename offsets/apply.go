package offsets

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors Apply wraps when it refuses a plan; callers branch on them (the CLI
// exits 1 with the message, the API will answer 409).
var (
	// ErrGroupActive: the group has members (it is not Empty or Dead).
	ErrGroupActive = errors.New("group is not empty")
	// ErrStale: a committed offset moved since the plan; re-plan.
	ErrStale = errors.New("plan is stale")
	// ErrPlanModified: the plan's offsets do not match its ID, or it is
	// another cluster's.
	ErrPlanModified = errors.New("plan does not match its plan_id")
)

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
// recorded whatever its result, refusals included.
type Auditor interface {
	Record(ctx context.Context, e Entry) error
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
}

// Apply commits plan on b, if it is still true: the group is Empty or
// Dead, and every committed offset is the plan's Current. It reads the
// committed offsets back and reports each partition. The error is non-nil
// when the apply was refused (wrapping ErrGroupActive, ErrStale or
// ErrPlanModified), could not run, or some partition failed; the receipt is
// filled in every case.
func Apply(ctx context.Context, b Broker, plan Plan, o ApplyOptions) (Receipt, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	r := Receipt{PlanID: plan.ID, Cluster: b.Cluster(), Group: plan.Group, Who: o.Who, At: now().UTC(), Partitions: []PartitionResult{}}
	err := apply(ctx, b, plan, &r)
	switch {
	case errors.Is(err, ErrGroupActive), errors.Is(err, ErrPlanModified):
		r.Result = ResultRefused
	case errors.Is(err, ErrStale):
		r.Result = ResultStale
	}
	if err != nil {
		r.Error = err.Error()
	}
	o.Metrics.count(r)
	if o.Audit != nil {
		// The apply happened whatever the audit says: record with a
		// context of its own so an interrupted CLI still leaves its trace.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if aerr := o.Audit.Record(actx, Entry{Plan: plan, Receipt: r}); aerr != nil {
			err = errors.Join(err, fmt.Errorf("audit: %w", aerr))
		}
	}
	return r, err
}

// apply does Apply's work and fills r.Result for every outcome but a
// refusal.
func apply(ctx context.Context, b Broker, plan Plan, r *Receipt) error {
	if plan.Cluster != b.Cluster() {
		return fmt.Errorf("%w: it is for cluster %s, not %s", ErrPlanModified, plan.Cluster, b.Cluster())
	}
	if id := PlanID(plan.Cluster, plan.Group, plan.Partitions); id != plan.ID {
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
	perPart, err := b.Commit(ctx, plan.Group, targets)
	if err != nil {
		r.Result = ResultFailed
		return err
	}
	after, err := b.Committed(ctx, plan.Group, parts)
	if err != nil {
		// The commit was sent; say what it answered and that it is unverified.
		after = nil
	}
	return r.report(plan, perPart, after, err)
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
func (r *Receipt) report(plan Plan, perPart map[TP]error, after map[TP]int64, readErr error) error {
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
