package queue

import "time"

// OutboxTable is the backlog of one transactional-outbox table: rows a
// polling publisher has not sent yet.
type OutboxTable struct {
	Source string // the outbox source's configured name
	Table  string
	// Pending is the number of unsent rows.
	Pending int64
	// OldestPendingAge is the age of the oldest unsent row; zero with no
	// pending rows.
	OldestPendingAge time.Duration
	// PublishRate is rows sent per second, derived from successive polls:
	// the rows pending at the previous poll that are pending no longer,
	// divided by the time between the polls. Rows inserted and sent
	// between two polls are not seen, so it is a lower bound.
	// HasPublishRate is false until two polls are known.
	PublishRate    float64
	HasPublishRate bool
	Err            string

	Status       Status
	StatusReason string
	// StatusSince is when the current non-ok condition began (see Onset);
	// zero when ok.
	StatusSince time.Time
}

// ReplicationSlot is a PostgreSQL logical replication slot of a CDC
// publisher (such as Debezium's outbox router).
type ReplicationSlot struct {
	Source string
	Slot   string
	// LagBytes is the current WAL position minus the slot's confirmed
	// flush position (its restart position when it confirms none).
	LagBytes int64
	// LagUnknown says why the slot has no lag, such as a physical slot
	// no standby has used, which has neither position; empty when
	// LagBytes is known. An unknown lag is not 0: it is left out of
	// /metrics.
	LagUnknown string
	Active     bool
	Err        string

	Status       Status
	StatusReason string
	// StatusSince is when the current non-ok condition began (see Onset);
	// zero when ok.
	StatusSince time.Time
}

// OutboxPoint is one poll's backlog of an outbox table, kept for charts.
type OutboxPoint struct {
	At               time.Time
	Pending          int64
	OldestPendingAge time.Duration
}

// SlotPoint is one poll's lag of a replication slot, kept for charts.
type SlotPoint struct {
	At       time.Time
	LagBytes int64
	Active   bool
}
