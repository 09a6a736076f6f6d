package config

import (
	"strings"
	"testing"
	"time"
)

func TestCheckConditionAccepts(t *testing.T) {
	for _, cond := range []string{
		"sent_at IS NULL",
		"published = false",
		"NOT published",
		"status IN ('new', 'retry') AND attempts < 5",
		"(sent_at IS NULL OR failed_at IS NOT NULL) AND kind <> 'it''s'",
		"coalesce(attempts, 0) < 10",
		"sent_at IS NULL AND created_at > now() - INTERVAL '7 days'",
		"topic::text LIKE 'orders.%'",
		`"Sent" IS NULL`,
		"CASE WHEN kind = 'a' THEN sent_at IS NULL ELSE true END",
		"lower (kind) LIKE 'a%' ESCAPE '!'",
		"attempts::int >= 0 AND payload::jsonb ->> 'type' = 'x'",
		"created_at < TIMESTAMP '2030-01-01 00:00:00' AND kind <> E'x' AND flags & 4 = 0",
		"attempts <= 5 OR attempts >= 9 OR attempts != 7 OR kind || 'x' = 'ax'",
		"amount > 1.5 AND ratio < .5 AND attempts=-1 AND attempts<-1",
		"status NOT LIKE 'x%' AND kind NOT ILIKE 'y%' ESCAPE '!'",
		"created_at AT TIME ZONE 'UTC' < now()",
		"status IS DISTINCT FROM 'sent' AND kind IS NOT DISTINCT FROM 'a'",
		"(kind) LIKE 'a%' AND 'x' LIKE kind",
	} {
		if err := CheckCondition(cond); err != nil {
			t.Errorf("CheckCondition(%q) = %v, want nil", cond, err)
		}
	}
}

// TestCheckConditionRefusesHostile lists conditions an attacker (or a
// careless edit) could put in the config to leave the WHERE clause, write,
// wait or hide text from the check.
func TestCheckConditionRefusesHostile(t *testing.T) {
	for _, tc := range []struct{ cond, want string }{
		{"sent_at IS NULL; DROP TABLE outbox", "';' is not allowed"},
		{"1=1; DELETE FROM outbox", "';' is not allowed"},
		{"sent_at IS NULL -- and more", "comments are not allowed"},
		{"sent_at IS NULL /* x */", "comments are not allowed"},
		{"sent_at IS NULL # mysql comment", `'#' is not allowed`},
		{"id IN (SELECT id FROM other)", "SELECT is not allowed"},
		{"EXISTS (SELECT 1)", "EXISTS is not allowed"},
		{"(WITH x AS (DELETE FROM outbox RETURNING 1) SELECT true)", "WITH is not allowed"},
		{"sent_at IS NULL) OR (true", "unbalanced ')'"},
		{"(sent_at IS NULL", "unbalanced '('"},
		{"pg_sleep(60) IS NOT NULL", "function pg_sleep is not allowed"},
		{"sent_at IS NULL AND SLEEP(10) = 0", "function SLEEP is not allowed"},
		{"BENCHMARK(100000000, md5('a')) = 0", "function BENCHMARK is not allowed"},
		{"nextval('s') > 0", "function nextval is not allowed"},
		{"sent_at IS NULL UNION SELECT 1", "UNION is not allowed"},
		{"sent_at IS NULL INTO OUTFILE '/tmp/x'", "INTO is not allowed"},
		{"sent_at IS NULL FOR UPDATE", "FOR is not allowed"},
		{"sent_at IS NULL LIMIT 1", "LIMIT is not allowed"},
		{"$$ x $$ = ''", `'$' is not allowed`},
		{`kind = 'a\' OR pg_sleep(1) --'`, "backslashes are not allowed"},
		{"kind = 'unterminated", "unterminated ' quote"},
		{"sent_at IS NULL, true", "',' is only allowed"},
		{`"pg_sleep"(1) = 1`, "function \"pg_sleep\" is not allowed"},
		{"  ", "empty condition"},
	} {
		err := CheckCondition(tc.cond)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckCondition(%q) = %v, want an error containing %q", tc.cond, err, tc.want)
		}
	}
}

// TestCheckConditionRefusesBypasses lists ways to reach a function the
// allow-list does not name: by qualifying it (a user's myschema.lower, or
// table.func, which PostgreSQL reads as func(table)), by quoting or
// unicode-escaping its name, through a cast or a typed literal (whose
// target type's input function or domain check runs), or through an
// operator, which PostgreSQL users can define over any function.
func TestCheckConditionRefusesBypasses(t *testing.T) {
	for _, tc := range []struct{ name, cond, want string }{
		{"schema-qualified allow-listed", "myschema.lower(kind) = 'a'", "qualified function call myschema.lower is not allowed"},
		{"pg_catalog-qualified", "pg_catalog.pg_sleep(10) IS NULL", "qualified function call pg_catalog.pg_sleep is not allowed"},
		{"public user function", "public.evil() IS NULL", "qualified function call public.evil is not allowed"},
		{"qualified with a space", "myschema.lower (kind) = 'a'", "qualified function call myschema.lower is not allowed"},
		{"quoted schema", `"myschema".lower(kind) = 'a'`, "qualified function call"},
		{"quoted function", `"lower"(kind) = 'a'`, `function "lower" is not allowed`},
		{"attribute notation calls a function", "outbox.evil IS NULL", "qualified name outbox.evil is not allowed"},
		{"unicode-escaped identifier", `U&"pg_sl!0065ep" UESCAPE '!' (1) IS NULL`, "unicode escapes (U&) are not allowed"},
		{"unicode-escaped string", `kind = U&'!0041' UESCAPE '!'`, "unicode escapes (U&) are not allowed"},
		{"block comment", "lower/**/(kind) = 'a'", "comments are not allowed"},
		{"line comment", "sent_at IS NULL --\n OR true", "comments are not allowed"},
		{"dollar quoting", "kind = $$a$$", `'$' is not allowed`},
		{"tagged dollar quoting", "kind = $q$a$q$", `'$' is not allowed`},
		{"E-string escape", `kind = E'\\'' OR pg_sleep(1) IS NULL --'`, "backslashes are not allowed"},
		{"cast to regclass", "'outbox'::regclass IS NOT NULL", "cast to regclass is not allowed"},
		{"cast to a user domain", "kind::evil_domain IS NOT NULL", "cast to evil_domain is not allowed"},
		{"cast to a qualified type", "kind::pg_catalog.text = 'a'", "cast to pg_catalog is not allowed"},
		{"cast to a quoted type", `kind::"text" = 'a'`, "cast to \"text\" is not allowed"},
		{"typed literal of a user type", "evil_domain 'x' IS NOT NULL", "evil_domain 'x' is not allowed"},
		{"subquery", "(select true)", "SELECT is not allowed"},
		{"spaced call", "pg_sleep (10) IS NULL", "function pg_sleep is not allowed"},
		{"custom operator", "kind === 'a'", "operator === is not allowed"},
		{"OPERATOR syntax", "kind OPERATOR(myschema.=) 'a'", "function OPERATOR is not allowed"},
		{"MySQL assignment", "kind := 'a'", "operator := is not allowed"},
		// Review found these: PostgreSQL takes a quoted name, and the
		// keywords LIKE, ILIKE, ESCAPE and IS, as type names too.
		{"typed literal of a quoted type", `"evil_domain" 'x' IS NOT NULL`, `"evil_domain" 'x' is not allowed`},
		{"typed literal of quoted regclass", `"regclass" 'pg_authid' IS NOT NULL`, `"regclass" 'pg_authid' is not allowed`},
		{"type named escape", "escape 'x' IS NOT NULL", "escape 'x' is not allowed"},
		{"type named like", "like 'x' IS NOT NULL", "like 'x' is not allowed"},
		{"type named like after AND", "sent_at IS NULL AND like 'x' IS NOT NULL", "like 'x' is not allowed"},
		{"type named is", "is 'x' IS NOT NULL", "is 'x' is not allowed"},
		{"type named zone", "zone 'x' IS NOT NULL", "zone 'x' is not allowed"},
		{"type named from", "from 'x' IS NOT NULL", "FROM is not allowed"},
		{"from after a value", "kind from 'x' IS NOT NULL", "FROM is not allowed"},
		{"cast with no type", "kind :: = 'a'", "a cast needs a type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckCondition(tc.cond)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckCondition(%q) = %v, want an error containing %q", tc.cond, err, tc.want)
			}
		})
	}
}

func TestOutboxIdentifiersAndConditionInConfig(t *testing.T) {
	good := `
outbox:
  - name: orders-db
    driver: postgres
    dsn: postgres://x
    tables: [{table: public.outbox, created_at: created_at, pending: "sent_at IS NULL"}]
    replication_slots: [debezium]
`
	if _, err := Parse([]byte(good), "q.yml"); err != nil {
		t.Fatalf("good config: %v", err)
	}
	for _, tc := range []struct{ table, created, pending, want string }{
		{"outbox; DROP TABLE x", "created_at", "sent_at IS NULL", `outbox[0].tables[0].table: "outbox; DROP TABLE x" is not a plain SQL identifier`},
		{`"outbox"`, "created_at", "sent_at IS NULL", "outbox[0].tables[0].table:"},
		{"a.b.c", "created_at", "sent_at IS NULL", "outbox[0].tables[0].table:"},
		{"outbox", "now()", "sent_at IS NULL", `outbox[0].tables[0].created_at: "now()" is not a plain column name`},
		{"outbox", "t.created_at", "sent_at IS NULL", "outbox[0].tables[0].created_at:"},
		{"outbox", "created_at", "sent_at IS NULL; DROP TABLE outbox", "outbox[0].tables[0].pending: ';' is not allowed"},
		{"outbox", "created_at", "pg_sleep(5) IS NULL", "outbox[0].tables[0].pending: function pg_sleep is not allowed"},
	} {
		y := "outbox: [{name: o, driver: postgres, dsn: x, tables: [{table: " + yamlQuote(tc.table) +
			", created_at: " + yamlQuote(tc.created) + ", pending: " + yamlQuote(tc.pending) + "}]}]"
		_, err := Parse([]byte(y), "q.yml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", y, err, tc.want)
		}
	}
}

func yamlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func TestOutboxAlertThresholds(t *testing.T) {
	c, err := Parse([]byte("alerts: {outbox: {pending_age_high: 2m}}\noutbox: [{name: o, driver: postgres, dsn: host=db, replication_slots: [s]}]"), "q.yml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Alerts.Outbox; got.PendingAgeHigh != 2*time.Minute || got.SlotLagBytesHigh != 1<<30 {
		t.Errorf("alerts.outbox = %+v, want pending_age_high 2m and the default slot lag", got)
	}
	_, err = Parse([]byte("alerts: {outbox: {slot_lag_bytes_high: -1}}\noutbox: [{name: o, driver: postgres, dsn: host=db, replication_slots: [s]}]"), "q.yml")
	if err == nil || !strings.Contains(err.Error(), "alerts.outbox.slot_lag_bytes_high: must be positive, got -1") {
		t.Errorf("negative slot lag threshold: %v", err)
	}
}
