package store

import (
	"context"
	"fmt"
	"time"
)

// Saved filters: a CEL filter (selexpr) saved under a name on a DLQ's
// page, shared with everyone who reads that DLQ, on every replica.

// SavedFilter is one filter saved on a DLQ: who saved it last, and when.
type SavedFilter struct {
	DLQ   string
	Name  string
	Where string
	Who   string
	At    time.Time
}

// SaveFilter keeps f, replacing a filter of the same name on its DLQ.
func (s *Store) SaveFilter(ctx context.Context, f SavedFilter) error {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO saved_filters (dlq, name, expr, who, at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (dlq, name) DO UPDATE SET expr = excluded.expr, who = excluded.who, at = excluded.at`,
		f.DLQ, f.Name, f.Where, f.Who, f.At.UnixMilli()); err != nil {
		return fmt.Errorf("save filter %q of %s: %w", f.Name, f.DLQ, err)
	}
	return nil
}

// SavedFilters lists the filters saved on dlq, by name.
func (s *Store) SavedFilters(ctx context.Context, dlq string) ([]SavedFilter, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, expr, who, at FROM saved_filters WHERE dlq = ? ORDER BY name`, dlq)
	if err != nil {
		return nil, fmt.Errorf("list the filters of %s: %w", dlq, err)
	}
	defer func() { _ = rows.Close() }()
	var out []SavedFilter
	for rows.Next() {
		f := SavedFilter{DLQ: dlq}
		var at int64
		if err := rows.Scan(&f.Name, &f.Where, &f.Who, &at); err != nil {
			return nil, fmt.Errorf("list the filters of %s: %w", dlq, err)
		}
		f.At = time.UnixMilli(at).UTC()
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list the filters of %s: %w", dlq, err)
	}
	return out, nil
}

// DeleteFilter removes the filter name of dlq; ok is false when there
// was none.
func (s *Store) DeleteFilter(ctx context.Context, dlq, name string) (ok bool, err error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM saved_filters WHERE dlq = ? AND name = ?`, dlq, name)
	if err != nil {
		return false, fmt.Errorf("delete filter %q of %s: %w", name, dlq, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("delete filter %q of %s: %w", name, dlq, err)
	}
	return n > 0, nil
}
