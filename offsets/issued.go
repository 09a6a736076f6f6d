package offsets

import (
	"errors"
	"time"
)

// A plan made through the API is kept by its ID for apply, which takes
// only the plan_id, so what is committed is exactly what was reviewed. The
// reset service keeps it in the store every replica shares, so the apply
// may reach any replica; these are the limits it keeps it under and the
// answers of a plan_id it does not keep.
const (
	// PlanTTL is how long a plan may be applied after it was made: past
	// it, the review the operator did is too old to trust.
	PlanTTL = 15 * time.Minute
	// MaxPlans bounds the plans kept; the oldest goes first.
	MaxPlans = 256
)

var (
	// ErrUnknownPlan is returned for a plan_id the service does not keep
	// for this group: never issued, applied already, pushed out by newer
	// plans, or another group's.
	ErrUnknownPlan = errors.New("unknown plan_id for this group: re-plan")
	// ErrPlanExpired is returned for a plan_id made more than PlanTTL ago.
	ErrPlanExpired = errors.New("plan expired after 15 minutes: re-plan")
)
