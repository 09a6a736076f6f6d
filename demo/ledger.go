package demo

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// ledgerPause is the simulated time between two ledger transactions.
	ledgerPause = 500 * time.Millisecond
	// ledgerAbortRate is the share of ledger transactions that abort.
	ledgerAbortRate = 0.1
	// ledgerHoldEvery and ledgerHold make every 20th transaction stay open
	// for a while, holding the last stable offset back.
	ledgerHoldEvery = 20
	ledgerHold      = 15 * time.Second
	// ledgerTxnTimeout is the broker-side transaction timeout; it must stay
	// above ledgerHold at Speed 1.
	ledgerTxnTimeout = time.Minute
)

// runLedgerWriter writes the ledger in transactions: most commit, some
// abort, and one in ledgerHoldEvery stays open for ledgerHold.
func (d *Demo) runLedgerWriter(ctx context.Context, log *slog.Logger) error {
	cl, err := d.newClient(log,
		kgo.TransactionalID(LedgerTransactionalID),
		kgo.TransactionTimeout(ledgerTxnTimeout),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	for txn := int64(1); d.sleep(ctx, ledgerPause); txn++ {
		if err := d.ledgerTransaction(ctx, cl, txn); err != nil {
			if ctx.Err() != nil {
				abortOnShutdown(ctx, log, cl)
				return ctx.Err()
			}
			log.Warn("ledger transaction failed", "txn", txn, "err", err)
			abortOnShutdown(ctx, log, cl)
		}
	}
	return ctx.Err()
}

// ledgerTransaction runs one transaction of one to five entries.
func (d *Demo) ledgerTransaction(ctx context.Context, cl *kgo.Client, txn int64) error {
	if err := cl.BeginTransaction(); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	records := make([]*kgo.Record, 1+rand.IntN(5))
	for i := range records {
		records[i] = ledgerRecord(txn, i)
	}
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		return fmt.Errorf("produce ledger entries: %w", err)
	}
	if txn%ledgerHoldEvery == 0 && !d.sleep(ctx, ledgerHold) {
		return ctx.Err()
	}
	end := kgo.TryCommit
	if rand.Float64() < ledgerAbortRate {
		end = kgo.TryAbort
	}
	if err := cl.EndTransaction(ctx, end); err != nil {
		return fmt.Errorf("end transaction: %w", err)
	}
	return nil
}

// abortOnShutdown aborts a transaction left open by a failure or by
// cancellation. It uses its own short deadline because ctx may already be
// cancelled, and an open transaction would otherwise linger on the broker
// until its timeout.
func abortOnShutdown(ctx context.Context, log *slog.Logger, cl *kgo.Client) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := cl.AbortBufferedRecords(actx); err != nil {
		log.Warn("abort buffered ledger entries", "err", err)
	}
	if err := cl.EndTransaction(actx, kgo.TryAbort); err != nil && ctx.Err() == nil {
		log.Warn("abort ledger transaction", "err", err)
	}
}
