package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// BodyRead is one read of dead letters' bodies: who saw which messages of
// which DLQ, on which surface (page, api, message, download, archive), and
// whether masked values were shown in clear.
type BodyRead struct {
	ID       int64     `json:"id"`
	At       time.Time `json:"at"`
	Who      string    `json:"who"`
	DLQ      string    `json:"dlq"`
	Surface  string    `json:"surface"`
	Clear    bool      `json:"clear"`
	Messages []string  `json:"messages"`
}

// maxReadIDs bounds the message ids one row keeps; a page holds at most
// 1,000 messages.
const maxReadIDs = 1000

// ReadQuery selects body reads: of one DLQ (DLQ, when set) and of the
// DLQs Visible accepts, filtered in the query before Limit (0 means 100).
type ReadQuery struct {
	DLQ     string
	Visible func(dlqID string) bool
	Limit   int
}

// RecordBodyRead appends r to the log.
func (s *Store) RecordBodyRead(ctx context.Context, r BodyRead) error {
	ids := r.Messages[:min(len(r.Messages), maxReadIDs)]
	if ids == nil {
		ids = []string{}
	}
	msgs, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("record body read of %s: %w", r.DLQ, err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO body_reads (at, who, dlq, surface, clear, messages) VALUES (?, ?, ?, ?, ?, ?)`,
		r.At.UnixMilli(), r.Who, r.DLQ, r.Surface, r.Clear, string(msgs))
	if err != nil {
		return fmt.Errorf("record body read of %s: %w", r.DLQ, err)
	}
	return nil
}

// BodyReads lists the newest limit reads, newest first, of one DLQ (every
// DLQ when dlq is empty).
func (s *Store) BodyReads(ctx context.Context, q ReadQuery) ([]BodyRead, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	where, args, none, err := s.dlqWhere(ctx, "body_reads", q.DLQ, q.Visible)
	if err != nil || none {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, at, who, dlq, surface, clear, messages
		FROM body_reads WHERE `+strings.Join(where, " AND ")+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("list body reads: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []BodyRead
	for rows.Next() {
		var r BodyRead
		var at int64
		var msgs string
		if err := rows.Scan(&r.ID, &at, &r.Who, &r.DLQ, &r.Surface, &r.Clear, &msgs); err != nil {
			return nil, fmt.Errorf("list body reads: %w", err)
		}
		if err := json.Unmarshal([]byte(msgs), &r.Messages); err != nil {
			return nil, fmt.Errorf("list body reads: row %d: %w", r.ID, err)
		}
		r.At = time.UnixMilli(at).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}
