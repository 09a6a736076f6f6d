package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	brokeroutbox "github.com/queuewatch/queuewatch/brokers/outbox"
	"github.com/queuewatch/queuewatch/queue"
)

// Options configure a Source.
type Options struct {
	// DB is the access to the source's database (brokers/outbox), built
	// in app; the source does not close it.
	DB     *brokeroutbox.DB
	Tables []Table
	// Slots are PostgreSQL logical replication slot names.
	Slots []string
}

// Source polls one outbox database.
type Source struct {
	name   string
	db     *brokeroutbox.DB
	tables []Table
	slots  []string

	mu   sync.Mutex
	prev map[string]tableState
}

// tableState is what the publish rate needs from the previous poll.
type tableState struct {
	pending int64
	dbNow   any // the database's time at that poll, bound as the next cutoff
	at      time.Time
}

// New creates the source. It does no I/O: an unreachable database fails
// polls, not startup.
func New(opts Options) (*Source, error) {
	if opts.DB == nil {
		return nil, errors.New("outbox source: no database")
	}
	s := &Source{
		name: opts.DB.Name(), db: opts.DB, tables: opts.Tables, slots: opts.Slots,
		prev: map[string]tableState{},
	}
	if len(s.slots) > 0 && s.db.Dialect() != brokeroutbox.Postgres {
		return nil, fmt.Errorf("outbox %s: replication slots need PostgreSQL", s.name)
	}
	return s, nil
}

// Broker is queue.Outbox.
func (s *Source) Broker() queue.Broker { return queue.Outbox }

// Cluster is the source's configured name.
func (s *Source) Cluster() string { return s.name }

// Poll reads every table and slot once. It fails as a whole only when the
// database cannot be reached; a table or slot that cannot be read carries
// its error.
func (s *Source) Poll(ctx context.Context) (*queue.Snapshot, error) {
	start := time.Now()
	if err := s.db.Connect(ctx); err != nil {
		return nil, err
	}
	snap := &queue.Snapshot{Broker: queue.Outbox, Cluster: s.name, Time: start}
	for _, t := range s.tables {
		ot := s.pollTable(ctx, t)
		if ot.Err != "" {
			snap.Partial = append(snap.Partial, "table "+t.Table+": "+ot.Err)
		}
		snap.OutboxTables = append(snap.OutboxTables, ot)
	}
	if len(s.slots) > 0 {
		snap.Slots = s.pollSlots(ctx)
		for _, sl := range snap.Slots {
			if sl.Err != "" {
				snap.Partial = append(snap.Partial, "slot "+sl.Slot+": "+sl.Err)
			}
		}
	}
	snap.Duration = time.Since(start)
	return snap, nil
}

// pollTable reads one table and derives its publish rate from the previous
// poll of it.
func (s *Source) pollTable(ctx context.Context, t Table) queue.OutboxTable {
	ot := queue.OutboxTable{Source: s.name, Table: t.Table}
	s.mu.Lock()
	prev, hasPrev := s.prev[t.Table]
	s.mu.Unlock()
	now := time.Now()
	r, err := s.readTable(ctx, t, prev.dbNow)
	if err != nil {
		s.mu.Lock()
		delete(s.prev, t.Table) // the next rate needs two good polls in a row
		s.mu.Unlock()
		ot.Err = err.Error()
		return ot
	}
	ot.Pending = r.pending
	if r.oldest.Valid {
		ot.OldestPendingAge = time.Duration(max(r.oldest.Float64, 0) * float64(time.Second))
	}
	if hasPrev {
		if dt := now.Sub(prev.at).Seconds(); dt > 0 {
			published := max(prev.pending-r.stillPending, 0)
			ot.PublishRate, ot.HasPublishRate = float64(published)/dt, true
		}
	}
	s.mu.Lock()
	s.prev[t.Table] = tableState{pending: r.pending, dbNow: r.dbNow, at: now}
	s.mu.Unlock()
	return ot
}

type tableRead struct {
	pending, stillPending int64
	oldest                sql.NullFloat64
	dbNow                 any
}

// readTable runs the pending query in a read-only transaction bounded by
// the statement timeout.
func (s *Source) readTable(ctx context.Context, t Table, cutoff any) (tableRead, error) {
	var r tableRead
	err := s.db.ReadOnly(ctx, func(ctx context.Context, tx *sql.Tx) error {
		q := pendingQuery(s.db.Dialect(), t, s.db.StatementTimeout(), s.db.MariaDB())
		return tx.QueryRowContext(ctx, q, cutoff).Scan(&r.pending, &r.oldest, &r.stillPending, &r.dbNow)
	})
	if err != nil {
		return r, fmt.Errorf("count pending rows: %w", err)
	}
	return r, nil
}

// pollSlots reads every configured replication slot in one query, in a
// read-only transaction bounded by the statement timeout like the tables'.
func (s *Source) pollSlots(ctx context.Context) []queue.ReplicationSlot {
	out := make([]queue.ReplicationSlot, len(s.slots))
	for i, name := range s.slots {
		out[i] = queue.ReplicationSlot{Source: s.name, Slot: name}
	}
	var found map[string]queue.ReplicationSlot
	err := s.db.ReadOnly(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		found, err = readSlots(ctx, tx, s.slots)
		return err
	})
	for i := range out {
		sl, ok := found[out[i].Slot]
		switch {
		case err != nil:
			out[i].Err = fmt.Sprintf("read pg_replication_slots: %v", err)
			out[i].LagUnknown = "pg_replication_slots could not be read"
		case !ok:
			// Unknown, not 0: no slot holds WAL back, but none confirms
			// anything either, and a 0 would read as a caught-up client.
			out[i].Err = "no replication slot named " + out[i].Slot
			out[i].LagUnknown = "the slot does not exist"
		default:
			out[i].Active, out[i].LagBytes, out[i].LagUnknown = sl.Active, sl.LagBytes, sl.LagUnknown
		}
	}
	return out
}

// readSlots runs slotsQuery for names, keyed by slot name.
func readSlots(ctx context.Context, tx *sql.Tx, names []string) (map[string]queue.ReplicationSlot, error) {
	rows, err := tx.QueryContext(ctx, slotsQuery, names)
	if err != nil {
		return nil, err
	}
	defer rows.Close() //nolint:errcheck // rows.Err reports a failed read; Close only returns the connection
	found := map[string]queue.ReplicationSlot{}
	for rows.Next() {
		var sl queue.ReplicationSlot
		var lag sql.NullInt64
		var slotType, walStatus sql.NullString
		if err := rows.Scan(&sl.Slot, &sl.Active, &lag, &slotType, &walStatus); err != nil {
			return nil, err
		}
		if lag.Valid {
			sl.LagBytes = max(lag.Int64, 0)
		} else {
			sl.LagUnknown = lagUnknownReason(slotType.String, walStatus.String)
		}
		found[sl.Slot] = sl
	}
	return found, rows.Err()
}

// lagUnknownReason says why a slot has neither a confirmed flush nor a
// restart position, from its pg_replication_slots slot_type and
// wal_status.
func lagUnknownReason(slotType, walStatus string) string {
	switch {
	case walStatus == "lost":
		return "the slot was invalidated (wal_status lost): the WAL it needed is gone"
	case slotType == "physical":
		return "physical slot that reserves no WAL yet: no standby has streamed from it"
	}
	return "the slot has neither a confirmed flush nor a restart position"
}
