package app

import (
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

const pgOutboxDDL = `CREATE TABLE outbox (
	id bigserial PRIMARY KEY,
	created_at timestamptz NOT NULL DEFAULT now(),
	sent_at timestamptz
)`

func pgOutboxConfig(t *testing.T, dsn string, tables ...string) *config.Config {
	cfg := testConfig(t)
	o := config.Outbox{Name: "orders-db", Driver: config.OutboxPostgres, DSN: dsn}
	for _, tb := range tables {
		o.Tables = append(o.Tables, config.OutboxTable{Table: tb, CreatedAt: "created_at", Pending: "sent_at IS NULL"})
	}
	cfg.Outbox = []config.Outbox{o}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestCheckOutboxWarnsAboutSequentialScan: check connects, reads the table
// and warns, without failing, that the pending query scans a large table,
// naming the partial index it needs.
func TestCheckOutboxWarnsAboutSequentialScan(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutboxDDL,
		"INSERT INTO outbox (sent_at) SELECT now() FROM generate_series(1, 30000)",
		"INSERT INTO outbox (created_at) VALUES (now())",
		"ANALYZE outbox")
	var out strings.Builder
	if err := Check(t.Context(), pgOutboxConfig(t, db.DSN, "outbox"), &out, nil); err != nil {
		t.Fatalf("check: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"ok   outbox:orders-db: 1 tables, 0 replication slots in ",
		"     warn: table outbox: the pending query reads the whole table (a sequential scan over about ",
		" rows) on every poll; add an index: CREATE INDEX CONCURRENTLY outbox_pending_idx ON outbox (created_at) WHERE sent_at IS NULL\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("check output lacks %q:\n%s", want, got)
		}
	}
}

// TestCheckOutboxFailsOnMissingTableAndWrongPassword: a configured table
// that does not exist, or a login that fails, makes check fail and say so.
func TestCheckOutboxFailsOnMissingTableAndWrongPassword(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutboxDDL)
	var out strings.Builder
	err := Check(t.Context(), pgOutboxConfig(t, db.DSN, "outbox", "missing_outbox"), &out, nil)
	if err == nil || !strings.Contains(err.Error(), `outbox:orders-db: table missing_outbox: count pending rows: ERROR: relation "missing_outbox" does not exist`) {
		t.Errorf("check with a missing table: %v\n%s", err, out.String())
	}
	bad := strings.Replace(db.DSN, "queuewatch:queuewatch@", "queuewatch:nope@", 1)
	err = Check(t.Context(), pgOutboxConfig(t, bad, "outbox"), &out, nil)
	if err == nil || !strings.Contains(err.Error(), "password authentication failed") {
		t.Errorf("check with a wrong password: %v", err)
	}
}

// TestServeOutboxMetrics: serve polls a real outbox and exports it; a
// second source with a wrong password is down on its own.
func TestServeOutboxMetrics(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutboxDDL, "INSERT INTO outbox (created_at) SELECT now() - interval '1 minute' FROM generate_series(1, 3)")
	cfg := pgOutboxConfig(t, db.DSN, "outbox")
	bad := cfg.Outbox[0]
	bad.Name, bad.DSN = "billing-db", strings.Replace(db.DSN, "queuewatch:queuewatch@", "queuewatch:nope@", 1)
	cfg.Outbox = append(cfg.Outbox, bad)
	r := start(t, cfg)
	eventually(t, "readyz", func() bool { code, _ := r.get(t, "/readyz"); return code == 200 })
	_, metrics := r.get(t, "/metrics")
	for _, want := range []string{
		`queuewatch_outbox_pending_rows{source="orders-db",table="outbox"} 3`,
		`queuewatch_outbox_status{source="orders-db",status="ok",table="outbox"} 1`,
		`queuewatch_collector_up{broker="outbox",cluster="orders-db"} 1`,
		`queuewatch_collector_up{broker="outbox",cluster="billing-db"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
