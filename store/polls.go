package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Poll leases let replicas of one shard share the polling of a source (a
// broker's cluster): the holder polls the broker and stores its snapshot,
// the others serve that snapshot and take the lease over once it expires.
// See collectors/standby, which uses them.

// LeasePoll takes, or renews, holder's lease on source until now+ttl
// unless another holder's lease runs, and returns the lease's holder
// after the call: holder when it has the lease. One statement, as for
// offset resets (LeaseOffsetReset), so two replicas never both win.
func (s *Store) LeasePoll(ctx context.Context, source, holder string, now time.Time, ttl time.Duration) (string, error) {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO poll_leases (source, holder, expires) VALUES (?, ?, ?)
		ON CONFLICT (source) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
		WHERE poll_leases.holder = excluded.holder OR poll_leases.expires <= ?`,
		source, holder, now.Add(ttl).UnixMilli(), now.UnixMilli()); err != nil {
		return "", fmt.Errorf("poll lease of %s: %w", source, err)
	}
	var got string
	if err := s.db.QueryRowContext(ctx, `SELECT holder FROM poll_leases WHERE source = ?`, source).Scan(&got); err != nil {
		return "", fmt.Errorf("poll lease of %s: %w", source, err)
	}
	return got, nil
}

// PutPollSnapshot stores holder's latest snapshot of source, while holder
// still holds its lease (a holder whose lease was taken over stores
// nothing).
func (s *Store) PutPollSnapshot(ctx context.Context, source, holder string, snapshot []byte) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE poll_leases SET snapshot = ? WHERE source = ? AND holder = ?`,
		snapshot, source, holder); err != nil {
		return fmt.Errorf("store the snapshot of %s: %w", source, err)
	}
	return nil
}

// PollSnapshot returns the lease holder of source and the last snapshot
// stored (nil when none is), which a previous holder may have written.
func (s *Store) PollSnapshot(ctx context.Context, source string) (holder string, snapshot []byte, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT holder, snapshot FROM poll_leases WHERE source = ?`, source).Scan(&holder, &snapshot)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("read the snapshot of %s: %w", source, err)
	}
	return holder, snapshot, nil
}

// ReleasePoll ends holder's lease on source at once, so a standby takes
// over at its next poll rather than after the TTL. The snapshot stays for
// the standbys to serve until the new holder stores its own.
func (s *Store) ReleasePoll(ctx context.Context, source, holder string) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE poll_leases SET expires = 0 WHERE source = ? AND holder = ?`,
		source, holder); err != nil {
		return fmt.Errorf("release the poll lease of %s: %w", source, err)
	}
	return nil
}
