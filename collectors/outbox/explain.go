package outbox

import (
	"context"
	"database/sql"
	"encoding/json"
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
	for _, t := range s.tables {
		rows, err := s.explain(ctx, t)
		if err != nil {
			return out, fmt.Errorf("explain table %s: %w", t.Table, err)
		}
		if rows >= largeTable {
			out = append(out, fmt.Sprintf("table %s: the pending query reads the whole table (a sequential scan over about %d rows) on every poll; add an index: %s",
				t.Table, rows, suggestIndex(s.db.Dialect(), t)))
		}
	}
	return out, nil
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
	name := strings.ReplaceAll(t.Table, ".", "_") + "_pending_idx"
	if d == brokeroutbox.Postgres {
		return fmt.Sprintf("CREATE INDEX CONCURRENTLY %s ON %s (%s) WHERE %s", name, t.Table, t.CreatedAt, t.Pending)
	}
	cols := append(conditionColumns(t.Pending), t.CreatedAt)
	return fmt.Sprintf("CREATE INDEX %s ON %s (%s)", name, t.Table, strings.Join(dedupe(cols), ", "))
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
