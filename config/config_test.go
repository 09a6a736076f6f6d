package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLoadBadFixtures asserts the exact one-line error, file:line: key:
// message, for every testdata/conf.<bad-case>.yml.
func TestLoadBadFixtures(t *testing.T) {
	unsetEnv(t, "QUEUEWATCH_TEST_UNSET_PASSWORD")
	tests := []struct {
		fixture string
		line    int
		path    string
		msg     string
	}{
		{"unknown-key", 3, "kafka[0].brokerz", "unknown key (did you mean brokers?)"},
		{"unknown-top-key", 2, "poll_intervall", "unknown key (did you mean poll_interval?)"},
		{"missing-brokers", 2, "kafka[0].brokers", "at least one broker is required"},
		{"empty-brokers", 3, "kafka[0].brokers", "at least one broker is required"},
		{"bad-broker", 5, "kafka[0].brokers[1]", `"kafka-2" is not host:port`},
		{"bad-duration", 2, "poll_interval", `invalid duration "15 seconds" (use a Go duration such as 15s, 2m or 1h30m)`},
		{"bad-regex", 5, "kafka[0].groups.include[0]", `invalid regex "orders-(.*": missing closing )`},
		{"bad-name-pattern", 2, "dlq.name_pattern", `invalid regex "(?i).*[dlq$": missing closing ]`},
		{"duplicate-name", 4, "kafka[1].name", `duplicate name "prod" (also kafka[0])`},
		{"bad-cluster-name", 2, "rabbitmq[0].name", `"main cluster" may contain only letters, digits, '.', '_' and '-'`},
		{"dot-cluster-name", 2, "kafka[0].name", `".." is not a usable name: it is a path segment`},
		{"duplicate-key", 3, "listen", "duplicate key (first set on line 1)"},
		{"bad-isolation", 4, "kafka[0].isolation", `must be read_uncommitted or read_committed, got "committed"`},
		{"sasl-no-password", 4, "kafka[0].sasl.password", "required when sasl is set"},
		{"sasl-bad-mechanism", 5, "kafka[0].sasl.mechanism", `must be PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or AWS_MSK_IAM, got "GSSAPI"`},
		{"msk-bad-role-arn", 7, "kafka[0].sasl.role_arn", `"queuewatch-readonly" is not an IAM role ARN (arn:aws:iam::123456789012:role/name)`},
		{"msk-with-password", 4, "kafka[0].sasl", "username and password are not used by AWS_MSK_IAM; it signs with the AWS credential chain (or role_arn)"},
		{"oauth-with-role-arn", 9, "kafka[0].sasl.role_arn", "only for mechanism AWS_MSK_IAM, not OAUTHBEARER"},
		{"oauth-no-secret", 4, "kafka[0].sasl.client_secret", "required for OAUTHBEARER (or client_secret_file)"},
		{"oauth-bad-token-url", 6, "kafka[0].sasl.token_url", `must be an http or https URL, got "idp.example.com/token"`},
		{"oauth-both-secrets", 9, "kafka[0].sasl.client_secret_file", "set client_secret or client_secret_file, not both"},
		{"oauth-with-password", 4, "kafka[0].sasl", "username and password are not used by OAUTHBEARER; set client_id and client_secret"},
		{"scram-with-token-url", 8, "kafka[0].sasl.token_url", "only for mechanism OAUTHBEARER, not SCRAM-SHA-512"},
		{"unset-env", 7, "kafka[0].sasl.password", "environment variable QUEUEWATCH_TEST_UNSET_PASSWORD is not set (use ${QUEUEWATCH_TEST_UNSET_PASSWORD:-default} for a default)"},
		{"bad-env-syntax", 3, "rabbitmq[0].url", "unterminated ${ (write $$ for a literal $)"},
		{"bad-auth-mode", 2, "auth.mode", `must be none, basic, tokens, proxy or oidc, got "oauth"`},
		{"auth-none-with-users", 1, "auth.mode", "is none, so the configured users, tokens or proxy are ignored and the UI is open: set mode to basic, tokens, proxy or oidc"},
		{"basic-no-users", 1, "auth.users", "at least one user is required when mode is basic"},
		{"bad-password-hash", 5, "auth.users[0].password_hash", "not a bcrypt hash (want $2a$, $2b$ or $2y$ followed by cost and salt)"},
		{"bad-role", 6, "auth.users[0].role", `must be viewer, operator or admin, got "root"`},
		{"bad-token-hash", 5, "auth.tokens[0].token_hash", "must be sha256:<64 hex digits> (the SHA-256 of the token)"},
		{"bad-cidr", 6, "auth.proxy.trusted_cidrs[1]", `invalid CIDR "10.0.0.0/33" (want an address or prefix such as 10.0.0.0/8)`},
		{"proxy-no-cidrs", 3, "auth.proxy.trusted_cidrs", "at least one CIDR is required when mode is proxy"},
		{"bad-url-scheme", 3, "rabbitmq[0].url", `scheme must be amqp or amqps, got "http"`},
		{"bad-management-url", 4, "rabbitmq[0].management_url", `scheme must be http or https, got "ftp"`},
		{"bad-prometheus-url", 5, "rabbitmq[0].prometheus_url", `scheme must be http or https, got "ftp"`},
		{"bad-list-every", 5, "rabbitmq[0].list_every", `must not be negative, got -2`},
		{"bad-grafana-url", 1, "grafana_url", `scheme must be http or https, got "grafana.example.com"`},
		{"bad-dlq-queue-regex", 6, "rabbitmq[0].dlq_queues[1]", `invalid regex "orders-(.*": missing closing )`},
		{"missing-url", 2, "rabbitmq[0].url", "required (amqp://user:password@host:5672/)"},
		{"cert-without-key", 4, "kafka[0].tls.key_file", "required when cert_file is set"},
		{"missing-ca-file", 6, "rabbitmq[0].tls.ca_file", `file "testdata/tls/missing-ca.pem" does not exist`},
		{"poll-timeout", 2, "poll_timeout", "must not exceed poll_interval (5s), got 10s"},
		{"poll-interval-too-short", 1, "poll_interval", "must be at least 1s, got 500ms"},
		{"history-too-short", 2, "history", "must cover the alerts.window of 10 polls (at least 10m0s), got 5m0s"},
		{"tab-indent", 3, "", "invalid YAML: found a tab character that violates indentation (indent with spaces, not tabs)"},
		{"invalid-yaml", 4, "", "invalid YAML: did not find expected ',' or ']'"},
		{"wrong-type", 4, "kafka[0].brokers", "expected a list, got a mapping"},
		{"bad-integer", 2, "dlq.max_replays", `expected an integer, got "lots"`},
		{"bad-max-replays", 2, "dlq.max_replays", "must be at least 1, got 0"},
		{"bad-window", 2, "alerts.window", "must be at least 3 polls, got 2"},
		{"bad-hysteresis", 3, "alerts.hysteresis_polls", "must be from 1 to alerts.window (5) polls, got 6"},
		{"override-no-match", 5, "alerts.overrides[1]", "set group or dlq (or both) to say what the override applies to"},
		{"override-bad-regex", 3, "alerts.overrides[0].dlq", `invalid regex "*.dlq": missing argument to repetition operator`},
		{"bad-log-level", 2, "log.level", `must be debug, info, warn or error, got "verbose"`},
		{"history-default-too-short", 1, "history", "must cover the alerts.window of 10 polls (at least 1h40m0s), got 1h0m0s"},
		{"bad-listen", 1, "listen", `"localhost" is not host:port`},
		{"top-level-list", 1, "", "expected a mapping of settings at the top level, got a list"},
		{"audit-bad-driver", 5, "audit.driver", `must be sqlite or postgres, got "mysql"`},
		{"audit-postgres-no-dsn", 4, "audit.dsn", "required for driver postgres (postgres://user:${PASSWORD}@host:5432/queuewatch)"},
		{"audit-sqlite-dsn", 6, "audit.dsn", "is for driver postgres; sqlite keeps the store in data_dir"},
		{"audit-short-lease", 7, "audit.lease_ttl", "must be at least 2s, got 500ms"},
		{"audit-bad-dsn", 6, "audit.dsn", "not a PostgreSQL DSN: failed to configure TLS (sslmode is invalid)"},
		{"outbox-bad-sslmode", 5, "outbox[0].dsn", "not a PostgreSQL DSN: failed to configure TLS (sslmode is invalid)"},
		{"outbox-bad-mysql-dsn", 5, "outbox[0].dsn", "not a MySQL DSN (user:password@tcp(host:3306)/database): default addr for network 'billing-db.internal:3306' unknown"},
		{"masking-bad-path", 5, "masking[0].fields[1]", "a path starts with $ (such as $.card.number or $..email)"},
		{"masking-bad-mode", 3, "masking[0].mode", `must be redact, hash or last4, got "scramble"`},
		{"masking-nothing", 2, "masking[0]", "masks nothing: set fields, show_only or headers"},
		{"masking-hash-no-key", 0, "masking_key", "at least 16 characters are required when a rule's mode is hash (keep it in ${ENV}; the same on every replica)"},
		{"schema-registry-bad-url", 5, "kafka[0].schema_registry.url", `scheme must be http or https, got "registry"`},
		{"bad-unmask-role", 2, "auth.unmask_role", `must be viewer, operator or admin, got "everyone"`},
		{"audit-bad-body-reads", 2, "audit.body_reads", `must be auto, all or off, got "sometimes"`},
		{"oidc-no-issuer", 4, "auth.oidc.issuer", "required when mode is oidc (the provider's issuer URL, such as https://idp.example.com/dex)"},
		{"oidc-bad-session-key", 4, "auth.session.key", "must be 32 bytes as 64 hex digits (openssl rand -hex 32), the same on every replica"},
		{"oidc-no-roles", 4, "auth.oidc.group_roles", "map at least one group to a role, or set default_role: otherwise no one can log in"},
		{"oidc-bad-redirect", 8, "auth.oidc.redirect_url", `must be this queuewatch's absolute URL ending in /auth/callback, got "https://qw.example.com/callback"`},
		{"oidc-bad-group-role", 9, "auth.oidc.group_roles.team-a", `must be viewer, operator or admin, got "owner"`},
		{"grant-empty-scope", 8, "auth.proxy.group_roles.team-a.scope", "grants nothing: list clusters, dlqs or readers (or leave scope out for everything)"},
		{"grant-bad-regex", 9, "auth.users[0].grants[0].scope.dlqs[0]", `invalid regex "kafka:prod::team-a(": missing closing )`},
		{"grant-unknown-key", 8, "auth.oidc.group_roles.team-a.scope.queues", "unknown key"},
		{"sqs-missing-region", 2, "sqs[0].region", `required (an AWS region such as eu-west-1; any for a local endpoint)`},
		{"sqs-bad-region", 3, "sqs[0].region", `"Ireland" is not an AWS region (such as eu-west-1)`},
		{"sqs-bad-endpoint", 4, "sqs[0].endpoint", `"127.0.0.1:9324" is not a URL (want http://host:port or https://host)`},
		{"sqs-bad-role-arn", 4, "sqs[0].role_arn", `"queuewatch-readonly" is not an IAM role ARN (arn:aws:iam::123456789012:role/name)`},
		{"sqs-bad-prefix", 5, "sqs[0].queues.prefix", `"orders/" cannot start a queue name (letters, digits, '-' and '_')`},
		{"sqs-bad-regex", 5, "sqs[0].queues.exclude[0]", `invalid regex "orders-(.*": missing closing )`},
		{"sqs-poll-interval", 4, "sqs[0].poll_interval", `must be at least 1s, got 100ms`},
		{"sqs-duplicate-name", 4, "sqs[1].name", `duplicate name "prod" (also sqs[0])`},
		{"kinesis-missing-region", 2, "kinesis[0].region", `required (an AWS region such as eu-west-1; any for a local endpoint)`},
		{"kinesis-bad-dynamodb-endpoint", 5, "kinesis[0].dynamodb_endpoint", `"127.0.0.1:8000" is not a URL (want http://host:port or https://host)`},
		{"kinesis-missing-stream", 5, "kinesis[0].applications[0].stream", "required (the stream the application consumes)"},
		{"kinesis-bad-lease-table", 6, "kinesis[0].applications[0].lease_table", `"billing/leases" is not a DynamoDB table name (3-255 letters, digits, '_', '-', '.')`},
		{"kinesis-duplicate-application", 6, "kinesis[0].applications[1].name", `duplicate name "billing" (also kinesis[0].applications[0])`},
		{"kinesis-short-failover", 8, "kinesis[0].applications[0].failover_time", "must be at least 1s, got 100ms"},
		{"connect-no-url", 5, "kafka[0].connect[0].url", "required (the REST API of a Connect worker, such as http://connect:8083)"},
		{"connect-bad-url", 6, "kafka[0].connect[0].url", `scheme must be http or https, got "ftp"`},
		{"connect-basic-and-token", 7, "kafka[0].connect[0].auth", "set username and password, or token, not both"},
		{"connect-no-password", 7, "kafka[0].connect[0].auth.password", "required with username (or password_file)"},
		{"connect-both-tokens", 9, "kafka[0].connect[0].auth.token_file", "set token or token_file, not both"},
		{"connect-duplicate-name", 7, "kafka[0].connect[1].name", `duplicate name "main" (also kafka[0].connect[0])`},
		{"connect-missing-token-file", 8, "kafka[0].connect[0].auth.token_file", `file "testdata/connect-token-missing" does not exist`},
		{"headroom-low-too-long", 2, "alerts.retention_headroom_low", "must be at most 12h0m0s, got 13h0m0s"},
		{"kinesis-stale", 5, "kinesis[0].poll_interval", "an account read every 5m0s (polled every 15s) reads as stale to alerts.stale_after (5m0s) between reads: read it more often or raise stale_after"},
		{"pubsub-missing-project", 2, "pubsub[0].project", "required (the Google Cloud project id, such as orders-prod)"},
		{"pubsub-bad-project", 3, "pubsub[0].project", `"Orders_Prod" is not a Google Cloud project id (6-30 lower-case letters, digits and hyphens, such as orders-prod)`},
		{"pubsub-bad-endpoint", 4, "pubsub[0].endpoint", `"http://127.0.0.1:8085" is not host:port (the emulator's address, such as 127.0.0.1:8085)`},
		{"pubsub-emulator-credentials", 5, "pubsub[0].credentials_file", "not used with endpoint: the emulator takes no credentials"},
		{"pubsub-missing-credentials", 4, "pubsub[0].credentials_file", `file "testdata/no-such-key.json" does not exist`},
		{"pubsub-bad-regex", 6, "pubsub[0].subscriptions.include[0]", `invalid regex "orders-(.*": missing closing )`},
		{"pubsub-bad-monitoring-endpoint", 6, "pubsub[0].monitoring.endpoint", `"monitoring.internal:443" is not an http or https URL (such as https://monitoring.googleapis.com)`},
		{"pubsub-duplicate-name", 4, "pubsub[1].name", `duplicate name "prod" (also pubsub[0])`},
		{"pubsub-stale", 6, "pubsub[0].poll_interval", "a project read every 5m0s (polled every 15s) reads as stale to alerts.stale_after (5m0s) between reads: read it more often or raise stale_after"},
		{"sqs-stale", 6, "sqs[0].poll_interval", "an account read every 5m0s (polled every 15s) reads as stale to alerts.stale_after (5m0s) between reads: read it more often or raise stale_after"},
	}
	covered := map[string]bool{"testdata/conf.good.yml": true}
	for _, tt := range tests {
		file := "testdata/conf." + tt.fixture + ".yml"
		covered[file] = true
		t.Run(tt.fixture, func(t *testing.T) {
			_, err := Load(file)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			want := &Error{File: file, Line: tt.line, Path: tt.path, Msg: tt.msg}
			if err.Error() != want.Error() {
				t.Errorf("error:\n got %s\nwant %s", err, want)
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Line != tt.line || ce.Path != tt.path {
				t.Errorf("errors.As(*Error) = %+v, want line %d path %q", ce, tt.line, tt.path)
			}
		})
	}
	// A new fixture without a row here would test nothing.
	files, err := filepath.Glob("testdata/conf.*.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !covered[f] {
			t.Errorf("fixture %s has no test case", f)
		}
	}
}

func unsetEnv(t *testing.T, name string) {
	t.Helper()
	t.Setenv(name, "") // restores the old value after the test
	if err := os.Unsetenv(name); err != nil {
		t.Fatal(err)
	}
}

func TestLoadGood(t *testing.T) {
	t.Setenv("KAFKA_PROD_PASSWORD", "kafka-secret")
	t.Setenv("RABBITMQ_PASSWORD", "rabbit-secret")
	t.Setenv("NATS_PASSWORD", "nats-secret")
	unsetEnv(t, "RABBITMQ_MANAGEMENT_PASSWORD")
	unsetEnv(t, "ONCALL_PASSWORD_HASH")

	c, err := Load("testdata/conf.good.yml")
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("listen", c.Listen, "0.0.0.0:8080")
	check("poll_interval", c.PollInterval, 15*time.Second)
	check("poll_timeout", c.PollTimeout, 10*time.Second)
	check("history", c.History, time.Hour)
	check("data_dir", c.DataDir, "/var/lib/queuewatch")
	check("log", c.Log, Log{Level: "info", Format: "json"})
	check("metrics", c.Metrics, Metrics{Granularity: GranularityPartition})

	if len(c.Kafka) != 2 || len(c.RabbitMQ) != 1 || len(c.NATS) != 1 || len(c.Outbox) != 1 {
		t.Fatalf("clusters: %d kafka, %d rabbitmq, %d nats, %d outbox; want 2, 1, 1, 1", len(c.Kafka), len(c.RabbitMQ), len(c.NATS), len(c.Outbox))
	}
	if n := c.NATS[0]; len(n.URLs()) != 2 || !n.DeadLetters.Capture || n.Streams.Match("KV_locks") || !n.Streams.Match("ORDERS") {
		t.Errorf("nats: %+v", n)
	}
	if o := c.Outbox[0]; o.Driver != OutboxPostgres || len(o.Tables) != 1 || o.Tables[0].Pending != "sent_at IS NULL" || o.ReplicationSlots[0] != "debezium" {
		t.Errorf("outbox: %+v", o)
	}
	prod := c.Kafka[0]
	check("kafka[0].name", prod.Name, "prod")
	check("kafka[0].brokers", strings.Join(prod.Brokers, ","), "kafka-1.prod.internal:9093,kafka-2.prod.internal:9093,kafka-3.prod.internal:9093")
	check("kafka[0].sasl", *prod.SASL, SASL{Mechanism: "SCRAM-SHA-512", Username: "queuewatch", Password: "kafka-secret"})
	check("kafka[0].tls", prod.TLS, TLS{
		Enabled: true, CAFile: "testdata/tls/ca.pem", CertFile: "testdata/tls/client.pem",
		KeyFile: "testdata/tls/client-key.pem", ServerName: "kafka.prod.internal",
	})
	check("kafka[0].isolation", prod.Isolation, IsolationReadCommitted)
	if len(prod.Connect) != 1 {
		t.Fatalf("kafka[0].connect: %+v, want one", prod.Connect)
	}
	check("kafka[0].connect[0]", prod.Connect[0], Connect{
		Name: "main", URL: "https://connect.prod.internal:8083",
		Auth: ConnectAuth{Username: "queuewatch", PasswordFile: "testdata/conf.good.yml"},
		TLS:  TLS{Enabled: true, CAFile: "testdata/tls/ca.pem"},
	})
	check("kafka[0] groups orders-eu", prod.Groups.Match("orders-eu"), true)
	check("kafka[0] groups orders-tmp", prod.Groups.Match("orders-tmp"), false)
	check("kafka[0] groups inventory", prod.Groups.Match("inventory"), false)
	check("kafka[0] dlq topic", prod.IsDLQTopic("legacy-orders-failed"), true)
	check("kafka[0] not dlq topic", prod.IsDLQTopic("payments.retry.final.2"), false)

	analytics := c.Kafka[1]
	check("kafka[1].client_id", analytics.ClientID, "queuewatch")
	check("kafka[1].isolation", analytics.Isolation, IsolationReadUncommitted)
	check("kafka[1].sasl is nil", analytics.SASL == nil, true)
	check("kafka[1] groups match all", analytics.Groups.Match("anything"), true)

	main := c.RabbitMQ[0]
	check("rabbitmq[0].url", main.URL, "amqps://queuewatch:rabbit-secret@rabbitmq.internal:5671/")
	check("rabbitmq[0].management_url", main.ManagementURL, "https://rabbitmq.internal:15671")
	user, pass := main.ManagementCredentials()
	check("management user", user, "monitoring")
	check("management password from url", pass, "rabbit-secret")
	check("rabbitmq[0].tls.ca_file", main.TLS.CAFile, "testdata/tls/ca.pem")
	check("rabbitmq[0] watches orders", main.WatchesVHost("orders"), true)
	check("rabbitmq[0] watches billing", main.WatchesVHost("billing"), false)
	check("rabbitmq[0] queue amq.gen", main.Queues.Match("amq.gen-x1"), false)
	check("rabbitmq[0] dlq queue by re:", main.IsDLQQueue("orders.failed"), true)
	check("rabbitmq[0] dlq queue by name", main.IsDLQQueue("rc.work.dlq"), true)
	check("rabbitmq[0] a name is not a regex", main.IsDLQQueue("rcXwork.dlq"), false)
	check("rabbitmq[0] dlq queue names", strings.Join(main.DLQQueueNames(), ","), "rc.work.dlq")

	check("dlq", c.DLQ.NamePattern, DefaultDLQNamePattern)
	check("dlq.kafka_cursor_group", c.DLQ.KafkaCursorGroup, "queuewatch-dlq")
	check("dlq.max_replays", c.DLQ.MaxReplays, 5)
	check("dlq.replay_rate", c.DLQ.ReplayRate, 200.0)

	check("alerts.window", c.Alerts.Window, 10)
	check("alerts.hysteresis_polls", c.Alerts.HysteresisPolls, 2)
	check("alerts.dlq_growing_window", c.Alerts.DLQGrowingWindow, 15*time.Minute)
	check("alerts.stale_after", c.Alerts.StaleAfter, 5*time.Minute)
	check("alerts batch", c.Alerts.For("batch-nightly", ""), Thresholds{500000, 2 * time.Hour, time.Hour})
	check("alerts payments dlq", c.Alerts.For("", "payments.dlq"), Thresholds{10000, 5 * time.Minute, 5 * time.Minute})

	check("auth.mode", c.Auth.Mode, AuthBasic)
	check("auth users", len(c.Auth.Users), 2)
	check("oncall hash from default", c.Auth.Users[1].PasswordHash, "$2a$10$t0TZSXrn7JI7iel2uaoPeOBf35qGaN.t2DpJoLiDHwgpKUZ7CgIr2")
	check("oncall role", c.Auth.Users[1].Role, RoleOperator)
	if err := c.RequireSources(); err != nil {
		t.Errorf("RequireSources: %v", err)
	}

	tlsCfg, err := prod.TLS.Config()
	if err != nil {
		t.Fatalf("kafka[0] TLS.Config: %v", err)
	}
	if tlsCfg.RootCAs == nil || len(tlsCfg.Certificates) != 1 || tlsCfg.ServerName != "kafka.prod.internal" {
		t.Errorf("kafka[0] TLS.Config = %+v, want CA pool, one certificate and server name", tlsCfg)
	}
}

func TestDefaults(t *testing.T) {
	d := Default()
	if err := d.Validate(); err != nil {
		t.Fatalf("Default().Validate: %v", err)
	}
	tests := []struct {
		name string
		yaml string
		// check returns a description of what is wrong, or "".
		check func(c *Config) string
	}{
		{"empty file is all defaults", "", func(c *Config) string {
			if c.Listen != "127.0.0.1:8080" || c.PollInterval != 15*time.Second || c.PollTimeout != 10*time.Second ||
				c.History != time.Hour || c.DataDir != "data" || c.Log != (Log{"info", "text"}) {
				return "top level differs from the documented defaults"
			}
			if c.DLQ.NamePattern != DefaultDLQNamePattern || c.DLQ.KafkaCursorGroup != "queuewatch-dlq" ||
				c.DLQ.MaxReplays != 5 || c.DLQ.ReplayRate != 200 {
				return "dlq defaults differ"
			}
			a := c.Alerts
			if a.Window != 10 || a.LagHigh != 10000 || a.LagSecondsHigh != 5*time.Minute || a.DLQAgeHigh != time.Hour ||
				a.DLQGrowingWindow != 15*time.Minute || a.BacklogHigh != 10000 || a.StaleAfter != 5*time.Minute {
				return "alerts defaults differ"
			}
			p := c.Auth.Proxy
			if c.Auth.Mode != AuthNone || p.UserHeader != "X-Forwarded-User" || p.GroupsHeader != "X-Forwarded-Groups" || p.DefaultRole != RoleViewer {
				return "auth defaults differ"
			}
			return ""
		}},
		{"comments only", "# nothing yet\n", func(c *Config) string {
			if c.Listen != "127.0.0.1:8080" {
				return "listen not defaulted"
			}
			return ""
		}},
		{"poll_timeout follows a short poll_interval", "poll_interval: 5s", func(c *Config) string {
			if c.PollTimeout != 5*time.Second {
				return "poll_timeout = " + c.PollTimeout.String() + ", want 5s"
			}
			return ""
		}},
		{"poll_timeout capped at 10s", "poll_interval: 1m\nhistory: 2h", func(c *Config) string {
			if c.PollTimeout != 10*time.Second {
				return "poll_timeout = " + c.PollTimeout.String() + ", want 10s"
			}
			return ""
		}},
		{"partial section keeps other defaults", "log: {level: debug}\nalerts: {lag_high: 5}", func(c *Config) string {
			if c.Log != (Log{"debug", "text"}) || c.Alerts.LagHigh != 5 || c.Alerts.Window != 10 {
				return "sibling keys lost their defaults"
			}
			return ""
		}},
		{"null value keeps the default", "listen:\nlog: ~", func(c *Config) string {
			if c.Listen != "127.0.0.1:8080" || c.Log.Level != "info" {
				return "null replaced a default"
			}
			return ""
		}},
		{"a single value is a one-element list", "kafka: [{name: k, brokers: b:9092, dlq_topics: orders.dlq}]", func(c *Config) string {
			if len(c.Kafka[0].Brokers) != 1 || !c.Kafka[0].IsDLQTopic("orders.dlq") || c.Kafka[0].IsDLQTopic("orders.dlq.v2") {
				return "scalar list not decoded as one anchored pattern"
			}
			return ""
		}},
		{"merge keys share settings", "x-common: &common\n  brokers: [a:9092]\n  isolation: read_committed\n", nil},
		{"anchors and merge keys", "kafka:\n  - &prod\n    name: a\n    brokers: [a:9092]\n    isolation: read_committed\n  - <<: *prod\n    name: b\n", func(c *Config) string {
			b := c.Kafka[1]
			if b.Name != "b" || len(b.Brokers) != 1 || b.Isolation != IsolationReadCommitted {
				return "merged cluster missing inherited keys"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.yaml), "q.yml")
			if tt.check == nil {
				// Unknown top-level keys are errors even when they only
				// hold anchors.
				if err == nil || !strings.Contains(err.Error(), "q.yml:1: x-common: unknown key") {
					t.Fatalf("err = %v, want unknown key x-common", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.check(c); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func TestRequireSources(t *testing.T) {
	c, err := Parse([]byte("listen: :9000"), "q.yml")
	if err != nil {
		t.Fatal(err)
	}
	err = c.RequireSources()
	if err == nil || err.Error() != "q.yml: no sources configured: add at least one kafka, rabbitmq or nats cluster, sqs or kinesis account, pubsub project or outbox source" {
		t.Errorf("RequireSources = %v", err)
	}
	c.RabbitMQ = append(c.RabbitMQ, RabbitMQ{Name: "r", URL: "amqp://localhost/"})
	if err := c.RequireSources(); err != nil {
		t.Errorf("RequireSources with a cluster = %v", err)
	}
}

func TestMultipleErrorsOneLineEach(t *testing.T) {
	data := "listen: nope\nkafka:\n  - name: a\n    brokers: [b:9092]\n    isolation: x\nlog: {format: xml}\n"
	_, err := Parse([]byte(data), "q.yml")
	want := `q.yml:1: listen: "nope" is not host:port` + "\n" +
		`q.yml:5: kafka[0].isolation: must be read_uncommitted or read_committed, got "x"` + "\n" +
		`q.yml:6: log.format: must be text or json, got "xml"`
	if err == nil || err.Error() != want {
		t.Errorf("err =\n%v\nwant\n%s", err, want)
	}
}

// TestDecodeAndValidationMistakesTogether: a key that did not decode and
// a value that does not validate are both reported, and what validation
// would say of the key that did not decode (left empty: "at least one
// broker is required") is not said twice.
func TestDecodeAndValidationMistakesTogether(t *testing.T) {
	data := "kafka:\n  - name: a\n    brokers: {b: 9092}\nlisten: nope\nauth: {mode: basic, users: 3}\n"
	_, err := Parse([]byte(data), "q.yml")
	want := `q.yml:3: kafka[0].brokers: expected a list, got a mapping` + "\n" +
		`q.yml:4: listen: "nope" is not host:port` + "\n" +
		`q.yml:5: auth.users: expected a list, got "3"`
	if err == nil || err.Error() != want {
		t.Errorf("err =\n%v\nwant\n%s", err, want)
	}
}

func TestValidateConfigBuiltInCode(t *testing.T) {
	c := Default()
	c.Kafka = []Kafka{{Name: "demo", Brokers: []string{"127.0.0.1:9092"}, DLQTopics: []string{"orders\\.dlq"}}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Kafka[0].ClientID != "queuewatch" || c.Kafka[0].Isolation != IsolationReadUncommitted {
		t.Errorf("Validate did not fill cluster defaults: %+v", c.Kafka[0])
	}
	if !c.Kafka[0].IsDLQTopic("orders.dlq") {
		t.Error("IsDLQTopic(orders.dlq) = false after Validate")
	}
	c.Kafka = append(c.Kafka, Kafka{Name: "demo"})
	err := c.Validate()
	want := "kafka[1].brokers: at least one broker is required\nkafka[1].name: duplicate name \"demo\" (also kafka[0])"
	if err == nil || err.Error() != want {
		t.Errorf("Validate =\n%v\nwant\n%s", err, want)
	}
}

func TestErrorsHideSecrets(t *testing.T) {
	tests := []struct{ name, yaml string }{
		{"bad url", "rabbitmq: [{name: r, url: 'amqp://u:s3cret@host:port/'}]"},
		{"bad hash", "auth: {mode: basic, users: [{name: a, password_hash: s3cret, role: admin}]}"},
		{"bad token hash", "auth: {mode: tokens, tokens: [{name: a, token_hash: s3cret, role: admin}]}"},
		{"bad postgres dsn", "outbox: [{name: o, driver: postgres, dsn: 'postgres://u:s3cret@h/db?sslmode=bogus', replication_slots: [s]}]"},
		{"bad postgres keyword dsn", "outbox: [{name: o, driver: postgres, dsn: 'host=h password=s3cret port=x', replication_slots: [s]}]"},
		{"connect basic and token", "kafka: [{name: k, brokers: ['h:9092'], connect: [{name: c, url: 'http://c:8083', auth: {username: u, password: s3cret, token: s3cret}}]}]"},
		{"bad mysql dsn", "outbox: [{name: o, driver: mysql, dsn: 'u:s3cret@tcp(h:3306)/db?parseTime=maybe', tables: [{table: t, created_at: c, pending: 'sent_at IS NULL'}]}]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "q.yml")
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error reveals the secret: %v", err)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/does-not-exist.yml")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want os.ErrNotExist", err)
	}
}

func TestLogSlogLevel(t *testing.T) {
	for level, want := range map[string]string{"debug": "DEBUG", "info": "INFO", "warn": "WARN", "error": "ERROR"} {
		if got := (Log{Level: level}).SlogLevel().String(); got != want {
			t.Errorf("SlogLevel(%s) = %s, want %s", level, got, want)
		}
	}
}

func TestNATSAndOutbox(t *testing.T) {
	c, err := Parse([]byte(`
nats: [{name: n, url: "nats://a:4222, nats://b:4222"}]
outbox: [{name: o, driver: postgres, dsn: "postgres://x", tables: [{table: outbox, created_at: created_at, pending: "sent_at IS NULL"}]}]
`), "q.yml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.NATS[0].URLs(); len(got) != 2 || got[1] != "nats://b:4222" {
		t.Errorf("URLs = %q", got)
	}
	if c.NATS[0].DeadLetters.Stream != DefaultNATSDeadLetterStream || c.NATS[0].DeadLetters.Capture {
		t.Errorf("dead_letters = %+v, want capture off into %s", c.NATS[0].DeadLetters, DefaultNATSDeadLetterStream)
	}
	if c.Metrics != (Metrics{Granularity: GranularityPartition}) {
		t.Errorf("metrics = %+v, want partition granularity without opt-ins", c.Metrics)
	}
	m, err := Parse([]byte("metrics: {granularity: topic, committed_offsets: true, partition_offsets: true, partition_lag_seconds: true, commit_gaps: true}"), "q.yml")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Metrics{Granularity: GranularityTopic, CommittedOffsets: true, PartitionOffsets: true, PartitionLagSeconds: true, CommitGaps: true}); m.Metrics != want {
		t.Errorf("metrics = %+v, want %+v", m.Metrics, want)
	}
	bad := []struct{ yaml, want string }{
		{"nats: [{name: n, url: 'http://a:4222'}]", `nats[0].url: scheme must be nats, tls, ws or wss, got "http"`},
		{"nats: [{name: n, url: 'nats://a', token: t, user: u, password: p}]", "nats[0]: set at most one of creds_file, nkey_file, token and user+password"},
		{"nats: [{name: n, url: 'nats://a', dead_letters: {stream: 'a.b'}}]", `nats[0].dead_letters.stream: "a.b" is not a valid stream name`},
		{"outbox: [{name: o, driver: sqlite, dsn: x, replication_slots: [s]}]", `outbox[0].driver: must be postgres or mysql, got "sqlite"`},
		{"outbox: [{name: o, driver: mysql, dsn: x, replication_slots: [s]}]", "outbox[0].replication_slots: replication slots are a PostgreSQL feature"},
		{"metrics: {granularity: member}", `metrics.granularity: must be partition, topic or group, got "member"`},
	}
	for _, b := range bad {
		_, err := Parse([]byte(b.yaml), "q.yml")
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: error %v, want %q", b.yaml, err, b.want)
		}
	}
}

func TestOutboxTableOnce(t *testing.T) {
	_, err := Parse([]byte(`
outbox: [{name: o, driver: postgres, dsn: x, tables: [
  {table: outbox, created_at: created_at, pending: "status = 'new'"},
  {table: outbox, created_at: created_at, pending: "status = 'retry'"}]}]
`), "q.yml")
	if err == nil || !strings.Contains(err.Error(), `outbox[0].tables[1].table: "outbox" is already watched by tables[0]`) {
		t.Errorf("err = %v", err)
	}
}
