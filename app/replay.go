package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
)

// Replay runs one DLQ job to its end, as `queuewatch replay` does: the same
// service, checks and receipts as the API. progress, when set, is called
// with the job's state about every 200 ms while it runs.
func Replay(ctx context.Context, cfg *config.Config, req dlqreplay.Request, progress func(dlqreplay.Job), log *slog.Logger) (dlqreplay.Receipt, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	access, err := newBrokers(cfg)
	if err != nil {
		return dlqreplay.Receipt{}, err
	}
	svc, closeSvc, err := dlqService(ctx, cfg, access, log)
	if err != nil {
		return dlqreplay.Receipt{}, err
	}
	defer closeSvc()
	if req.DryRun {
		return svc.Run(ctx, req)
	}
	job, err := svc.Start(ctx, req)
	if err != nil {
		return dlqreplay.Receipt{}, err
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for job.State == dlqreplay.StateRunning {
		select {
		case <-ctx.Done():
			// Interrupted: cancel the job so in-flight messages settle
			// (confirmed copies acked, the rest left in the DLQ).
			_ = svc.Cancel(job.ID)
			return svc.Wait(context.Background(), job.ID)
		case <-tick.C:
		}
		if job, err = svc.Job(ctx, job.ID); err != nil {
			return dlqreplay.Receipt{}, err
		}
		if progress != nil {
			progress(job)
		}
	}
	return svc.Wait(ctx, job.ID)
}
