package config

import (
	"testing"
)

func TestExpand(t *testing.T) {
	env := map[string]string{"USER": "alice", "EMPTY": "", "PASS": "p#ss: w'rd\"}"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in, want, err string
	}{
		{in: "plain", want: "plain"},
		{in: "${USER}", want: "alice"},
		{in: "u=${USER}@${USER}", want: "u=alice@alice"},
		{in: "${USER:-bob}", want: "alice"},
		{in: "${MISSING:-bob}", want: "bob"},
		{in: "${EMPTY:-bob}", want: "bob"},
		{in: "${EMPTY}", want: ""},
		{in: "${MISSING:-}", want: ""},
		{in: "${MISSING:-a:-b}", want: "a:-b"},
		{in: "$$", want: "$"},
		{in: "$${USER}", want: "${USER}"},
		{in: "cost$$$${USER}", want: "cost$${USER}"},
		{in: "$2a$10$abc", want: "$2a$10$abc"},
		{in: "orders$", want: "orders$"},
		{in: "${PASS}", want: "p#ss: w'rd\"}"},
		{in: "${MISSING}", err: "environment variable MISSING is not set (use ${MISSING:-default} for a default)"},
		{in: "x ${USER", err: "unterminated ${ (write $$ for a literal $)"},
		{in: "${1X}", err: `invalid environment variable name "1X" in ${1X}`},
		{in: "${}", err: `invalid environment variable name "" in ${}`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := expand(tt.in, lookup)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("expand(%q) error = %v, want %s", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseExpandsEnvironment(t *testing.T) {
	t.Setenv("QW_TEST_PASSWORD", "p#ss: w'rd\nline2")
	t.Setenv("QW_TEST_MAX", "7")
	t.Setenv("QW_TEST_INTERVAL", "30s")
	t.Setenv("QW_TEST_LISTEN", "")
	unsetEnv(t, "QW_TEST_UNSET")
	data := `# a comment may mention ${QW_TEST_UNSET} freely
listen: ${QW_TEST_LISTEN:-127.0.0.1:9999}
poll_interval: ${QW_TEST_INTERVAL}
dlq:
  max_replays: ${QW_TEST_MAX}
  kafka_cursor_group: "cursor-$${literal}"
kafka:
  - name: prod
    brokers: [kafka:9092]
    sasl: {mechanism: PLAIN, username: qw, password: "${QW_TEST_PASSWORD}"}
`
	c, err := Parse([]byte(data), "q.yml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:9999" {
		t.Errorf("listen = %q, want the default for an empty variable", c.Listen)
	}
	if c.PollInterval.String() != "30s" {
		t.Errorf("poll_interval = %s, want 30s", c.PollInterval)
	}
	if c.DLQ.MaxReplays != 7 {
		t.Errorf("max_replays = %d, want 7 (typed after expansion)", c.DLQ.MaxReplays)
	}
	if c.DLQ.KafkaCursorGroup != "cursor-${literal}" {
		t.Errorf("kafka_cursor_group = %q, want $$ unescaped", c.DLQ.KafkaCursorGroup)
	}
	if got := c.Kafka[0].SASL.Password; got != "p#ss: w'rd\nline2" {
		t.Errorf("password = %q: special characters in a secret changed it", got)
	}

	// A quoted value stays a string even when the variable holds a number.
	_, err = Parse([]byte("dlq:\n  max_replays: \"${QW_TEST_MAX}\"\n"), "q.yml")
	if err == nil || err.Error() != `q.yml:2: dlq.max_replays: expected an integer, got "7"` {
		t.Errorf("quoted number error = %v", err)
	}

	// Braces end a plain value inside {...}, so the error says to quote.
	_, err = Parse([]byte("log: {level: ${QW_TEST_MAX}}\n"), "q.yml")
	want := `q.yml:1: invalid YAML: did not find expected ',' or '}' (quote "${VAR}" inside [...] or {...})`
	if err == nil || err.Error() != want {
		t.Errorf("flow error = %v, want %s", err, want)
	}
}

// TestAuditDSNFromEnvironment: the shared audit store's password comes
// from the environment, and the store defaults to SQLite in data_dir.
func TestAuditDSNFromEnvironment(t *testing.T) {
	t.Setenv("QW_TEST_AUDIT_PASSWORD", "s3cret")
	c, err := Parse([]byte("kafka: [{name: prod, brokers: [kafka:9092]}]\naudit:\n  driver: postgres\n  dsn: postgres://qw:${QW_TEST_AUDIT_PASSWORD}@db:5432/qw\n"), "q.yml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Audit.DSN != "postgres://qw:s3cret@db:5432/qw" || c.Audit.LeaseTTL != DefaultAuditLeaseTTL {
		t.Errorf("audit = %+v", c.Audit)
	}
	c, err = Parse([]byte("kafka: [{name: prod, brokers: [kafka:9092]}]\n"), "q.yml")
	if err != nil || c.Audit.Driver != AuditSQLite || c.Audit.DSN != "" {
		t.Errorf("default audit = %+v, %v", c.Audit, err)
	}
}
