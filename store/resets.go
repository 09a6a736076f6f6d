package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// OffsetReset is one audited offset-reset apply: who applied which plan to
// which group, when, how it ended, and the plan and receipt as the JSON the
// CLI and API show (Entry). The store keeps Entry as it is given; it does
// not know the offsets package's types.
type OffsetReset struct {
	ID      int64           `json:"id"`
	At      time.Time       `json:"at"`
	Who     string          `json:"who"`
	Broker  string          `json:"broker"`
	Cluster string          `json:"cluster"`
	Group   string          `json:"group"`
	PlanID  string          `json:"plan_id"`
	Result  string          `json:"result"`
	Entry   json.RawMessage `json:"entry"`
}

// RecordOffsetReset appends r to the log and returns its id.
func (s *Store) RecordOffsetReset(ctx context.Context, r OffsetReset) (int64, error) {
	if !json.Valid(r.Entry) {
		return 0, fmt.Errorf("record offset reset of %s/%s: entry is not JSON", r.Cluster, r.Group)
	}
	// RETURNING rather than LastInsertId, which pgx does not have.
	var id int64
	err := s.db.QueryRowContext(ctx, `INSERT INTO offset_resets (at, who, broker, cluster, grp, plan_id, result, entry)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		r.At.UnixMilli(), r.Who, r.Broker, r.Cluster, r.Group, r.PlanID, r.Result, string(r.Entry)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("record offset reset of %s/%s: %w", r.Cluster, r.Group, err)
	}
	return id, nil
}

// OffsetResets lists the newest limit resets, newest first, of one
// cluster's group (cluster and group may be empty for every one).
func (s *Store) OffsetResets(ctx context.Context, cluster, group string, limit int) ([]OffsetReset, error) {
	return s.FindOffsetResets(ctx, ResetQuery{Cluster: cluster, Group: group, Limit: limit})
}

// ResetQuery selects offset resets (and pauses): of one cluster and group
// when set, and of the readers Visible accepts (broker, cluster, group as
// recorded), filtered in the query before Limit (0 means 100).
type ResetQuery struct {
	Cluster, Group string
	Visible        func(broker, cluster, group string) bool
	Limit          int
}

// FindOffsetResets lists the resets q selects, newest first.
func (s *Store) FindOffsetResets(ctx context.Context, q ResetQuery) ([]OffsetReset, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	where := []string{"(? = '' OR cluster = ?)", "(? = '' OR grp = ?)"}
	args := []any{q.Cluster, q.Cluster, q.Group, q.Group}
	if q.Visible != nil {
		keys, err := s.visibleReaders(ctx, q.Visible)
		if err != nil || len(keys) == 0 {
			return nil, err
		}
		// Neither a broker nor a cluster name holds ':', so the key reads
		// back one way whatever the group's name.
		where, args = append(where, "broker || ':' || cluster || ':' || grp IN "+inList(len(keys))), append(args, keys...)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, at, who, broker, cluster, grp, plan_id, result, entry
		FROM offset_resets WHERE `+strings.Join(where, " AND ")+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("list offset resets: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []OffsetReset
	for rows.Next() {
		var r OffsetReset
		var at int64
		var entry string
		if err := rows.Scan(&r.ID, &at, &r.Who, &r.Broker, &r.Cluster, &r.Group, &r.PlanID, &r.Result, &entry); err != nil {
			return nil, fmt.Errorf("list offset resets: %w", err)
		}
		r.At, r.Entry = time.UnixMilli(at).UTC(), json.RawMessage(entry)
		out = append(out, r)
	}
	return out, rows.Err()
}

// visibleReaders are the "broker:cluster:group" keys of the resets log that
// visible accepts, as visibleDLQs is for DLQs.
func (s *Store) visibleReaders(ctx context.Context, visible func(broker, cluster, group string) bool) ([]any, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT broker, cluster, grp FROM offset_resets`)
	if err != nil {
		return nil, fmt.Errorf("list the readers of offset_resets: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []any
	for rows.Next() {
		var b, c, g string
		if err := rows.Scan(&b, &c, &g); err != nil {
			return nil, fmt.Errorf("list the readers of offset_resets: %w", err)
		}
		if visible(b, c, g) {
			out = append(out, b+":"+c+":"+g)
		}
	}
	return out, rows.Err()
}

// FinishOffsetReset sets the result and entry of the reset id, recorded
// with result "applying" before its commit, to how the apply ended.
func (s *Store) FinishOffsetReset(ctx context.Context, id int64, result string, entry json.RawMessage) error {
	if !json.Valid(entry) {
		return fmt.Errorf("finish offset reset %d: entry is not JSON", id)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE offset_resets SET result = ?, entry = ? WHERE id = ?`, result, string(entry), id)
	if err != nil {
		return fmt.Errorf("finish offset reset %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("finish offset reset %d: %w", id, err)
	}
	if n != 1 {
		return fmt.Errorf("finish offset reset %d: %d rows updated, not 1", id, n)
	}
	return nil
}
