package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Recent consumer pauses: a pause or resume made through any replica is
// kept here, so every replica's consumer page shows it before the next
// poll does (polls may be minutes apart). A reader lays it over a
// snapshot polled before At; a snapshot polled at or after At saw it.

// ConsumerPause is the last pause or resume of a broker's reader (a
// JetStream consumer: Group is <stream>/<consumer>), and when it was made.
type ConsumerPause struct {
	Broker  string
	Cluster string
	Group   string
	Paused  bool
	Until   time.Time
	At      time.Time
}

// PutConsumerPause keeps p as the last pause of its reader, unless one
// made later is kept already (two replicas racing: the later action
// stands). At is kept to the millisecond rounded up, so a snapshot polled
// before the pause never counts as having seen it. Pauses made more than
// keep before p are deleted first: every poll since saw them.
func (s *Store) PutConsumerPause(ctx context.Context, p ConsumerPause, keep time.Duration) error {
	at := p.At.Add(time.Millisecond - 1).UnixMilli()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM consumer_pauses WHERE at < ?`, p.At.Add(-keep).UnixMilli()); err != nil {
		return fmt.Errorf("delete old pauses: %w", err)
	}
	var until int64
	if !p.Until.IsZero() {
		until = p.Until.UnixMilli()
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO consumer_pauses (broker, cluster, grp, paused, paused_until, at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (broker, cluster, grp) DO UPDATE SET paused = excluded.paused, paused_until = excluded.paused_until, at = excluded.at
		WHERE consumer_pauses.at <= excluded.at`,
		p.Broker, p.Cluster, p.Group, p.Paused, until, at); err != nil {
		return fmt.Errorf("keep the pause of %s/%s: %w", p.Cluster, p.Group, err)
	}
	return nil
}

// ConsumerPause returns the last pause kept of broker's cluster's group;
// ok is false when none is.
func (s *Store) ConsumerPause(ctx context.Context, broker, cluster, group string) (p ConsumerPause, ok bool, err error) {
	p = ConsumerPause{Broker: broker, Cluster: cluster, Group: group}
	var until, at int64
	err = s.db.QueryRowContext(ctx, `SELECT paused, paused_until, at FROM consumer_pauses WHERE broker = ? AND cluster = ? AND grp = ?`,
		broker, cluster, group).Scan(&p.Paused, &until, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return ConsumerPause{}, false, nil
	}
	if err != nil {
		return ConsumerPause{}, false, fmt.Errorf("read the pause of %s/%s: %w", cluster, group, err)
	}
	if until != 0 {
		p.Until = time.UnixMilli(until).UTC()
	}
	p.At = time.UnixMilli(at).UTC()
	return p, true, nil
}
