package web

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
)

// countingDLQ counts the reads of a job (Job, and Receipt, which reads it
// too) the server makes.
type countingDLQ struct {
	*fakeDLQ
	jobs, receipts, receiptsOf atomic.Int64
}

func (c *countingDLQ) Job(ctx context.Context, id string) (dlqreplay.Job, error) {
	c.jobs.Add(1)
	return c.fakeDLQ.Job(ctx, id)
}

func (c *countingDLQ) Receipt(ctx context.Context, id string) (dlqreplay.Receipt, error) {
	c.receipts.Add(1)
	return c.fakeDLQ.Receipt(ctx, id)
}

func (c *countingDLQ) ReceiptOf(ctx context.Context, j dlqreplay.Job) (dlqreplay.Receipt, error) {
	c.receiptsOf.Add(1)
	return c.fakeDLQ.ReceiptOf(ctx, j)
}

// TestJobReadOnce: a :job route reads the job once, for its authorization,
// and the handler answers from that read: the job alone, or its receipt
// built on it (the outcomes read beside it). Before, the handler read the
// job again, and the receipt a third time.
func TestJobReadOnce(t *testing.T) {
	f := &countingDLQ{fakeDLQ: newFakeDLQ()}
	s := dlqServer(t, config.AuthBasic, f)
	victor := newClient(t, s, basic("victor", "viewer-pw"))
	for _, tc := range []struct {
		target                     string
		jobs, receipts, receiptsOf int64
	}{
		{"/api/v1/replays/job-old?outcomes=false", 1, 0, 0},
		{"/api/v1/replays/job-old", 1, 0, 1},
	} {
		f.jobs.Store(0)
		f.receipts.Store(0)
		f.receiptsOf.Store(0)
		if rec := victor.do("GET", tc.target, ""); rec.Code != 200 {
			t.Fatalf("GET %s = %d %s", tc.target, rec.Code, rec.Body)
		}
		if j, r, ro := f.jobs.Load(), f.receipts.Load(), f.receiptsOf.Load(); j != tc.jobs || r != tc.receipts || ro != tc.receiptsOf {
			t.Errorf("GET %s: %d Job, %d Receipt, %d ReceiptOf; want %d, %d, %d", tc.target, j, r, ro, tc.jobs, tc.receipts, tc.receiptsOf)
		}
	}
}
