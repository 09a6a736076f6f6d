package store

import (
	"context"
	"fmt"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// Status onsets: when each reader's current non-ok condition began, as
// alerts.Evaluator tracks it beyond its window of polls. Keeping them here
// lets a restarted process, or a standby replica taking over a source's
// polling, say "no members since 05:09 UTC (1h 14m)" rather than start
// counting again. The evaluator writes a source's onsets only when one
// begins, changes or ends, and deletes a reader's row when it is ok again,
// so the table holds one row per reader that is not ok.

// Onsets returns the onsets kept for broker's cluster.
func (s *Store) Onsets(ctx context.Context, broker, cluster string) ([]queue.Onset, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT reader, cond, since FROM status_onsets WHERE broker = ? AND cluster = ? ORDER BY reader`,
		broker, cluster)
	if err != nil {
		return nil, fmt.Errorf("read the status onsets of %s %s: %w", broker, cluster, err)
	}
	defer func() { _ = rows.Close() }()
	var out []queue.Onset
	for rows.Next() {
		var o queue.Onset
		var since int64
		if err := rows.Scan(&o.Reader, &o.Condition, &since); err != nil {
			return nil, fmt.Errorf("read the status onsets of %s %s: %w", broker, cluster, err)
		}
		o.Since = time.UnixMilli(since).UTC()
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the status onsets of %s %s: %w", broker, cluster, err)
	}
	return out, nil
}

// SaveOnsets keeps put, each replacing its reader's onset, and deletes the
// onsets of the readers in del, in one transaction. Since is kept to the
// millisecond.
func (s *Store) SaveOnsets(ctx context.Context, broker, cluster string, put []queue.Onset, del []string) error {
	tx, err := s.db.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("keep the status onsets of %s %s: %w", broker, cluster, err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	for _, o := range put {
		if _, err := tx.ExecContext(ctx, `INSERT INTO status_onsets (broker, cluster, reader, cond, since) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (broker, cluster, reader) DO UPDATE SET cond = excluded.cond, since = excluded.since`,
			broker, cluster, o.Reader, o.Condition, o.Since.UnixMilli()); err != nil {
			return fmt.Errorf("keep the status onset of %s %s %s: %w", broker, cluster, o.Reader, err)
		}
	}
	for _, r := range del {
		if _, err := tx.ExecContext(ctx, `DELETE FROM status_onsets WHERE broker = ? AND cluster = ? AND reader = ?`,
			broker, cluster, r); err != nil {
			return fmt.Errorf("forget the status onset of %s %s %s: %w", broker, cluster, r, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("keep the status onsets of %s %s: %w", broker, cluster, err)
	}
	return nil
}
