package outbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	brokeroutbox "github.com/queuewatch/queuewatch/brokers/outbox"
)

// largeTable is the estimated row count from which a sequential scan per
// poll is worth a warning: below it, reading the table costs little.
const largeTable = 10_000

// Advise runs EXPLAIN on each table's pending query and returns a warning
// for every table the database would read whole (a sequential scan, or
// MySQL's type ALL) although it holds at least largeTable rows, naming the
// index that would make the query cheap. It is for check, not for polls.
func (s *Source) Advise(ctx context.Context) ([]string, error) {
	if s.db.Dialect() == brokeroutbox.SQLite {
		return nil, nil
	}
	var out []string
	var errs []error
	for _, t := range s.tables {
		// A table that cannot be explained is reported; the others are
		// still advised.
		msg, err := s.adviseTable(ctx, t)
		if err != nil {
			errs = append(errs, fmt.Errorf("explain table %s: %w", t.Table, err))
		} else if msg != "" {
			out = append(out, msg)
		}
	}
	return out, errors.Join(errs...)
}

// adviseTable is the warning for t, or "" when its pending query is cheap.
// When the index it would suggest exists under that name, the planner does
// not use it: stale statistics, or an index that does not match.
func (s *Source) adviseTable(ctx context.Context, t Table) (string, error) {
	rows, err := s.explain(ctx, t)
	if err != nil || rows < largeTable {
		return "", err
	}
	d := s.db.Dialect()
	msg := fmt.Sprintf("table %s: the pending query reads the whole table (a sequential scan over about %d rows) on every poll", t.Table, rows)
	name := indexName(t)
	exists, err := s.indexExists(ctx, t, name)
	if err != nil {
		return "", fmt.Errorf("look up index %s: %w", name, err)
	}
	if !exists {
		return msg + "; add an index: " + suggestIndex(d, t), nil
	}
	analyze := "ANALYZE " + t.Table
	if d == brokeroutbox.MySQL {
		analyze = "ANALYZE TABLE " + t.Table
	}
	return fmt.Sprintf("%s although index %s exists: if %s does not help, it does not serve the query; replace it with %s",
		msg, name, analyze, suggestIndex(d, t)), nil
}

// indexExists reports whether an index called name exists where
// suggestIndex would create it: in t's schema on PostgreSQL (index names
// are unique per schema), on t itself on MySQL and MariaDB (per table).
func (s *Source) indexExists(ctx context.Context, t Table, name string) (bool, error) {
	var n int
	err := s.db.ReadOnly(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if s.db.Dialect() == brokeroutbox.Postgres {
			return tx.QueryRowContext(ctx, `SELECT count(*) FROM pg_class
WHERE relname = $1 AND relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = to_regclass($2))`, name, t.Table).Scan(&n)
		}
		schema, table, qualified := strings.Cut(t.Table, ".")
		if !qualified {
			schema, table = "", t.Table
		}
		return tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.statistics
WHERE table_schema = COALESCE(NULLIF(?, ''), DATABASE()) AND table_name = ? AND index_name = ?`, schema, table, name).Scan(&n)
	})
	return n > 0, err
}

// explain returns the estimated size of t when the pending query scans it
// whole, and 0 when it uses an index.
func (s *Source) explain(ctx context.Context, t Table) (int64, error) {
	var rows int64
	err := s.db.ReadOnly(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		if s.db.Dialect() == brokeroutbox.Postgres {
			rows, err = explainPostgres(ctx, tx, t)
		} else {
			rows, err = explainMySQL(ctx, tx, t)
		}
		return err
	})
	return rows, err
}

// pgPlan is the part of PostgreSQL's JSON plan that tells a full scan.
type pgPlan struct {
	NodeType string   `json:"Node Type"`
	Relation string   `json:"Relation Name"`
	Plans    []pgPlan `json:"Plans"`
}

func (p pgPlan) seqScan() bool {
	if p.NodeType == "Seq Scan" {
		return true
	}
	for _, c := range p.Plans {
		if c.seqScan() {
			return true
		}
	}
	return false
}

func explainPostgres(ctx context.Context, tx *sql.Tx, t Table) (int64, error) {
	var raw []byte
	if err := tx.QueryRowContext(ctx, explainQuery(brokeroutbox.Postgres, t)).Scan(&raw); err != nil {
		return 0, err
	}
	var plans []struct{ Plan pgPlan }
	if err := json.Unmarshal(raw, &plans); err != nil {
		return 0, fmt.Errorf("read plan: %w", err)
	}
	if len(plans) == 0 || !plans[0].Plan.seqScan() {
		return 0, nil
	}
	// reltuples is -1 for a table never vacuumed or analyzed; the page
	// count then stands in (a page holds tens to hundreds of rows).
	var tuples, pages int64
	err := tx.QueryRowContext(ctx, "SELECT reltuples::bigint, relpages::bigint FROM pg_class WHERE oid = to_regclass($1)", t.Table).Scan(&tuples, &pages)
	if err != nil {
		return 0, fmt.Errorf("table size: %w", err)
	}
	return max(tuples, pages*10), nil
}

func explainMySQL(ctx context.Context, tx *sql.Tx, t Table) (int64, error) {
	rows, err := tx.QueryContext(ctx, explainQuery(brokeroutbox.MySQL, t))
	if err != nil {
		return 0, err
	}
	defer rows.Close() //nolint:errcheck // rows.Err reports a failed read; Close only returns the connection
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	var full int64
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return 0, err
		}
		var typ string
		var n int64
		for i, c := range cols {
			switch strings.ToLower(c) {
			case "type":
				typ = vals[i].String
			case "rows":
				fmt.Sscan(vals[i].String, &n) //nolint:errcheck // a missing estimate stays 0
			}
		}
		if typ == "ALL" {
			full = max(full, n)
		}
	}
	return full, rows.Err()
}

// suggestIndex is the index that serves t's pending query. PostgreSQL gets
// a partial index, which holds only pending rows and so stays as small as
// the backlog; MySQL and MariaDB have none, so the condition's columns lead
// an ordinary index and created_at follows.
func suggestIndex(d brokeroutbox.Dialect, t Table) string {
	name := indexName(t)
	if d == brokeroutbox.Postgres {
		return fmt.Sprintf("CREATE INDEX CONCURRENTLY %s ON %s (%s) WHERE %s", name, t.Table, t.CreatedAt, t.Pending)
	}
	cols := append(conditionColumns(t.Pending), t.CreatedAt)
	return fmt.Sprintf("CREATE INDEX %s ON %s (%s)", name, t.Table, strings.Join(dedupe(cols), ", "))
}

// indexName is the name suggestIndex gives t's index.
func indexName(t Table) string {
	return strings.ReplaceAll(t.Table, ".", "_") + "_pending_idx"
}

var (
	quotedRE = regexp.MustCompile(`'(?:[^']|'')*'`)
	wordRE   = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_$]*(\s*\()?`)
)

// sqlWords are the keywords a pending condition may hold that are not
// columns.
var sqlWords = map[string]bool{
	"IS": true, "NOT": true, "NULL": true, "AND": true, "OR": true, "TRUE": true, "FALSE": true,
	"IN": true, "LIKE": true, "ILIKE": true, "BETWEEN": true, "INTERVAL": true, "CASE": true,
	"WHEN": true, "THEN": true, "ELSE": true, "END": true, "UNKNOWN": true, "CURRENT_TIMESTAMP": true,
	"DAY": true, "HOUR": true, "MINUTE": true, "SECOND": true, "TEXT": true, "INTEGER": true,
}

// conditionColumns guesses the columns a condition reads: its words that
// are not keywords, function names or inside string literals.
func conditionColumns(cond string) []string {
	var cols []string
	for _, w := range wordRE.FindAllString(quotedRE.ReplaceAllString(cond, "''"), -1) {
		if strings.HasSuffix(w, "(") || sqlWords[strings.ToUpper(w)] {
			continue
		}
		cols = append(cols, w)
	}
	return cols
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
