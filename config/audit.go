package config

import "time"

// Audit store drivers.
const (
	AuditSQLite   = "sqlite"
	AuditPostgres = "postgres"
)

// DefaultAuditLeaseTTL is audit.lease_ttl's default (see Audit).
const DefaultAuditLeaseTTL = 15 * time.Second

// Audit is where DLQ jobs, receipts, archived messages and offset resets
// are recorded. SQLite (the default) keeps them in data_dir, one store per
// process; PostgreSQL is one store that several replicas share, so each
// shows every job and one job per DLQ holds across them.
type Audit struct {
	Driver string `yaml:"driver"` // sqlite|postgres
	// DSN is the PostgreSQL connection string (keep the password in
	// ${ENV}); empty for sqlite, whose store is in data_dir.
	DSN string `yaml:"dsn"`
	// LeaseTTL is how long a running job's heartbeat and its DLQ lease
	// stay good without a renewal: a crashed replica's jobs are marked
	// interrupted, and its DLQs freed, this long after its last flush.
	LeaseTTL time.Duration `yaml:"lease_ttl"`
	// BodyReads records who read which dead letters: auto (the default)
	// for the DLQs a masking rule covers, all, or off. Clear (unmasked)
	// views are recorded whatever this says.
	BodyReads string `yaml:"body_reads"`
}

// Body-read audit settings.
const (
	BodyReadsAuto = "auto"
	BodyReadsAll  = "all"
	BodyReadsOff  = "off"
)

// minLeaseTTL: a job renews every 500ms; a TTL under 2s would call a job
// stopped after three missed flushes, a slow database's ordinary hiccup.
const minLeaseTTL = 2 * time.Second

func (a *Audit) validate(p *problems) {
	switch a.Driver {
	case AuditSQLite:
		if a.DSN != "" {
			p.add("audit.dsn", "is for driver postgres; sqlite keeps the store in data_dir")
		}
	case AuditPostgres:
		if a.DSN == "" {
			p.add("audit.dsn", "required for driver postgres (postgres://user:${PASSWORD}@host:5432/queuewatch)")
		} else if err := CheckDSN(OutboxPostgres, a.DSN); err != nil {
			p.add("audit.dsn", "%v", err)
		}
	default:
		p.add("audit.driver", "must be sqlite or postgres, got %s", quoteScalar(a.Driver))
	}
	if a.BodyReads == "" {
		a.BodyReads = BodyReadsAuto
	}
	switch a.BodyReads {
	case BodyReadsAuto, BodyReadsAll, BodyReadsOff:
	default:
		p.add("audit.body_reads", "must be auto, all or off, got %s", quoteScalar(a.BodyReads))
	}
	if a.LeaseTTL < minLeaseTTL {
		p.add("audit.lease_ttl", "must be at least %s, got %s", minLeaseTTL, a.LeaseTTL)
	}
}
