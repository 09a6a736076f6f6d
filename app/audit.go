package app

import (
	"context"
	"fmt"
	"io"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/store"
)

// openAudit opens the audit store that config audit names: SQLite in
// data_dir (this process's alone) or the PostgreSQL database that several
// replicas share.
func openAudit(ctx context.Context, cfg *config.Config) (*store.Store, error) {
	if cfg.Audit.Driver == config.AuditPostgres {
		s, err := store.OpenPostgres(ctx, cfg.Audit.DSN, cfg.Audit.LeaseTTL)
		if err != nil {
			return nil, fmt.Errorf("audit store (postgres): %w", err)
		}
		return s, nil
	}
	s, err := store.Open(ctx, cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("audit store in %s: %w", cfg.DataDir, err)
	}
	return s, nil
}

// checkAudit writes check's line for the audit store: which store, and
// whether it answers. It opens nothing for good.
func checkAudit(ctx context.Context, cfg *config.Config, w io.Writer) error {
	what, err := store.Probe(ctx, cfg.Audit.Driver, cfg.Audit.DSN, cfg.DataDir)
	if err != nil {
		fmt.Fprintf(w, "FAIL audit: %s: %v\n", what, err)
		return fmt.Errorf("audit store: %s: %w", what, err)
	}
	fmt.Fprintf(w, "ok   audit: %s\n", what)
	return nil
}
