package dlqreplay

import "context"

// Store is the durable record the Service keeps: every job, every
// message's outcome and every archived message, in this package's own
// types. The Service writes a job before its first message moves and
// removes nothing from a DLQ before Archive returned, so a Store must have
// made a write durable when the call returns. package store implements
// it with SQLite or PostgreSQL; the Service needs nothing else from it.
type Store interface {
	// CreateJob records a job before it starts.
	CreateJob(ctx context.Context, j Job) error
	// UpdateJob stores j's state, error, end time and progress and appends
	// outcomes numbered from firstSeq, atomically. An outcome already stored
	// under one of those numbers is replaced, so a failed flush can be
	// retried with the same numbers.
	UpdateJob(ctx context.Context, j Job, firstSeq int, outcomes []Outcome) error
	// Job returns one job; the error wraps ErrJobNotFound when there is none.
	Job(ctx context.Context, id string) (Job, error)
	// Jobs lists the jobs q selects, newest first.
	Jobs(ctx context.Context, q JobQuery) ([]Job, error)
	// Outcomes returns a job's outcomes in the order they were reported.
	Outcomes(ctx context.Context, jobID string) ([]Outcome, error)
	// Done reports which of ids (all, when ids is nil) earlier jobs on
	// dlqID recorded with one of results.
	Done(ctx context.Context, dlqID string, ids []string, results ...Result) (map[string]bool, error)
	// Archive saves messages before they are deleted, all or none, stamps
	// their ArchivedAt and returns their archive IDs in order. The rows
	// are not Deleted until MarkDeleted says so.
	Archive(ctx context.Context, msgs []Archived) ([]int64, error)
	// MarkDeleted records that archived messages were removed from their
	// DLQ (the session settled the removal).
	MarkDeleted(ctx context.Context, ids []int64) error
	// Archived returns archived messages, oldest first.
	Archived(ctx context.Context, q ArchiveQuery) ([]Archived, error)
	// MarkRestored records that archived messages were published to target
	// (a DLQ-style ID).
	MarkRestored(ctx context.Context, ids []int64, target string) error
	// RecordInFlight records, durably and before they are published, the
	// DLQ ids of messages job is about to copy out of dlqID.
	RecordInFlight(ctx context.Context, job, dlqID string, ids []string) error
	// InFlight returns the messages of dlqID that a job other than job
	// may have left in two places (DLQ message id → that job's id): ones
	// it recorded in flight while running, that it stopped without
	// settling (interrupted, or still running although job holds the
	// DLQ: its replica died and is not yet found out), that have no
	// outcome of it, and that no later job moved or deleted since.
	InFlight(ctx context.Context, dlqID, job string) (map[string]string, error)
}

// ArchiveQuery selects archived messages. The criteria that are set
// combine with AND; Limit 0 means the store's default (1000).
type ArchiveQuery struct {
	IDs   []int64
	DLQ   string
	JobID string
	// Visible, when set, keeps the rows of the DLQs it accepts, in the
	// query and so before Limit: a reader scoped to some DLQs gets its
	// newest rows, not what is left of everyone's newest.
	Visible func(dlqID string) bool
	Limit   int
}

// JobQuery selects jobs: of one DLQ (DLQ, when set) and of the DLQs
// Visible accepts (as ArchiveQuery's); Limit 0 means 100.
type JobQuery struct {
	DLQ     string
	Visible func(dlqID string) bool
	Limit   int
}
