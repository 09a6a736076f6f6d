package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Issued offset-reset plans: POST …/offsets/plan keeps the plan it
// answered, and apply takes only its plan_id, so what is committed is
// exactly what was reviewed. The plans are kept here, not in the replica
// that made them, so a plan reviewed through one replica applies through
// any other. The store keeps Plan as it is given; it does not know the
// offsets package's types.

// ErrNoPlan is matched by the error of OffsetPlan for a plan the store
// does not keep: never issued, dropped after its apply, pushed out by
// newer plans, or another cluster's or group's.
var ErrNoPlan = errors.New("no such plan")

// ErrPlanExpired is matched by the error of OffsetPlan for a plan kept
// for longer than its ttl.
var ErrPlanExpired = errors.New("plan expired")

// OffsetPlan is one issued plan: its ID, whose it is and the plan as JSON.
type OffsetPlan struct {
	ID      string
	Broker  string
	Cluster string
	Group   string
	Plan    json.RawMessage
	Created time.Time
}

// PutOffsetPlan keeps p, replacing a plan of the same ID (plan IDs are
// hashes of what a plan would commit, so the same plan made again gets the
// same ID and a new Created). It first deletes the plans created more than
// ttl before p, which can no longer be applied, and after keeping p the
// oldest beyond max, so the table stays bounded however many plans are
// made and never applied.
func (s *Store) PutOffsetPlan(ctx context.Context, p OffsetPlan, ttl time.Duration, maxPlans int) error {
	if !json.Valid(p.Plan) {
		return fmt.Errorf("keep plan %s of %s/%s: plan is not JSON", p.ID, p.Cluster, p.Group)
	}
	// Three statements, not one transaction: a replica that fails between
	// them leaves at worst a few rows over the bound until the next put,
	// and statements of their own take no locks two replicas could take in
	// opposite orders.
	if _, err := s.db.ExecContext(ctx, `DELETE FROM offset_plans WHERE created < ?`,
		p.Created.Add(-ttl).UnixMilli()); err != nil {
		return fmt.Errorf("delete expired plans: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO offset_plans (id, broker, cluster, grp, plan, created) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET broker = excluded.broker, cluster = excluded.cluster, grp = excluded.grp,
			plan = excluded.plan, created = excluded.created`,
		p.ID, p.Broker, p.Cluster, p.Group, string(p.Plan), p.Created.UnixMilli()); err != nil {
		return fmt.Errorf("keep plan %s of %s/%s: %w", p.ID, p.Cluster, p.Group, err)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM offset_plans WHERE id NOT IN (
		SELECT id FROM offset_plans ORDER BY created DESC, id DESC LIMIT ?)`, maxPlans); err != nil {
		return fmt.Errorf("delete the plans beyond %d: %w", maxPlans, err)
	}
	return nil
}

// OffsetPlan returns the kept plan id of cluster's group. It fails with
// ErrNoPlan when the store keeps no such plan of that group, and with
// ErrPlanExpired, deleting it, when the plan was created more than ttl
// before now.
func (s *Store) OffsetPlan(ctx context.Context, id, cluster, group string, now time.Time, ttl time.Duration) (OffsetPlan, error) {
	p := OffsetPlan{ID: id}
	var plan string
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT broker, cluster, grp, plan, created FROM offset_plans WHERE id = ?`, id).
		Scan(&p.Broker, &p.Cluster, &p.Group, &plan, &created)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return OffsetPlan{}, fmt.Errorf("plan %s of %s/%s: %w", id, cluster, group, ErrNoPlan)
	case err != nil:
		return OffsetPlan{}, fmt.Errorf("read plan %s: %w", id, err)
	case p.Cluster != cluster || p.Group != group:
		return OffsetPlan{}, fmt.Errorf("plan %s of %s/%s: %w", id, cluster, group, ErrNoPlan)
	}
	p.Plan, p.Created = json.RawMessage(plan), time.UnixMilli(created).UTC()
	if now.Sub(p.Created) > ttl {
		if err := s.DropOffsetPlan(ctx, id); err != nil {
			return OffsetPlan{}, err
		}
		return OffsetPlan{}, fmt.Errorf("plan %s of %s/%s: %w", id, cluster, group, ErrPlanExpired)
	}
	return p, nil
}

// DropOffsetPlan deletes plan id, if the store keeps it.
func (s *Store) DropOffsetPlan(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM offset_plans WHERE id = ?`, id); err != nil {
		return fmt.Errorf("drop plan %s: %w", id, err)
	}
	return nil
}
