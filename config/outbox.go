package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Outbox drivers.
const (
	OutboxPostgres = "postgres"
	OutboxMySQL    = "mysql" // MariaDB too
)

// Outbox is one database whose transactional-outbox backlog is watched: the
// producer side of lag.
type Outbox struct {
	Name   string `yaml:"name"`
	Driver string `yaml:"driver"` // postgres|mysql
	// DSN is the driver's connection string; keep the password in ${ENV}.
	DSN    string        `yaml:"dsn"`
	Tables []OutboxTable `yaml:"tables"`
	// ReplicationSlots are PostgreSQL logical replication slots of CDC
	// publishers (Debezium's outbox router) whose lag in bytes is watched.
	ReplicationSlots []string `yaml:"replication_slots"`
}

// OutboxTable is one outbox table of a polling publisher: a row is pending
// until the worker marks it sent.
type OutboxTable struct {
	Table string `yaml:"table"`
	// CreatedAt is the row's creation timestamp column.
	CreatedAt string `yaml:"created_at"`
	// Pending is an SQL boolean expression true for an unsent row, such as
	// "sent_at IS NULL".
	Pending string `yaml:"pending"`
}

func (o *Outbox) validate(p *problems, path string) {
	checkName(p, path+".name", o.Name)
	switch o.Driver {
	case OutboxPostgres, OutboxMySQL:
	case "":
		p.add(path+".driver", "required (postgres or mysql)")
	default:
		p.add(path+".driver", "must be postgres or mysql, got %s", quoteScalar(o.Driver))
	}
	if o.DSN == "" {
		p.add(path+".dsn", "required")
	} else if err := CheckDSN(o.Driver, o.DSN); err != nil {
		p.add(path+".dsn", "%v", err)
	}
	if len(o.Tables) == 0 && len(o.ReplicationSlots) == 0 {
		p.add(path, "set tables or replication_slots (or both)")
	}
	if len(o.ReplicationSlots) > 0 && o.Driver == OutboxMySQL {
		p.add(path+".replication_slots", "replication slots are a PostgreSQL feature")
	}
	seen := map[string]int{}
	for i := range o.Tables {
		t := o.Tables[i]
		tp := fmt.Sprintf("%s.tables[%d]", path, i)
		// One entry per table: the table names its series, its publish
		// rate and its status history.
		if j, dup := seen[strings.ToLower(t.Table)]; dup && t.Table != "" {
			p.add(tp+".table", "%s is already watched by tables[%d]: combine the conditions with OR", quoteScalar(t.Table), j)
		}
		seen[strings.ToLower(t.Table)] = i
		switch {
		case t.Table == "":
			p.add(tp+".table", "required")
		case CheckIdentifier(t.Table) != nil:
			p.add(tp+".table", "%v", CheckIdentifier(t.Table))
		}
		switch {
		case t.CreatedAt == "":
			p.add(tp+".created_at", "required (the row's creation timestamp column)")
		case CheckIdentifier(t.CreatedAt) != nil || strings.Contains(t.CreatedAt, "."):
			p.add(tp+".created_at", "%s is not a plain column name", quoteScalar(t.CreatedAt))
		}
		switch {
		case t.Pending == "":
			p.add(tp+".pending", "required (an SQL condition true for an unsent row, such as \"sent_at IS NULL\")")
		case CheckCondition(t.Pending) != nil:
			p.add(tp+".pending", "%v", CheckCondition(t.Pending))
		}
	}
	for i, s := range o.ReplicationSlots {
		if s == "" {
			p.add(fmt.Sprintf("%s.replication_slots[%d]", path, i), "empty slot name")
		}
	}
}

// CheckDSN parses dsn as the driver's own parser will when the source
// starts (pgx for postgres, go-sql-driver for mysql), so that a malformed
// DSN is a config error naming its key instead of a source that cannot
// start. An unknown driver is left to the driver check. The error keeps
// only the parser's reason, never the DSN, which holds the password.
func CheckDSN(driver, dsn string) error {
	switch driver {
	case OutboxPostgres:
		if _, err := pgx.ParseConfig(dsn); err != nil {
			return fmt.Errorf("not a PostgreSQL DSN: %s", pgReason(err))
		}
	case OutboxMySQL:
		if _, err := mysql.ParseDSN(dsn); err != nil {
			return fmt.Errorf("not a MySQL DSN (user:password@tcp(host:3306)/database): %w", err)
		}
	}
	return nil
}

// pgReason is a pgx parse error without the connection string it quotes:
// pgx masks the password there only on a best-effort basis.
func pgReason(err error) string {
	msg := err.Error()
	if pe, ok := errors.AsType[*pgconn.ParseConfigError](err); ok {
		msg = pe.Error()
		if _, reason, found := strings.Cut(msg, "`: "); found {
			return reason
		}
		return "cannot parse it"
	}
	return msg
}

// OutboxAlerts are the thresholds of the outbox alert rules.
type OutboxAlerts struct {
	// PendingAgeHigh is how old the oldest pending row may get: events
	// that late reach their consumers late.
	PendingAgeHigh time.Duration `yaml:"pending_age_high"`
	// SlotLagBytesHigh is how much WAL a replication slot may hold back
	// before the disk it fills becomes a worry.
	SlotLagBytesHigh int64 `yaml:"slot_lag_bytes_high"`
}

var defaultOutboxAlerts = OutboxAlerts{PendingAgeHigh: 10 * time.Minute, SlotLagBytesHigh: 1 << 30}

func (a *OutboxAlerts) validate(p *problems) {
	if a.PendingAgeHigh <= 0 {
		p.add("alerts.outbox.pending_age_high", "must be positive, got %s", a.PendingAgeHigh)
	}
	if a.SlotLagBytesHigh <= 0 {
		p.add("alerts.outbox.slot_lag_bytes_high", "must be positive, got %d", a.SlotLagBytesHigh)
	}
}
