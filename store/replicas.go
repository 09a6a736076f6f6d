package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/queuewatch/queuewatch/dlqreplay"
)

// DefaultLeaseTTL is how long a job's heartbeat and DLQ leases stay good
// without a renewal. A running job renews both with every progress flush
// (every 500ms), so 15s rides out 30 missed flushes (a slow database, a
// GC pause) before another replica calls the job interrupted.
const DefaultLeaseTTL = 15 * time.Second

// OpenPostgres opens the store in the PostgreSQL database dsn names, which
// several replicas share, and brings its schema to the current version
// (replicas starting together apply each migration once). Jobs whose owner
// stopped heartbeating more than leaseTTL ago (0: DefaultLeaseTTL) are
// marked interrupted; other replicas' running jobs are left running.
func OpenPostgres(ctx context.Context, dsn string, leaseTTL time.Duration) (*Store, error) {
	return openPostgres(ctx, dsn, leaseTTL, migrations)
}

func openPostgres(ctx context.Context, dsn string, leaseTTL time.Duration, ms []migration) (*Store, error) {
	if leaseTTL <= 0 {
		leaseTTL = DefaultLeaseTTL
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open audit store: %w", err)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to the audit store: %w", err)
	}
	s := &Store{db: conn{db: db, pg: true}, replica: newReplicaID(), leaseTTL: leaseTTL}
	if err := migrate(ctx, s.db, ms); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("schema of the audit store: %w", err)
	}
	if err := s.markInterrupted(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// newReplicaID names this process in the jobs it owns: host, pid and
// randomness, so a restarted pod on the same host is another replica.
func newReplicaID() string {
	host, _ := os.Hostname()
	var b [3]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Replica is this store's replica id, the owner of the jobs it creates.
func (s *Store) Replica() string { return s.replica }

// LeaseTTL is how long a heartbeat or lease stays good unrenewed.
func (s *Store) LeaseTTL() time.Duration { return s.leaseTTL }

// InterruptStale marks interrupted every running job whose heartbeat is
// older than the lease TTL (its replica died or lost the database) and
// returns their ids. Heartbeats are the writers' clocks: replicas need
// clocks in step to well within the TTL (NTP gives milliseconds).
func (s *Store) InterruptStale(ctx context.Context) ([]string, error) {
	now := time.Now()
	rows, err := s.db.QueryContext(ctx, `UPDATE jobs SET state = ?, finished = ?,
		error = CASE WHEN error = '' THEN ? ELSE error END
		WHERE state = ? AND heartbeat < ? RETURNING id`,
		string(dlqreplay.StateInterrupted), now.UnixMilli(),
		fmt.Sprintf("its queuewatch replica stopped heartbeating for %s", s.leaseTTL),
		string(dlqreplay.StateRunning), now.Add(-s.leaseTTL).UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("mark interrupted jobs: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("mark interrupted jobs: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// RequestCancel asks the replica running job id to cancel it; the owner
// sees the flag at its next progress flush. A job that is not running is
// dlqreplay.ErrJobNotFound.
func (s *Store) RequestCancel(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE jobs SET cancel_requested = TRUE WHERE id = ? AND state = ?`,
		id, string(dlqreplay.StateRunning))
	if err != nil {
		return fmt.Errorf("cancel job %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("job %s is not running: %w", id, dlqreplay.ErrJobNotFound)
	}
	return nil
}

// CancelRequested reports whether another replica asked to cancel job id.
func (s *Store) CancelRequested(ctx context.Context, id string) (bool, error) {
	var yes bool
	err := s.db.QueryRowContext(ctx, `SELECT cancel_requested FROM jobs WHERE id = ?`, id).Scan(&yes)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read cancel request of %s: %w", id, err)
	}
	return yes, nil
}

// AcquireLease takes the lease on dlq for job, unless another job holds a
// lease that has not expired: then it returns that job's id and false.
// The upsert is one statement, so two replicas racing for one DLQ cannot
// both win.
func (s *Store) AcquireLease(ctx context.Context, dlq, job string) (holder string, ok bool, err error) {
	now := time.Now()
	if _, err := s.db.ExecContext(ctx, `INSERT INTO dlq_leases (dlq, job_id, owner, expires) VALUES (?, ?, ?, ?)
		ON CONFLICT (dlq) DO UPDATE SET job_id = excluded.job_id, owner = excluded.owner, expires = excluded.expires
		WHERE dlq_leases.expires < ?`,
		dlq, job, s.replica, now.Add(s.leaseTTL).UnixMilli(), now.UnixMilli()); err != nil {
		return "", false, fmt.Errorf("lease %s: %w", dlq, err)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT job_id FROM dlq_leases WHERE dlq = ?`, dlq).Scan(&holder); err != nil {
		return "", false, fmt.Errorf("lease %s: %w", dlq, err)
	}
	return holder, holder == job, nil
}

// LeaseHolder returns the job holding an unexpired lease on dlq, or "".
func (s *Store) LeaseHolder(ctx context.Context, dlq string) (string, error) {
	var job string
	err := s.db.QueryRowContext(ctx, `SELECT job_id FROM dlq_leases WHERE dlq = ? AND expires >= ?`,
		dlq, time.Now().UnixMilli()).Scan(&job)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the lease of %s: %w", dlq, err)
	}
	return job, nil
}

// RenewLeases extends every lease job holds by the TTL.
func (s *Store) RenewLeases(ctx context.Context, job string) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE dlq_leases SET expires = ? WHERE job_id = ?`,
		time.Now().Add(s.leaseTTL).UnixMilli(), job); err != nil {
		return fmt.Errorf("renew leases of %s: %w", job, err)
	}
	return nil
}

// ReleaseLeases gives up every lease job holds.
func (s *Store) ReleaseLeases(ctx context.Context, job string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM dlq_leases WHERE job_id = ?`, job); err != nil {
		return fmt.Errorf("release leases of %s: %w", job, err)
	}
	return nil
}

// Ping reports whether the database answers (queuewatch check).
func (s *Store) Ping(ctx context.Context) error { return s.db.db.PingContext(ctx) }
