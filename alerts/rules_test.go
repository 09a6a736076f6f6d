package alerts

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/prometheus/promtooltest"
)

// updateGolden is the environment variable that rewrites generated files
// (rule files here, dashboards in grafana/) instead of comparing with them.
const updateGolden = "QUEUEWATCH_UPDATE_GOLDEN"

const (
	defaultRules   = "../prometheus/rules/queuewatch.rules.yml"
	defaultTests   = "../prometheus/rules/tests"
	overrideConfig = "testdata/overrides.yml"
	overrideRules  = "testdata/overrides.rules.yml"
	overrideTests  = "testdata/overrides_test.yml"
	runbooks       = "../docs/runbooks.md"
)

// The rules of the topic and group granularities (metrics.granularity),
// whose config is testdata/granularity-<g>.yml and promtool tests
// testdata/granularity-<g>_test.yml.
const (
	topicRules = "testdata/granularity-topic.rules.yml"
	groupRules = "testdata/granularity-group.rules.yml"
)

// wantAlerts is every alert the issue asks for.
var wantAlerts = []string{
	"QueuewatchDLQNotEmpty", "QueuewatchDLQGrowing", "QueuewatchDLQMessagesOld",
	"QueuewatchKafkaConsumerLagHigh", "QueuewatchKafkaConsumerLagGrowing", "QueuewatchKafkaConsumerLagSecondsHigh",
	"QueuewatchKafkaConsumerGroupStalled", "QueuewatchKafkaConsumerGroupStopped",
	"QueuewatchRabbitMQQueueStalled", "QueuewatchRabbitMQQueueNoConsumers", "QueuewatchRabbitMQQueueBacklogHigh",
	"QueuewatchCollectorDown", "QueuewatchCollectorPartial", "QueuewatchCollectorStale",
	"QueuewatchOutboxBacklogGrowing", "QueuewatchOutboxPublisherStalled", "QueuewatchOutboxPendingRowsOld",
	"QueuewatchOutboxReplicationSlotInactive", "QueuewatchOutboxReplicationSlotLagHigh",
	"QueuewatchNATSConsumerPendingHigh", "QueuewatchNATSConsumerLagSecondsHigh",
	"QueuewatchNATSConsumerStalled", "QueuewatchNATSConsumerStopped",
	"QueuewatchSQSQueueNoConsumer", "QueuewatchSQSQueueStalled", "QueuewatchSQSQueueBacklogHigh",
	"QueuewatchKinesisApplicationStopped", "QueuewatchKinesisApplicationStalled", "QueuewatchKinesisApplicationLagHigh", "QueuewatchKinesisShardUnread",
	"QueuewatchPubSubDeadLettersDropped", "QueuewatchPubSubSubscriptionResourceError", "QueuewatchPubSubDeadLetterRisk",
	"QueuewatchPubSubBacklogHigh", "QueuewatchPubSubOldestUnackedHigh",
	"QueuewatchKafkaShareGroupLagHigh", "QueuewatchKafkaShareGroupStalled", "QueuewatchKafkaShareGroupStopped",
	"QueuewatchKafkaStreamsGroupLagHigh", "QueuewatchKafkaStreamsGroupStalled", "QueuewatchKafkaStreamsGroupStopped",
	"QueuewatchConnectTaskFailed",
	"QueuewatchDataLossImminent",
}

func loadOverrideConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Load(overrideConfig)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestRulesGolden fails when a committed rule file differs from what Rules
// generates now; QUEUEWATCH_UPDATE_GOLDEN=1 rewrites them.
func TestRulesGolden(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		cfg        func(*testing.T) *config.Config
	}{
		{"defaults", defaultRules, func(*testing.T) *config.Config { return config.Default() }},
		{"overrides", overrideRules, loadOverrideConfig},
		{"granularity topic", topicRules, loadConfig("testdata/granularity-topic.yml")},
		{"granularity group", groupRules, loadConfig("testdata/granularity-group.yml")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Rules(tc.cfg(t))
			if err != nil {
				t.Fatal(err)
			}
			if os.Getenv(updateGolden) != "" {
				if err := os.WriteFile(tc.file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatalf("%v (generate it with %s=1 go test ./alerts)", err, updateGolden)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is out of date: regenerate with %s=1 go test ./alerts", tc.file, updateGolden)
			}
		})
	}
}

func loadConfig(path string) func(*testing.T) *config.Config {
	return func(t *testing.T) *config.Config {
		t.Helper()
		cfg, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
}

func TestRulesDeterministic(t *testing.T) {
	cfg := loadOverrideConfig(t)
	first, err := Rules(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := Rules(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Fatal("two calls of Rules gave different output")
		}
	}
}

// TestPromtoolCheckRules checks both generated files with promtool, which
// parses every expression and template the way Prometheus 2.42 loads them.
func TestPromtoolCheckRules(t *testing.T) {
	for _, f := range []string{defaultRules, overrideRules, topicRules, groupRules} {
		t.Run(filepath.Base(f), func(t *testing.T) {
			out := promtooltest.MustRun(t, ".", "check", "rules", f)
			if !strings.Contains(out, "SUCCESS") {
				t.Errorf("promtool check rules %s:\n%s", f, out)
			}
		})
	}
}

// TestPromtoolTestRules runs the promtool unit tests of the default rules
// (prometheus/rules/tests) and of the override rules (testdata).
func TestPromtoolTestRules(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(defaultTests, "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, overrideTests, "testdata/granularity-topic_test.yml", "testdata/granularity-group_test.yml")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			dir, name := filepath.Split(f)
			out := promtooltest.MustRun(t, dir, "test", "rules", name)
			if !strings.Contains(out, "SUCCESS") {
				t.Errorf("promtool test rules %s:\n%s", f, out)
			}
		})
	}
}

// TestPromtoolTestsCatchBrokenRules proves the unit tests guard what matters:
// each mutation of the generated rules must make them fail.
func TestPromtoolTestsCatchBrokenRules(t *testing.T) {
	good, err := Rules(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	tests, err := filepath.Glob(filepath.Join(defaultTests, "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, old, new string }{
		{"DLQs not excluded from no-consumer rule", "(queuewatch_rabbitmq_queue_consumers == 0) unless on (cluster, vhost, queue) " + rabbitDLQs, "(queuewatch_rabbitmq_queue_consumers == 0)"},
		{"for of two polls lengthened", "for: 30s", "for: 45s"},
		{"for of the window shortened", "for: 2m30s", "for: 2m15s"},
		{"lag threshold off by one", "> 10000", "> 10001"},
		{"dlq age threshold lowered", "> 3600", "> 3000"},
		{"stall rule watching stop", `status="stall"`, `status="stop"`},
		{"wrong dashboard path", "/groups/", "/group/"},
		{"outbox stall rule watching warn", `queuewatch_outbox_status{status="stall"}`, `queuewatch_outbox_status{status="warn"}`},
		{"outbox age threshold raised", "queuewatch_outbox_oldest_pending_age_seconds > 600", "queuewatch_outbox_oldest_pending_age_seconds > 6000"},
		{"slot inactive rule watching active", "queuewatch_outbox_replication_slot_active == 0", "queuewatch_outbox_replication_slot_active == 1"},
		{"slot lag threshold off by one", "> 1073741824", "> 1073741825"},
		{"wrong NATS consumer path", "/consumers/", "/consumer/"},
		{"NATS pending against lag seconds", "queuewatch_nats_consumer_pending_messages > 10000", "queuewatch_nats_consumer_lag_seconds > 10000"},
		{"SQS DLQs not excluded from queue rules", " unless on (cluster, queue) " + sqsDLQs, ""},
		{"SQS for of two reads shortened", "for: 4m30s", "for: 4m15s"},
		{"SQS stall rule watching stop", `queuewatch_sqs_queue_status{status="stall"}`, `queuewatch_sqs_queue_status{status="stop"}`},
		{"share group stall rule watching stop", `queuewatch_kafka_sharegroup_status{status="stall"}`, `queuewatch_kafka_sharegroup_status{status="stop"}`},
		{"share group lag not summed over partitions", "sum by (cluster, group) (queuewatch_kafka_sharegroup_lag) > 10000", "max by (cluster, group) (queuewatch_kafka_sharegroup_lag) > 10000"},
		{"wrong share group path", "/share-groups/", "/share-group/"},
		{"SQS backlog counting in-flight messages", `queuewatch_sqs_queue_messages{state="visible"} unless`, `queuewatch_sqs_queue_messages unless`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each mutation runs promtool on its own copy
			if !bytes.Contains(good, []byte(tc.old)) {
				t.Fatalf("generated rules no longer contain %q: update the mutation", tc.old)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "queuewatch.rules.yml"), bytes.ReplaceAll(good, []byte(tc.old), []byte(tc.new)), 0o644); err != nil {
				t.Fatal(err)
			}
			sub := filepath.Join(dir, "tests")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			args := []string{"test", "rules"}
			for _, f := range tests {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(sub, filepath.Base(f)), data, 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, filepath.Base(f))
			}
			if out, ok := promtooltest.Run(t, sub, args...); ok {
				t.Errorf("promtool unit tests pass with the rules broken (%s):\n%s", tc.name, out)
			}
		})
	}
}

// TestGranularityTestsNeedGranularityRules proves the granularity unit tests
// depend on the granularity: with the partition granularity's rules, which
// query per-group lag seconds the topic granularity does not export and
// per-topic lag the group granularity does not export, they fail.
func TestGranularityTestsNeedGranularityRules(t *testing.T) {
	partition, err := Rules(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"topic", "group"} {
		t.Run(g, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			test, err := os.ReadFile("testdata/granularity-" + g + "_test.yml")
			if err != nil {
				t.Fatal(err)
			}
			for name, data := range map[string][]byte{"granularity-" + g + ".rules.yml": partition, "t.yml": test} {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if out, ok := promtooltest.Run(t, dir, "test", "rules", "t.yml"); ok {
				t.Errorf("the %s granularity's promtool tests pass with the partition rules:\n%s", g, out)
			}
		})
	}
}

type parsedRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func parseRules(t *testing.T, data []byte) []parsedRule {
	t.Helper()
	var f struct {
		Groups []struct {
			Name  string       `yaml:"name"`
			Rules []parsedRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Groups) != 1 || f.Groups[0].Name != RuleGroup {
		t.Fatalf("want one group %q, got %+v", RuleGroup, f.Groups)
	}
	return f.Groups[0].Rules
}

// TestRulesShape checks what every rule must carry: a known CamelCase name,
// a for, a severity, the four annotations, a runbook anchor that exists in
// docs/runbooks.md and an expression Prometheus parses.
func TestRulesShape(t *testing.T) {
	data, err := Rules(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(runbooks)
	if err != nil {
		t.Fatal(err)
	}
	rules := parseRules(t, data)
	var names []string
	for _, r := range rules {
		names = append(names, r.Alert)
		t.Run(r.Alert, func(t *testing.T) {
			if !regexp.MustCompile(`^Queuewatch[A-Z][A-Za-z]+$`).MatchString(r.Alert) {
				t.Errorf("name %q is not Queuewatch and CamelCase", r.Alert)
			}
			if d, err := time.ParseDuration(r.For); err != nil || d <= 0 {
				t.Errorf("for %q: want a positive duration", r.For)
			}
			if s := r.Labels["severity"]; s != SeverityCritical && s != SeverityWarning {
				t.Errorf("severity %q", s)
			}
			for _, k := range []string{"summary", "description", "runbook_url", "dashboard_url"} {
				if r.Annotations[k] == "" {
					t.Errorf("annotation %s missing", k)
				}
			}
			if !strings.Contains(r.Annotations["description"], "$value") && !strings.Contains(r.Annotations["description"], "$labels") {
				t.Errorf("description names neither the value nor the labels: %q", r.Annotations["description"])
			}
			anchor := strings.ToLower(r.Alert)
			if want := RunbookURL + "#" + anchor; r.Annotations["runbook_url"] != want {
				t.Errorf("runbook_url %q, want %q", r.Annotations["runbook_url"], want)
			}
			if !bytes.Contains(doc, []byte("\n## "+r.Alert+"\n")) {
				t.Errorf("docs/runbooks.md has no section %q (anchor #%s)", "## "+r.Alert, anchor)
			}
			if !strings.HasPrefix(r.Annotations["dashboard_url"], "{{ $externalLabels."+DashboardURLLabel+" }}/") {
				t.Errorf("dashboard_url %q does not start with the external label", r.Annotations["dashboard_url"])
			}
			if _, err := parser.NewParser(parser.Options{}).ParseExpr(r.Expr); err != nil {
				t.Errorf("expr %q: %v", r.Expr, err)
			}
		})
	}
	if !slices.Equal(names, wantAlerts) {
		t.Errorf("alerts\n got %v\nwant %v", names, wantAlerts)
	}
}

// TestSeveritiesDocumented: docs/metrics-alerts.md's table gives every
// alert the severity the rules give it, with the reason, so what pages is
// a choice written down rule by rule.
func TestSeveritiesDocumented(t *testing.T) {
	data, err := Rules(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/metrics-alerts.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\| (Queuewatch[A-Za-z]+) \| (critical|warning) \| [^|]+ \|$`).FindAllSubmatch(doc, -1) {
		documented[string(m[1])] = string(m[2])
	}
	rules := parseRules(t, data)
	for _, r := range rules {
		if got := documented[r.Alert]; got != r.Labels["severity"] {
			t.Errorf("%s is %s; docs/metrics-alerts.md says %q", r.Alert, r.Labels["severity"], got)
		}
	}
	if len(documented) != len(rules) {
		t.Errorf("docs/metrics-alerts.md documents %d alerts, the rules have %d", len(documented), len(rules))
	}
}

// TestEveryAlertUnitTested checks that the promtool tests cover every alert
// both firing and not firing.
func TestEveryAlertUnitTested(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(defaultTests, "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	firing, quiet := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tf struct {
			Tests []struct {
				AlertRuleTests []struct {
					Alertname string `yaml:"alertname"`
					ExpAlerts []any  `yaml:"exp_alerts"`
				} `yaml:"alert_rule_test"`
			} `yaml:"tests"`
		}
		if err := yaml.Unmarshal(data, &tf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tc := range tf.Tests {
			for _, a := range tc.AlertRuleTests {
				if len(a.ExpAlerts) > 0 {
					firing[a.Alertname] = true
				} else {
					quiet[a.Alertname] = true
				}
			}
		}
	}
	for _, a := range wantAlerts {
		if !firing[a] {
			t.Errorf("no promtool test expects %s to fire", a)
		}
		if !quiet[a] {
			t.Errorf("no promtool test expects %s not to fire", a)
		}
	}
}

// TestOverrideRules checks the selectors and thresholds generated for the
// overrides in testdata/overrides.yml; the promtool tests in
// testdata/overrides_test.yml check that they select the right groups.
func TestOverrideRules(t *testing.T) {
	data, err := Rules(loadOverrideConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range parseRules(t, data) {
		got[r.Alert] = append(got[r.Alert], r.Expr)
	}
	want := map[string][]string{
		"QueuewatchKafkaConsumerLagSecondsHigh": {
			`queuewatch_kafka_consumergroup_max_lag_seconds{group!~"batch-.*", group!~".*-payments|billing"} > 300`,
			`queuewatch_kafka_consumergroup_max_lag_seconds{group=~"batch-.*"} > 3600`,
			`queuewatch_kafka_consumergroup_max_lag_seconds{group=~".*-payments|billing", group!~"batch-.*"} > 30`,
		},
		"QueuewatchKafkaConsumerLagHigh": {
			`sum by (cluster, group) (queuewatch_kafka_consumergroup_topic_lag{group!~"batch-.*", group!~".*-payments|billing"}) > 10000`,
			`sum by (cluster, group) (queuewatch_kafka_consumergroup_topic_lag{group=~"batch-.*"}) > 500000`,
			`sum by (cluster, group) (queuewatch_kafka_consumergroup_topic_lag{group=~".*-payments|billing", group!~"batch-.*"}) > 10000`,
		},
		"QueuewatchDLQMessagesOld": {
			`queuewatch_dlq_oldest_message_age_seconds{dlq!~"audit\\..*|\"quoted\""} > 3600`,
			`queuewatch_dlq_oldest_message_age_seconds{dlq=~"audit\\..*|\"quoted\""} > 86400`,
		},
		"QueuewatchDLQNotEmpty": {`queuewatch_dlq_messages > 0`},
	}
	for name, exprs := range want {
		if !slices.Equal(got[name], exprs) {
			t.Errorf("%s:\n got %q\nwant %q", name, got[name], exprs)
		}
	}
	if n := len(got["QueuewatchKafkaConsumerLagGrowing"]); n != 3 {
		t.Errorf("QueuewatchKafkaConsumerLagGrowing has %d rules, want 3 (default and two group overrides)", n)
	}
}

func TestSegments(t *testing.T) {
	global := segment{threshold: "1", human: "1"}
	limit := func(v string) segment { return segment{threshold: v, human: v, override: "o" + v} }
	for _, tc := range []struct {
		name string
		ovs  []override
		want []segment
	}{
		{"no overrides", nil, []segment{{threshold: "1", human: "1"}}},
		{"one", []override{{pattern: "a.*", limit: limit("2")}}, []segment{
			{matchers: `group!~"a.*"`, threshold: "1", human: "1"},
			{matchers: `group=~"a.*"`, threshold: "2", human: "2", override: "o2"},
		}},
		{"catch-all ends the list and drops the default", []override{
			{pattern: "a", limit: limit("2")},
			{pattern: "", limit: limit("3")},
			{pattern: "b", limit: limit("4")},
		}, []segment{
			{matchers: `group=~"a"`, threshold: "2", human: "2", override: "o2"},
			{matchers: `group!~"a"`, threshold: "3", human: "3", override: "o3"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := segments("group", global, tc.ovs); !slices.Equal(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestOverrideFor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		label   string
		o       config.Override
		pattern string
		applies bool
	}{
		{"group override on group rules", "group", config.Override{Group: "g"}, "g", true},
		{"group override on dlq rules", "dlq", config.Override{Group: "g"}, "", false},
		{"dlq override on dlq rules", "dlq", config.Override{DLQ: "d"}, "d", true},
		{"both on group rules", "group", config.Override{Group: "g", DLQ: "d"}, "", false},
		{"both, dlq matches empty", "group", config.Override{Group: "g", DLQ: ".*"}, "g", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok, err := overrideFor(tc.label, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.applies || (ok && p != tc.pattern) {
				t.Errorf("got (%q, %v), want (%q, %v)", p, ok, tc.pattern, tc.applies)
			}
		})
	}
}

func TestRulesErrors(t *testing.T) {
	bad := config.Default()
	bad.Alerts.Overrides = []config.Override{{Group: "(", LagHigh: 1}}
	noPoll := config.Default()
	noPoll.PollInterval = 0
	for _, tc := range []struct {
		name string
		cfg  *config.Config
		want string
	}{
		{"nil", nil, "no config"},
		{"bad regex", bad, "alerts.overrides[0]"},
		{"no poll interval", noPoll, "poll_interval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Rules(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestPromDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{30 * time.Second, "30s"},
		{150 * time.Second, "2m30s"},
		{time.Hour, "1h"},
		{90*time.Minute + 1500*time.Millisecond, "1h30m1s500ms"},
		{0, "0s"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := promDuration(tc.d); got != tc.want {
				t.Errorf("promDuration(%s) = %q, want %q", tc.d, got, tc.want)
			}
		})
	}
}
