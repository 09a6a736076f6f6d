package dlqreplay

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// replicaStore is a Store that several queuewatch replicas share
// (package store on PostgreSQL). Through it a Service keeps one job per
// DLQ across replicas with a lease row per DLQ — on top of the broker's
// own lock where the broker has one, the only lock where it has none
// (SQS) — takes cancels asked on other replicas, and marks interrupted
// the jobs of a replica that stopped heartbeating. A Store without these
// methods serves one process, whose in-memory lock is enough.
type replicaStore interface {
	// AcquireLease takes dlq's lease for job, or names the job holding it.
	AcquireLease(ctx context.Context, dlq, job string) (holder string, ok bool, err error)
	// LeaseHolder returns the job holding dlq's unexpired lease, or "".
	LeaseHolder(ctx context.Context, dlq string) (string, error)
	// RenewLeases extends job's leases by the TTL.
	RenewLeases(ctx context.Context, job string) error
	// ReleaseLeases gives up job's leases.
	ReleaseLeases(ctx context.Context, job string) error
	// RequestCancel flags a running job for its owner to cancel.
	RequestCancel(ctx context.Context, job string) error
	// CancelRequested reports whether job was flagged.
	CancelRequested(ctx context.Context, job string) (bool, error)
	// InterruptStale marks interrupted the running jobs whose heartbeat
	// (their progress flush) is older than the TTL.
	InterruptStale(ctx context.Context) ([]string, error)
	// LeaseTTL is how long a lease or heartbeat stays good unrenewed.
	LeaseTTL() time.Duration
}

// storeTimeout bounds one lease or cancel call to the shared store.
const storeTimeout = 10 * time.Second

// lease takes the shared store's lease on every DLQ in ids for job, all
// or none; a DLQ another replica's job holds is a *ConflictError naming
// it. The returned func gives them back. A store of one process has no
// leases: lease then holds nothing and returns a no-op.
func (s *Service) lease(ctx context.Context, job string, ids []string) (func(), error) {
	rs, ok := s.opts.Store.(replicaStore)
	if !ok {
		return func() {}, nil
	}
	release := func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
		defer cancel()
		if err := rs.ReleaseLeases(ctx, job); err != nil {
			// The lease then expires after its TTL.
			s.log.Warn("release dlq leases", "job", job, "err", err)
		}
	}
	for _, id := range ids {
		holder, ok, err := rs.AcquireLease(ctx, id, job)
		if err == nil && !ok {
			err = &ConflictError{DLQ: id, JobID: holder}
		}
		if err != nil {
			release()
			return nil, err
		}
	}
	return release, nil
}

// heldElsewhere is a *ConflictError when a job of another replica holds
// dlq's lease: browsing would compete with that job for its messages.
func (s *Service) heldElsewhere(ctx context.Context, dlq string) error {
	rs, ok := s.opts.Store.(replicaStore)
	if !ok {
		return nil
	}
	job, err := rs.LeaseHolder(ctx, dlq)
	if err != nil {
		return fmt.Errorf("browse %s: %w", dlq, err)
	}
	if job != "" {
		return &ConflictError{DLQ: dlq, JobID: job}
	}
	return nil
}

// heartbeat runs with each progress flush of a running job: it renews
// the job's leases and cancels the job when another replica asked to or
// when the store says the job lost its lease.
func (s *Service) heartbeat(j *job, flushErr error) {
	if errors.Is(flushErr, ErrLeaseLost) {
		s.log.Error("another replica marked the job interrupted; stopping it", "job", j.info.ID)
		j.cancel()
		return
	}
	rs, ok := s.opts.Store.(replicaStore)
	if !ok || flushErr != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	id := j.snapshot().ID
	if err := rs.RenewLeases(ctx, id); err != nil {
		s.log.Warn("renew dlq leases", "job", id, "err", err)
	}
	yes, err := rs.CancelRequested(ctx, id)
	if err != nil {
		s.log.Warn("read cancel request", "job", id, "err", err)
	}
	if yes {
		s.log.Info("job cancelled from another replica", "job", id)
		j.cancel()
	}
}

// cancelElsewhere asks the replica running job id to cancel it, through
// the shared store; ErrJobNotFound when no store is shared or the job is
// not running.
func (s *Service) cancelElsewhere(id string) error {
	rs, ok := s.opts.Store.(replicaStore)
	if !ok {
		return fmt.Errorf("job %s: %w", id, ErrJobNotFound)
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return rs.RequestCancel(ctx, id)
}

// reap marks interrupted, every third of the lease TTL, the jobs of
// replicas that stopped heartbeating, until stop is closed. A job is then
// called interrupted between one and one and a third TTLs after its
// replica's last flush.
func (s *Service) reap(rs replicaStore, stop <-chan struct{}) {
	t := time.NewTicker(rs.LeaseTTL() / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		ids, err := rs.InterruptStale(ctx)
		cancel()
		if err != nil {
			s.log.Warn("look for jobs of stopped replicas", "err", err)
		}
		for _, id := range ids {
			s.log.Warn("job marked interrupted: its replica stopped heartbeating", "job", id, "lease_ttl", rs.LeaseTTL())
		}
	}
}
