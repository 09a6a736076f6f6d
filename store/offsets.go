package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/queuewatch/queuewatch/offsets"
)

// ResetStore is the store as the offset reset service needs it
// (offsets.Store): its resets, leases, plans and pauses in the service's
// terms, the store's errors turned into the ones offsets answers with.
type ResetStore struct{ S *Store }

var _ offsets.Store = ResetStore{}

// Record records r as an offset reset (or pause) and returns its id.
func (r ResetStore) Record(ctx context.Context, rec offsets.Record) (int64, error) {
	return r.S.RecordOffsetReset(ctx, OffsetReset{
		At: rec.At, Who: rec.Who, Broker: rec.Broker, Cluster: rec.Cluster, Group: rec.Group,
		PlanID: rec.PlanID, Result: rec.Result, Entry: rec.Entry,
	})
}

// Finish replaces the result and entry of the reset id.
func (r ResetStore) Finish(ctx context.Context, id int64, result string, entry json.RawMessage) error {
	return r.S.FinishOffsetReset(ctx, id, result, entry)
}

// Lease takes or renews holder's lease on cluster's group; another
// holder's lease is offsets.ErrBusy, naming the holder.
func (r ResetStore) Lease(ctx context.Context, cluster, group, holder string, now time.Time, ttl time.Duration) error {
	err := r.S.LeaseOffsetReset(ctx, cluster, group, holder, now, ttl)
	if errors.Is(err, ErrLeaseHeld) {
		return fmt.Errorf("%w: %w", offsets.ErrBusy, err)
	}
	return err
}

// Release gives up holder's lease on cluster's group.
func (r ResetStore) Release(ctx context.Context, cluster, group, holder string) error {
	return r.S.ReleaseOffsetReset(ctx, cluster, group, holder)
}

// PutPlan keeps p for ttl, under maxPlans.
func (r ResetStore) PutPlan(ctx context.Context, p offsets.KeptPlan, ttl time.Duration, maxPlans int) error {
	return r.S.PutOffsetPlan(ctx, OffsetPlan{
		ID: p.ID, Broker: p.Broker, Cluster: p.Cluster, Group: p.Group, Plan: p.Plan, Created: p.Created,
	}, ttl, maxPlans)
}

// Plan returns the kept plan id of cluster's group: offsets.ErrUnknownPlan
// or offsets.ErrPlanExpired themselves (the API's answer) when it has
// none or it is too old.
func (r ResetStore) Plan(ctx context.Context, id, cluster, group string, now time.Time, ttl time.Duration) (offsets.KeptPlan, error) {
	p, err := r.S.OffsetPlan(ctx, id, cluster, group, now, ttl)
	switch {
	case errors.Is(err, ErrNoPlan):
		return offsets.KeptPlan{}, offsets.ErrUnknownPlan
	case errors.Is(err, ErrPlanExpired):
		return offsets.KeptPlan{}, offsets.ErrPlanExpired
	case err != nil:
		return offsets.KeptPlan{}, err
	}
	return offsets.KeptPlan{ID: p.ID, Broker: p.Broker, Cluster: p.Cluster, Group: p.Group, Plan: p.Plan, Created: p.Created}, nil
}

// DropPlan forgets plan id.
func (r ResetStore) DropPlan(ctx context.Context, id string) error {
	return r.S.DropOffsetPlan(ctx, id)
}

// PutPause keeps p for keep.
func (r ResetStore) PutPause(ctx context.Context, p offsets.KeptPause, keep time.Duration) error {
	return r.S.PutConsumerPause(ctx, ConsumerPause{
		Broker: p.Broker, Cluster: p.Cluster, Group: p.Group, Paused: p.Paused, Until: p.Until, At: p.At,
	}, keep)
}

// Pause returns the last pause or resume kept of the group.
func (r ResetStore) Pause(ctx context.Context, broker, cluster, group string) (offsets.KeptPause, bool, error) {
	p, ok, err := r.S.ConsumerPause(ctx, broker, cluster, group)
	return offsets.KeptPause{
		Broker: p.Broker, Cluster: p.Cluster, Group: p.Group, Paused: p.Paused, Until: p.Until, At: p.At,
	}, ok, err
}
