package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
		"ok   outbox:orders-db: 1 table, 0 replication slots in ",
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

// brokenOutboxConfig is orders-db on db plus billing-db, whose DSN names
// a CA file that config validation read and that is gone when the source
// starts: a source that cannot start.
func brokenOutboxConfig(t *testing.T, db *testenv.Database) *config.Config {
	t.Helper()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pem, err := os.ReadFile("../config/testdata/tls/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, pem, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := pgOutboxConfig(t, db.DSN, "outbox")
	bad := cfg.Outbox[0]
	bad.Name, bad.DSN = "billing-db", "postgres://queuewatch:s3cret@127.0.0.1:5432/x?sslmode=verify-full&sslrootcert="+ca
	cfg.Outbox = append(cfg.Outbox, bad)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(ca); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestCheckOutboxSourceThatCannotStart: check reports the source that
// cannot start as failed, with why, and still checks the others.
func TestCheckOutboxSourceThatCannotStart(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutboxDDL)
	var out strings.Builder
	err := Check(t.Context(), brokenOutboxConfig(t, db), &out, nil)
	want := "outbox:billing-db: cannot start: outbox billing-db: not a PostgreSQL DSN: failed to configure TLS (unable to read CA file"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("check error = %v, want one containing %q", err, want)
	}
	if !strings.Contains(out.String(), "ok   outbox:orders-db: 1 table,") {
		t.Errorf("check output lacks the working source:\n%s", out.String())
	}
}

// TestServeOutboxSourceThatCannotStart: serve runs with a source that
// cannot start; that source is down on its own, the other is polled.
func TestServeOutboxSourceThatCannotStart(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutboxDDL, "INSERT INTO outbox (created_at) VALUES (now())")
	cfg := brokenOutboxConfig(t, db)
	ctx, cancel := context.WithCancel(t.Context())
	done, addr := make(chan error, 1), make(chan string, 1)
	go func() {
		// Not start(t, cfg): it validates the config again, which now
		// refuses the missing CA file.
		done <- Run(ctx, Options{Config: cfg, Listen: "127.0.0.1:0", Listening: func(a string) { addr <- a }})
	}()
	r := &running{done: done, stop: cancel}
	select {
	case a := <-addr:
		r.base = "http://" + a
	case err := <-done:
		t.Fatalf("Run returned before listening: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not start listening")
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	eventually(t, "readyz", func() bool { code, _ := r.get(t, "/readyz"); return code == 200 })
	_, metrics := r.get(t, "/metrics")
	for _, want := range []string{
		`queuewatch_outbox_pending_rows{source="orders-db",table="outbox"} 1`,
		`queuewatch_collector_up{broker="outbox",cluster="orders-db"} 1`,
		`queuewatch_collector_up{broker="outbox",cluster="billing-db"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestCheckOutboxFailingTableKeepsOtherWarnings: a table that cannot be
// read fails check, and the other tables still get their index advice.
func TestCheckOutboxFailingTableKeepsOtherWarnings(t *testing.T) {
	db := testenv.Postgres(t)
	db.Exec(t, pgOutboxDDL,
		"INSERT INTO outbox (sent_at) SELECT now() FROM generate_series(1, 30000)",
		"ANALYZE outbox")
	var out strings.Builder
	err := Check(t.Context(), pgOutboxConfig(t, db.DSN, "missing_outbox", "outbox"), &out, nil)
	if err == nil || !strings.Contains(err.Error(), "table missing_outbox") {
		t.Errorf("check with a missing table: %v", err)
	}
	want := "     warn: table outbox: the pending query reads the whole table"
	if !strings.Contains(out.String(), want) {
		t.Errorf("check output lacks %q:\n%s", want, out.String())
	}
}

// TestServeOutboxMissingSlot: a configured slot that does not exist has
// no lag (null in the API, no series), and every status its stateset
// exports is one docs/outbox.md lists for it.
func TestServeOutboxMissingSlot(t *testing.T) {
	db := testenv.Postgres(t)
	cfg := testConfig(t)
	cfg.Outbox = []config.Outbox{{Name: "orders-db", Driver: config.OutboxPostgres, DSN: db.DSN, ReplicationSlots: []string{"no_such_slot"}}}
	r := start(t, cfg)
	eventually(t, "readyz", func() bool { code, _ := r.get(t, "/readyz"); return code == 200 })
	_, body := r.get(t, "/api/v1/outbox")
	var api struct {
		Slots []map[string]any `json:"slots"`
	}
	if err := json.Unmarshal([]byte(body), &api); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if len(api.Slots) != 1 || api.Slots[0]["slot"] != "no_such_slot" || api.Slots[0]["lag_bytes"] != nil || api.Slots[0]["status"] != "error" {
		t.Errorf("slots = %v, want no_such_slot in error with lag_bytes null", api.Slots)
	}
	_, metrics := r.get(t, "/metrics")
	if strings.Contains(metrics, "queuewatch_outbox_replication_slot_lag_bytes{") {
		t.Errorf("/metrics has a lag for the missing slot")
	}
	doc, err := os.ReadFile("../docs/outbox.md")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for line := range strings.Lines(string(doc)) {
		if strings.HasPrefix(line, "| `queuewatch_outbox_replication_slot_status` |") {
			row = line
		}
	}
	statuses := regexp.MustCompile(`queuewatch_outbox_replication_slot_status\{[^}]*status="([a-z]+)"`).FindAllStringSubmatch(metrics, -1)
	if len(statuses) == 0 {
		t.Fatalf("/metrics has no slot status:\n%s", metrics)
	}
	for _, m := range statuses {
		if !regexp.MustCompile(`\b` + m[1] + `\b`).MatchString(row) {
			t.Errorf("docs/outbox.md's slot status row does not list %q, which /metrics exports:\n%s", m[1], row)
		}
	}
}
