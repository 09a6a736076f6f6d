package store

import (
	"context"
	"fmt"

	"github.com/queuewatch/queuewatch/dlqreplay"
)

// RecordInFlight records the DLQ ids of messages job is about to copy out
// of dlq, in one transaction. An id recorded twice (two messages sharing a
// message id) is kept once.
func (s *Store) RecordInFlight(ctx context.Context, job, dlq string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("record messages in flight: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	st, err := tx.PrepareContext(ctx, `INSERT INTO inflight (job_id, dlq, message_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`)
	if err != nil {
		return fmt.Errorf("record messages in flight: %w", err)
	}
	defer func() { _ = st.Close() }()
	for _, id := range ids {
		if _, err := st.ExecContext(ctx, job, dlq, id); err != nil {
			return fmt.Errorf("record messages in flight: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record messages in flight: %w", err)
	}
	return nil
}

// InFlight returns the messages of dlq that another job than job recorded
// in flight and may have left in two places: the job stopped without
// settling them (interrupted, or still running while job holds the DLQ:
// its replica died and was not found out yet), recorded no outcome for
// them, and no job created after it moved or deleted them since. Both
// outcome lookups use the outcomes_msg index.
func (s *Store) InFlight(ctx context.Context, dlq, job string) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT f.message_id, f.job_id FROM inflight f JOIN jobs j ON j.id = f.job_id
		WHERE f.dlq = ? AND f.job_id <> ? AND j.state IN (?, ?)
		AND NOT EXISTS (SELECT 1 FROM outcomes o WHERE o.dlq = f.dlq AND o.message_id = f.message_id AND o.job_id = f.job_id)
		AND NOT EXISTS (SELECT 1 FROM outcomes o JOIN jobs k ON k.id = o.job_id
			WHERE o.dlq = f.dlq AND o.message_id = f.message_id AND o.result IN (?, ?) AND k.created > j.created)`,
		dlq, job, string(dlqreplay.StateInterrupted), string(dlqreplay.StateRunning),
		string(dlqreplay.ResultMoved), string(dlqreplay.ResultDeleted))
	if err != nil {
		return nil, fmt.Errorf("look up messages interrupted jobs left in flight: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string]string{}
	for rows.Next() {
		var id, by string
		if err := rows.Scan(&id, &by); err != nil {
			return nil, fmt.Errorf("look up messages interrupted jobs left in flight: %w", err)
		}
		out[id] = by
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("look up messages interrupted jobs left in flight: %w", err)
	}
	return out, nil
}
