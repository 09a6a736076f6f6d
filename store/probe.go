package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"
)

// Probe describes the store that Open or OpenPostgres would open and says
// whether it is reachable, for `queuewatch check`, without creating or
// migrating anything. The description never includes a password.
func Probe(ctx context.Context, driver, dsn, dir string) (string, error) {
	if driver != DriverPostgres {
		path := filepath.Join(dir, FileName)
		if _, err := os.Stat(path); err != nil {
			if os.IsNotExist(err) {
				return "sqlite " + path + " (created on first start)", nil
			}
			return "sqlite " + path, err
		}
		return "sqlite " + path, nil
	}
	where := "postgres"
	if pc, err := pgx.ParseConfig(dsn); err == nil {
		where = fmt.Sprintf("postgres %s:%d/%s", pc.Host, pc.Port, pc.Database)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return where, err
	}
	defer func() { _ = db.Close() }()
	if err := db.PingContext(ctx); err != nil {
		return where, fmt.Errorf("unreachable: %w", err)
	}
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		return where + " (reachable, no schema yet: created on first start)", nil //nolint:nilerr // a missing table is a fresh database, not a failure
	}
	latest := migrations[len(migrations)-1].version
	if int(v.Int64) > latest {
		return where, fmt.Errorf("%w: schema version %d, this build knows up to %d", ErrNewerSchema, v.Int64, latest)
	}
	return fmt.Sprintf("%s (reachable, schema version %d of %d)", where, v.Int64, latest), nil
}
