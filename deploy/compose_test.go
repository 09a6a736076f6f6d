// Package deploy holds the configuration of the compose stack
// (docker-compose.yml at the repository root): queuewatch's config for it,
// RabbitMQ's config and definitions, and the load generator scripts. Its
// tests validate the whole stack without Docker.
package deploy

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/prometheus/promtooltest"
)

const root = ".."

func loadProject(t *testing.T) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{filepath.Join(root, "docker-compose.yml")},
		cli.WithWorkingDirectory(root),
		cli.WithResolvedPaths(true),
		cli.WithDiscardEnvFile,
	)
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(t.Context())
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	return p
}

// TestComposeLoads loads and validates docker-compose.yml with compose-go
// (schema and consistency) and checks it has the whole stack.
func TestComposeLoads(t *testing.T) {
	p := loadProject(t)
	want := []string{"alertmanager", "grafana", "kafka", "loadgen-kafka", "loadgen-rabbitmq", "prometheus", "queuewatch", "rabbitmq"}
	if got := slices.Sorted(maps.Keys(p.Services)); !slices.Equal(got, want) {
		t.Errorf("services %v, want %v", got, want)
	}
	qw := p.Services["queuewatch"]
	if qw.Build == nil || qw.Build.Context != mustAbs(t, root) || qw.Build.Dockerfile != "Dockerfile" {
		t.Errorf("queuewatch must be built from the repository's Dockerfile, got %+v", qw.Build)
	}
	if !slices.Equal(qw.Command, []string{"serve", "--config", "/etc/queuewatch/queuewatch.yml"}) {
		t.Errorf("queuewatch command %q", qw.Command)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestComposeMountsExist checks every bind-mounted host file or directory
// exists, and that the mounts land where the configs expect them.
func TestComposeMountsExist(t *testing.T) {
	p := loadProject(t)
	targets := map[string]string{} // container target -> host source
	for _, name := range slices.Sorted(maps.Keys(p.Services)) {
		for _, v := range p.Services[name].Volumes {
			if v.Type != types.VolumeTypeBind {
				continue
			}
			if _, err := os.Stat(v.Source); err != nil {
				t.Errorf("service %s mounts %s, which does not exist: %v", name, v.Source, err)
			}
			if !v.ReadOnly {
				t.Errorf("service %s mounts %s writable; config mounts should be read-only", name, v.Source)
			}
			targets[name+":"+v.Target] = v.Source
		}
	}
	for target, want := range map[string]string{
		"queuewatch:/etc/queuewatch/queuewatch.yml":        "deploy/queuewatch.yml",
		"prometheus:/etc/prometheus/prometheus.yml":        "prometheus/prometheus.yml",
		"prometheus:/etc/prometheus/rules":                 "prometheus/rules",
		"alertmanager:/etc/alertmanager/alertmanager.yml":  "prometheus/alertmanager.yml",
		"grafana:/etc/grafana/provisioning/datasources":    "grafana/provisioning/datasources",
		"grafana:/etc/grafana/provisioning/dashboards":     "grafana/provisioning/dashboards",
		"grafana:/var/lib/grafana/dashboards/queuewatch":   "grafana/dashboards",
		"rabbitmq:/etc/rabbitmq/conf.d/90-queuewatch.conf": "deploy/rabbitmq/rabbitmq.conf",
		"rabbitmq:/etc/rabbitmq/definitions.json":          "deploy/rabbitmq/definitions.json",
		"loadgen-kafka:/loadgen/kafka.sh":                  "deploy/loadgen/kafka.sh",
		"loadgen-rabbitmq:/loadgen/rabbitmq.sh":            "deploy/loadgen/rabbitmq.sh",
	} {
		if got := targets[target]; got != mustAbs(t, filepath.Join(root, want)) {
			t.Errorf("%s mounts %q, want %s", target, got, want)
		}
	}
}

// TestComposeHealthyDependencies checks every depends_on with condition
// service_healthy names a service with an enabled healthcheck; without one
// `docker compose up` waits forever.
func TestComposeHealthyDependencies(t *testing.T) {
	p := loadProject(t)
	n := 0
	for _, name := range slices.Sorted(maps.Keys(p.Services)) {
		for dep, d := range p.Services[name].DependsOn {
			target, ok := p.Services[dep]
			if !ok {
				t.Errorf("%s depends on unknown service %s", name, dep)
				continue
			}
			if d.Condition != types.ServiceConditionHealthy {
				continue
			}
			n++
			hc := target.HealthCheck
			if hc == nil || hc.Disable || len(hc.Test) == 0 {
				t.Errorf("%s waits for %s to be healthy, but %s has no healthcheck", name, dep, dep)
			}
		}
	}
	if n < 5 {
		t.Errorf("only %d service_healthy dependencies: the stack should start in order", n)
	}
}

// TestComposePortsUnique checks no two services publish the same host port.
func TestComposePortsUnique(t *testing.T) {
	p := loadProject(t)
	seen := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(p.Services)) {
		for _, port := range p.Services[name].Ports {
			if port.Published == "" {
				continue
			}
			key := port.HostIP + ":" + port.Published + "/" + port.Protocol
			if other, dup := seen[key]; dup {
				t.Errorf("host port %s published by both %s and %s", key, other, name)
			}
			seen[key] = name
		}
	}
	for _, want := range []string{"8080", "3000", "9090", "9093", "5672", "15672", "9094"} {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(seen)), func(k string) bool { return strings.Contains(k, ":"+want+"/") }) {
			t.Errorf("host port %s is not published", want)
		}
	}
}

// TestPrometheusConfig runs `promtool check config`, which also loads the
// rule files it names, and checks it scrapes queuewatch where compose runs it.
func TestPrometheusConfig(t *testing.T) {
	dir := filepath.Join(root, "prometheus")
	out := promtooltest.MustRun(t, dir, "check", "config", "prometheus.yml")
	generated, err := alerts.Rules(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	want := strconv.Itoa(bytes.Count(generated, []byte("- alert: "))) + " rules found"
	if !strings.Contains(out, want) {
		t.Errorf("promtool did not load the generated rules (want %q):\n%s", want, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	type scrapeConfig struct {
		Job    string `yaml:"job_name"`
		Static []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
	}
	var cfg struct {
		Global struct {
			External map[string]string `yaml:"external_labels"`
		} `yaml:"global"`
		Scrape []scrapeConfig `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Global.External[alerts.DashboardURLLabel] == "" {
		t.Errorf("external label %s missing: alert dashboard_url would be a bare path", alerts.DashboardURLLabel)
	}
	i := slices.IndexFunc(cfg.Scrape, func(s scrapeConfig) bool { return s.Job == "queuewatch" })
	if i < 0 || len(cfg.Scrape[i].Static) != 1 || !slices.Equal(cfg.Scrape[i].Static[0].Targets, []string{"queuewatch:8080"}) {
		t.Errorf("no queuewatch job scraping queuewatch:8080")
	}
}

// TestAlertmanagerConfig checks the Alertmanager config parses, its routes
// name defined receivers and its inhibit rules name alerts that exist.
// (Debian's promtool has no amtool twin here, so this is not a full check.)
func TestAlertmanagerConfig(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "prometheus", "alertmanager.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Route struct {
			Receiver string `yaml:"receiver"`
			Routes   []struct {
				Receiver string `yaml:"receiver"`
			} `yaml:"routes"`
		} `yaml:"route"`
		Receivers []struct {
			Name string `yaml:"name"`
		} `yaml:"receivers"`
		Inhibit []struct {
			Source []string `yaml:"source_matchers"`
			Target []string `yaml:"target_matchers"`
		} `yaml:"inhibit_rules"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	receivers := map[string]bool{}
	for _, r := range cfg.Receivers {
		receivers[r.Name] = true
	}
	if !receivers[cfg.Route.Receiver] {
		t.Errorf("route receiver %q undefined", cfg.Route.Receiver)
	}
	for _, r := range cfg.Route.Routes {
		if !receivers[r.Receiver] {
			t.Errorf("sub-route receiver %q undefined", r.Receiver)
		}
	}
	names := alertNames(t)
	for _, in := range cfg.Inhibit {
		for _, m := range append(in.Source, in.Target...) {
			pattern, ok := strings.CutPrefix(m, "alertname=~")
			if !ok {
				if pattern, ok = strings.CutPrefix(m, "alertname="); !ok {
					continue
				}
				pattern = regexp.QuoteMeta(strings.Trim(pattern, `"`))
			}
			re := regexp.MustCompile("^(?:" + strings.Trim(pattern, `"`) + ")$")
			if !slices.ContainsFunc(names, re.MatchString) {
				t.Errorf("inhibit matcher %s matches no alert of the generated rules", m)
			}
		}
	}
}

// alertNames returns the names of the generated alerts.
func alertNames(t *testing.T) []string {
	t.Helper()
	data, err := alerts.Rules(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Alert)
		}
	}
	return names
}

// TestQueuewatchConfig checks the stack's queuewatch config is valid, watches
// both brokers at their compose addresses, and uses the thresholds the
// committed rule file was generated from.
func TestQueuewatchConfig(t *testing.T) {
	cfg, err := config.Load("queuewatch.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.RequireSources(); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Kafka) != 1 || !slices.Equal(cfg.Kafka[0].Brokers, []string{"kafka:9092"}) {
		t.Errorf("kafka clusters %+v, want one at kafka:9092", cfg.Kafka)
	}
	if len(cfg.RabbitMQ) != 1 {
		t.Fatalf("rabbitmq clusters %+v, want one", cfg.RabbitMQ)
	}
	amqp, err := url.Parse(cfg.RabbitMQ[0].URL)
	if err != nil || amqp.Host != "rabbitmq:5672" {
		t.Errorf("rabbitmq url %q, want host rabbitmq:5672", cfg.RabbitMQ[0].URL)
	}
	if cfg.RabbitMQ[0].ManagementURL != "http://rabbitmq:15672" {
		t.Errorf("management_url %q", cfg.RabbitMQ[0].ManagementURL)
	}
	if cfg.Listen != "0.0.0.0:8080" {
		t.Errorf("listen %q: must listen on all interfaces on the port compose publishes", cfg.Listen)
	}
	got, err := alerts.Rules(cfg)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join(root, "prometheus", "rules", "queuewatch.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		t.Error("prometheus/rules/queuewatch.rules.yml is not what `queuewatch rules --config deploy/queuewatch.yml` prints: the stack's alerts would not match its thresholds")
	}
	password, _ := amqp.User.Password()
	checkRabbitUser(t, amqp.User.Username(), password)
}

type permission struct {
	User string `json:"user"`
}

type definitions struct {
	Users []struct {
		Name      string   `json:"name"`
		Hash      string   `json:"password_hash"`
		Algorithm string   `json:"hashing_algorithm"`
		Tags      []string `json:"tags"`
	} `json:"users"`
	Permissions []permission `json:"permissions"`
	Exchanges   []struct {
		Name string `json:"name"`
	} `json:"exchanges"`
	Queues []struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"queues"`
	Bindings []struct {
		Source      string `json:"source"`
		Destination string `json:"destination"`
		RoutingKey  string `json:"routing_key"`
	} `json:"bindings"`
}

func loadDefinitions(t *testing.T) definitions {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("rabbitmq", "definitions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d definitions
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&d); err != nil {
		t.Fatal(err)
	}
	return d
}

// checkRabbitUser checks definitions.json creates the user queuewatch logs
// in as, with that password (RabbitMQ's salted SHA-256: base64 of
// salt ‖ sha256(salt ‖ password), 4-byte salt) and management access.
func checkRabbitUser(t *testing.T, user, password string) {
	t.Helper()
	d := loadDefinitions(t)
	for _, u := range d.Users {
		if u.Name != user {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(u.Hash)
		if err != nil || len(raw) != 4+sha256.Size || u.Algorithm != "rabbit_password_hashing_sha256" {
			t.Fatalf("user %s: bad hash %q (%s)", user, u.Hash, u.Algorithm)
		}
		sum := sha256.Sum256(append(slices.Clone(raw[:4]), password...))
		if !bytes.Equal(sum[:], raw[4:]) {
			t.Errorf("user %s: password hash does not match the password in deploy/queuewatch.yml", user)
		}
		if !slices.Contains(u.Tags, "administrator") && !slices.Contains(u.Tags, "monitoring") {
			t.Errorf("user %s has tags %v: the management API needs monitoring or administrator", user, u.Tags)
		}
		if !slices.ContainsFunc(d.Permissions, func(p permission) bool { return p.User == user }) {
			t.Errorf("user %s has no vhost permissions", user)
		}
		return
	}
	t.Errorf("definitions.json has no user %s", user)
}

// TestRabbitMQDeadLetterTopology checks the demo queue dead-letters into a
// queue that queuewatch recognises as a DLQ, so dead letters appear on the
// first `docker compose up`.
func TestRabbitMQDeadLetterTopology(t *testing.T) {
	d := loadDefinitions(t)
	args := map[string]map[string]any{}
	for _, q := range d.Queues {
		args[q.Name] = q.Arguments
	}
	orders, ok := args["orders"]
	if !ok {
		t.Fatal("no orders queue")
	}
	dlx, _ := orders["x-dead-letter-exchange"].(string)
	key, _ := orders["x-dead-letter-routing-key"].(string)
	if ttl, _ := orders["x-message-ttl"].(float64); ttl <= 0 {
		t.Errorf("orders has no message TTL: unprocessed orders would never dead-letter")
	}
	var dlq string
	for _, b := range d.Bindings {
		if b.Source == dlx && b.RoutingKey == key {
			dlq = b.Destination
		}
	}
	if _, ok := args[dlq]; !ok {
		t.Fatalf("orders dead-letters to exchange %q key %q, which routes to no declared queue", dlx, key)
	}
	if !config.Default().DLQ.IsDLQName(dlq) {
		t.Errorf("dead-letter queue %q does not match dlq.name_pattern", dlq)
	}

	conf, err := os.ReadFile(filepath.Join("rabbitmq", "rabbitmq.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"management_agent.disable_metrics_collector = false",
		"definitions.local.path = /etc/rabbitmq/definitions.json",
	} {
		if !bytes.Contains(conf, []byte("\n"+line+"\n")) {
			t.Errorf("rabbitmq.conf lacks %q", line)
		}
	}
}

// TestLoadGeneratorScripts checks the load generator scripts are valid
// POSIX shell and use what the stack defines.
func TestLoadGeneratorScripts(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file string
		uses []string
	}{
		{"loadgen/kafka.sh", []string{"kafka:9092", "orders.DLT", "billing-stopped", "parse.headers=true"}},
		{"loadgen/rabbitmq.sh", []string{"--host=rabbitmq", "reject_requeue_false", "routing_key=orders", "routing_key=payments"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			if out, err := exec.CommandContext(t.Context(), sh, "-n", tc.file).CombinedOutput(); err != nil {
				t.Errorf("sh -n %s: %v\n%s", tc.file, err, out)
			}
			data, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range tc.uses {
				if !bytes.Contains(data, []byte(u)) {
					t.Errorf("%s does not use %s", tc.file, u)
				}
			}
		})
	}
}

// TestDockerfile checks the image builds the real command and runs it the
// way compose expects.
func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"go build", "./cmd/queuewatch", "CGO_ENABLED=0",
		`ENTRYPOINT ["/queuewatch"]`, "/var/lib/queuewatch", "USER 65532",
	} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "queuewatch")); err != nil {
		t.Errorf("Dockerfile builds ./cmd/queuewatch: %v", err)
	}
}
