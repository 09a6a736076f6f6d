package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrLeaseHeld is matched by the error of LeaseOffsetReset when another
// holder's lease on the group has not expired (a *LeaseHeldError).
var ErrLeaseHeld = errors.New("lease held")

// LeaseHeldError names the holder of the lease that refused a
// LeaseOffsetReset, and until when it holds it (zero: released while
// LeaseOffsetReset looked).
type LeaseHeldError struct {
	Cluster, Group, Holder string
	Until                  time.Time
}

func (e *LeaseHeldError) Error() string {
	if e.Until.IsZero() {
		return fmt.Sprintf("%s/%s was being applied by another process a moment ago; try again", e.Cluster, e.Group)
	}
	return fmt.Sprintf("%s/%s is being applied by %s (its lease runs until %s)",
		e.Cluster, e.Group, e.Holder, e.Until.UTC().Format(time.RFC3339))
}

// Is makes a LeaseHeldError match ErrLeaseHeld.
func (e *LeaseHeldError) Is(target error) bool { return target == ErrLeaseHeld }

// LeaseOffsetReset takes, or renews, holder's lease on cluster's group
// until now+ttl. It fails with ErrLeaseHeld, naming the holder and its
// expiry, while another holder's lease runs; an expired lease is taken
// over (its holder crashed, or lost the store for longer than ttl).
//
// One statement does it, so two processes racing for the lease cannot both
// win: the insert of the one that loses meets the other's row, and the
// update only applies to an expired or own row. INSERT … ON CONFLICT … DO
// UPDATE … WHERE is SQLite's (3.24+) and PostgreSQL's (9.5+) alike.
func (s *Store) LeaseOffsetReset(ctx context.Context, cluster, group, holder string, now time.Time, ttl time.Duration) error {
	res, err := s.db.ExecContext(ctx, `INSERT INTO offset_reset_leases (cluster, grp, holder, expires) VALUES (?, ?, ?, ?)
		ON CONFLICT (cluster, grp) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
		WHERE offset_reset_leases.holder = excluded.holder OR offset_reset_leases.expires <= ?`,
		cluster, group, holder, now.Add(ttl).UnixMilli(), now.UnixMilli())
	if err != nil {
		return fmt.Errorf("lease offset resets of %s/%s: %w", cluster, group, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("lease offset resets of %s/%s: %w", cluster, group, err)
	}
	if n == 1 {
		return nil
	}
	held := &LeaseHeldError{Cluster: cluster, Group: group}
	var expires int64
	if err := s.db.QueryRowContext(ctx, `SELECT holder, expires FROM offset_reset_leases WHERE cluster = ? AND grp = ?`,
		cluster, group).Scan(&held.Holder, &expires); err == nil {
		held.Until = time.UnixMilli(expires).UTC()
	}
	// Released between the two statements, the lease is still refused,
	// not retried here: the caller's next attempt takes it.
	return held
}

// ReleaseOffsetReset ends holder's lease on cluster's group; a lease
// another holder took over (after it expired) is left alone.
func (s *Store) ReleaseOffsetReset(ctx context.Context, cluster, group, holder string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM offset_reset_leases WHERE cluster = ? AND grp = ? AND holder = ?`,
		cluster, group, holder); err != nil {
		return fmt.Errorf("release offset resets of %s/%s: %w", cluster, group, err)
	}
	return nil
}
