package demo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// The demo's outbox: an embedded SQLite database that needs no server.
const (
	// OutboxSource is the outbox source's name in the demo.
	OutboxSource = "orders-db"
	// OutboxTable is the outbox table; a row is pending while SentAt is NULL.
	OutboxTable = "outbox"
	// OutboxCreatedAt is the row's creation time in Unix seconds (REAL).
	OutboxCreatedAt = "created_at"
	// OutboxPending is the SQL condition true for an unsent row.
	OutboxPending = "sent_at IS NULL"
)

// The order service's pace and the relay's stalls, in simulated time.
const (
	// orderRate is orders per simulated second; each writes one outbox row.
	orderRate = 4.0
	// relayTick is how often the relay looks for pending rows.
	relayTick = time.Second
	// relayBatch bounds the rows one relay pass publishes.
	relayBatch = 200
	// stallEvery and stallFor: the relay stalls for stallFor once every
	// stallEvery, so the outbox goes ok → stall → ok a dozen times an
	// hour. A stall is only called once a whole status window (10 polls,
	// 50 s at the demo's 5 s interval) saw nothing published, so the relay
	// stays stuck well beyond that.
	stallEvery = 5 * time.Minute
	stallFor   = 90 * time.Second
)

// OutboxOptions configure StartOutbox.
type OutboxOptions struct {
	// Path is the SQLite database file; it is created if missing.
	Path   string
	Logger *slog.Logger
	// Speed is as in Options.
	Speed float64
}

// Outbox is the demo's transactional outbox: an order service writes an
// order and its OrderPlaced event in one transaction, and a relay marks
// events published a second later, except while it stalls. The relay
// stands for a polling publisher; the demo's Kafka traffic comes from the
// producer service, so the relay does not send the rows anywhere.
type Outbox struct {
	w       *sql.DB // the services' pool: one connection, SQLite has one writer
	r       *sql.DB // the watcher's own pool, read-only
	log     *slog.Logger
	speed   float64
	stalled atomic.Bool

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

const outboxSchema = `
CREATE TABLE IF NOT EXISTS orders (
	id INTEGER PRIMARY KEY,
	customer TEXT NOT NULL,
	total REAL NOT NULL,
	created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
	id INTEGER PRIMARY KEY,
	aggregate_id INTEGER NOT NULL,
	event_type TEXT NOT NULL,
	payload TEXT NOT NULL,
	created_at REAL NOT NULL,
	sent_at REAL
);
-- The index queuewatch's pending query needs: only unsent rows, by age.
CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (created_at) WHERE sent_at IS NULL;
`

// StartOutbox creates the outbox database and starts the order service and
// the relay. They stop when ctx is cancelled or Close is called.
func StartOutbox(ctx context.Context, opts OutboxOptions) (*Outbox, error) {
	o := &Outbox{log: opts.Logger, speed: opts.Speed}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	if o.speed <= 0 {
		o.speed = 1
	}
	base := "file:" + opts.Path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
	w, err := sql.Open("sqlite", base+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open demo outbox: %w", err)
	}
	w.SetMaxOpenConns(1)
	if _, err := w.ExecContext(ctx, outboxSchema); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("create demo outbox: %w", err)
	}
	r, err := sql.Open("sqlite", base+"&mode=ro")
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open demo outbox for reading: %w", err)
	}
	o.w, o.r = w, r
	svcCtx, cancel := context.WithCancel(ctx)
	o.cancel = cancel
	o.goService(svcCtx, "order-service", o.runOrderService)
	o.goService(svcCtx, "outbox-relay", o.runRelay)
	o.log.Info("demo outbox started", "path", opts.Path)
	return o, nil
}

// ReadDB is a pool on the outbox database for the watcher alone, so its
// pool settings never throttle the demo's services.
func (o *Outbox) ReadDB() *sql.DB { return o.r }

// Stalled reports whether the relay is stalled right now.
func (o *Outbox) Stalled() bool { return o.stalled.Load() }

// Close stops the services, waits for them and closes the database.
func (o *Outbox) Close() {
	o.closeOnce.Do(func() {
		o.cancel()
		o.wg.Wait()
		_ = o.r.Close()
		_ = o.w.Close()
		o.log.Info("demo outbox stopped")
	})
}

func (o *Outbox) goService(ctx context.Context, name string, run func(ctx context.Context) error) {
	o.wg.Go(func() {
		if err := run(ctx); err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
			o.log.Error("demo service stopped", "service", name, "err", err)
		}
	})
}

func (o *Outbox) scale(v time.Duration) time.Duration {
	return max(time.Duration(float64(v)/o.speed), 10*time.Millisecond)
}

// unixNow is the time as the outbox stores it: Unix seconds.
func unixNow() float64 { return float64(time.Now().UnixMicro()) / 1e6 }

// runOrderService places orders at orderRate, each order row and its
// outbox row in one transaction: the transactional outbox.
func (o *Outbox) runOrderService(ctx context.Context) error {
	tick := time.NewTicker(o.scale(250 * time.Millisecond))
	defer tick.Stop()
	owed := 0.0
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		owed += orderRate * 0.25
		for ; owed >= 1; owed-- {
			if err := o.placeOrder(ctx); err != nil && ctx.Err() == nil {
				o.log.Warn("place order", "err", err)
			}
		}
	}
}

func (o *Outbox) placeOrder(ctx context.Context) (err error) {
	tx, err := o.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	now := unixNow()
	total := float64(rand.IntN(20000)) / 100
	res, err := tx.ExecContext(ctx, `INSERT INTO orders (customer, total, created_at) VALUES (?, ?, ?)`,
		fmt.Sprintf("c-%04d", rand.IntN(5000)), total, now)
	if err != nil {
		return fmt.Errorf("insert order: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("order id: %w", err)
	}
	payload := fmt.Sprintf(`{"order_id":%d,"total":%.2f}`, id, total)
	if _, err := tx.ExecContext(ctx, `INSERT INTO outbox (aggregate_id, event_type, payload, created_at) VALUES (?, 'OrderPlaced', ?, ?)`,
		id, payload, now); err != nil {
		return fmt.Errorf("insert outbox row: %w", err)
	}
	return tx.Commit()
}

// runRelay marks pending rows published, oldest first, every relayTick;
// once every stallEvery it stalls for stallFor, as a relay does whose
// broker connection hangs.
func (o *Outbox) runRelay(ctx context.Context) error {
	nextStall := time.Now().Add(o.scale(stallEvery / 4)) // the first stall comes early
	for {
		if !time.Now().Before(nextStall) {
			o.stalled.Store(true)
			o.log.Info("demo outbox relay stalls", "for", o.scale(stallFor))
			if !sleepCtx(ctx, o.scale(stallFor)) {
				return ctx.Err()
			}
			o.stalled.Store(false)
			nextStall = time.Now().Add(o.scale(stallEvery))
		}
		if err := o.relayOnce(ctx); err != nil && ctx.Err() == nil {
			o.log.Warn("relay outbox rows", "err", err)
		}
		if !sleepCtx(ctx, o.scale(relayTick)) {
			return ctx.Err()
		}
	}
}

// keepSent is how long published rows stay before the relay deletes
// them, so the demo's database does not grow for ever.
const keepSent = 10 * time.Minute

func (o *Outbox) relayOnce(ctx context.Context) error {
	now := unixNow()
	if _, err := o.w.ExecContext(ctx, `UPDATE outbox SET sent_at = ? WHERE id IN (
		SELECT id FROM outbox WHERE sent_at IS NULL ORDER BY created_at LIMIT ?)`, now, relayBatch); err != nil {
		return fmt.Errorf("mark rows sent: %w", err)
	}
	if _, err := o.w.ExecContext(ctx, `DELETE FROM outbox WHERE sent_at < ?`, now-keepSent.Seconds()); err != nil {
		return fmt.Errorf("delete old sent rows: %w", err)
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
