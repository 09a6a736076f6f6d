package helm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/queuewatch/queuewatch/config"
)

const (
	chartDir  = "queuewatch"
	release   = "qw"
	namespace = "monitoring"
)

// scenario is one set of values the chart must render and validate.
type scenario struct {
	name   string
	values string
	// kind is the workload the values call for, of replicas pods.
	kind     string
	replicas int32
	// pod is the name the test gives the pod (HOSTNAME, from the
	// downward API), and shard the shard that pod must then be.
	pod   string
	shard config.Shard
}

// postgres reports whether the scenario keeps its audit in PostgreSQL.
func (sc scenario) postgres() bool { return strings.Contains(sc.values, "driver: postgres") }

const peerURL = "http://qw-queuewatch-{index}.qw-queuewatch-headless.monitoring.svc:8080"

var scenarios = []scenario{
	{name: "default", values: "", kind: "StatefulSet", replicas: 1, shard: config.Shard{Count: 1}},
	{name: "ha", kind: "Deployment", replicas: 2, shard: config.Shard{Count: 1}, values: `
replicaCount: 2
audit:
  driver: postgres
  existingSecret: qw-audit
existingSecret: qw-credentials
config:
  metrics: {granularity: topic}
  auth:
    mode: proxy
    proxy: {trusted_cidrs: [10.0.0.0/8]}
  kafka:
    - name: prod
      brokers: [kafka-0.kafka:9092, kafka-1.kafka:9092]
      sasl: {mechanism: SCRAM-SHA-512, username: queuewatch, password: "${KAFKA_PASSWORD}"}
  rabbitmq:
    - name: prod
      url: "amqp://queuewatch:${RABBITMQ_PASSWORD}@rabbitmq:5672/"
      management_url: http://rabbitmq:15672
ingress:
  enabled: true
  className: nginx
  hosts: [{host: queuewatch.example.com, paths: [/]}]
  tls: [{secretName: queuewatch-tls, hosts: [queuewatch.example.com]}]
`},
	{name: "sharded", kind: "StatefulSet", replicas: 3, pod: "qw-queuewatch-1", shard: config.Shard{Index: 1, Count: 3, PeerURL: peerURL}, values: `
shards: 3
secretEnv:
  KAFKA_PASSWORD: s3cret
config:
  kafka:
    - {name: eu, brokers: ["kafka.eu:9092"], sasl: {mechanism: PLAIN, username: qw, password: "${KAFKA_PASSWORD}"}}
    - {name: us, brokers: ["kafka.us:9092"]}
    - {name: ap, brokers: ["kafka.ap:9092"]}
  nats:
    - {name: edge, url: "nats://nats:4222"}
`},
	// Two pods per shard on PostgreSQL, with the config sections a
	// shared deployment adds (OIDC, masking, a schema registry) passed
	// through as they are: the fifth pod is shard 1's standby.
	{name: "sharded-ha", kind: "StatefulSet", replicas: 6, pod: "qw-queuewatch-4", shard: config.Shard{Index: 1, Count: 3, PeerURL: peerURL}, values: `
shards: 3
replicaCount: 2
audit: {driver: postgres, dsn: "postgres://queuewatch:pw@pg:5432/queuewatch"}
secretEnv:
  OIDC_CLIENT_SECRET: s3cret
  SESSION_KEY: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
  MASKING_KEY: fedcba9876543210fedcba9876543210
config:
  auth:
    mode: oidc
    session: {key: "${SESSION_KEY}"}
    oidc:
      issuer: https://login.example.com
      client_id: queuewatch
      client_secret: "${OIDC_CLIENT_SECRET}"
      redirect_url: https://queuewatch.example.com/auth/callback
      group_roles:
        platform: admin
        payments: {role: operator, scope: {clusters: [eu]}}
  masking_key: "${MASKING_KEY}"
  masking:
    - {dlqs: [".*"], fields: ["$..card_number"], mode: hash}
  kafka:
    - {name: eu, brokers: ["kafka.eu:9092"], schema_registry: {url: "http://registry.eu:8081"}}
    - {name: us, brokers: ["kafka.us:9092"]}
    - {name: ap, brokers: ["kafka.ap:9092"]}
ingress:
  enabled: true
  hosts: [{host: queuewatch.example.com, paths: [/]}]
`},
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func parseValues(t *testing.T, values string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	if err := yaml.Unmarshal([]byte(values), &vals); err != nil {
		t.Fatal(err)
	}
	return vals
}

// render renders the chart as helm install --dry-run would: template
// name → manifest.
func render(t *testing.T, values string) (map[string]string, error) {
	t.Helper()
	ch := loadChart(t)
	opts := common.ReleaseOptions{Name: release, Namespace: namespace, Revision: 1, IsInstall: true}
	rv, err := util.ToRenderValuesWithSchemaValidation(ch, parseValues(t, values), opts, common.DefaultCapabilities, false)
	if err != nil {
		return nil, err
	}
	return engine.Render(ch, rv)
}

// objects are a scenario's rendered objects, decoded.
type objects struct {
	configMaps   []corev1.ConfigMap
	secrets      []corev1.Secret
	services     []corev1.Service
	statefulSets []appsv1.StatefulSet
	deployments  []appsv1.Deployment
	pdbs         []policyv1.PodDisruptionBudget
	ingresses    []networkingv1.Ingress
	monitors     []monitoringv1.ServiceMonitor
	rules        []monitoringv1.PrometheusRule
	notes        string
}

// decodeStrict decodes one manifest into out; a field its type does not
// have is an error.
func decodeStrict[T any](doc []byte, out *[]T) error {
	var v T
	if err := yaml.UnmarshalStrict(doc, &v); err != nil {
		return err
	}
	*out = append(*out, v)
	return nil
}

// decode splits every rendered template into its objects and decodes
// each strictly into its Kubernetes type, by kind.
func decode(t *testing.T, rendered map[string]string) objects {
	t.Helper()
	var o objects
	for _, name := range slices.Sorted(maps.Keys(rendered)) {
		text := rendered[name]
		if strings.HasSuffix(name, "NOTES.txt") {
			o.notes = text
			continue
		}
		for _, doc := range splitDocs(text) {
			var head struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var err error
			switch head.APIVersion + " " + head.Kind {
			case "v1 ConfigMap":
				err = decodeStrict(doc, &o.configMaps)
			case "v1 Secret":
				err = decodeStrict(doc, &o.secrets)
			case "v1 Service":
				err = decodeStrict(doc, &o.services)
			case "apps/v1 StatefulSet":
				err = decodeStrict(doc, &o.statefulSets)
			case "apps/v1 Deployment":
				err = decodeStrict(doc, &o.deployments)
			case "policy/v1 PodDisruptionBudget":
				err = decodeStrict(doc, &o.pdbs)
			case "networking.k8s.io/v1 Ingress":
				err = decodeStrict(doc, &o.ingresses)
			case "monitoring.coreos.com/v1 ServiceMonitor":
				err = decodeStrict(doc, &o.monitors)
			case "monitoring.coreos.com/v1 PrometheusRule":
				err = decodeStrict(doc, &o.rules)
			default:
				err = fmt.Errorf("no Go type for %s %s", head.APIVersion, head.Kind)
			}
			if err != nil {
				t.Errorf("%s: %s: %v\n%s", name, head.Kind, err, doc)
			}
		}
	}
	return o
}

// splitDocs splits a multi-document manifest, leaving out empty ones.
func splitDocs(text string) [][]byte {
	var out [][]byte
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			panic(err)
		}
		var v any
		if yaml.Unmarshal(doc, &v) == nil && v != nil {
			out = append(out, doc)
		}
	}
}

func TestChartRenders(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			rendered, err := render(t, sc.values)
			if err != nil {
				t.Fatal(err)
			}
			o := decode(t, rendered)
			pod := checkWorkload(t, sc, o)
			checkSecurity(t, pod)
			checkServices(t, sc, o)
			checkRules(t, sc, o)
			checkDashboards(t, sc, o)
			checkConfig(t, sc, o, pod)
			if len(o.pdbs) != 1 || o.pdbs[0].Spec.MaxUnavailable.IntValue() != 1 {
				t.Errorf("want one PodDisruptionBudget with maxUnavailable 1, got %+v", o.pdbs)
			}
			if o.notes == "" {
				t.Error("NOTES.txt rendered empty")
			}
		})
	}
}

// checkWorkload checks the workload's kind, replicas, volume and probes,
// and returns its pod template.
func checkWorkload(t *testing.T, sc scenario, o objects) corev1.PodTemplateSpec {
	t.Helper()
	var pod corev1.PodTemplateSpec
	var replicas *int32
	switch {
	case sc.kind == "StatefulSet" && len(o.statefulSets) == 1 && len(o.deployments) == 0:
		s := o.statefulSets[0]
		pod, replicas = s.Spec.Template, s.Spec.Replicas
		if s.Spec.ServiceName != release+"-queuewatch-headless" {
			t.Errorf("serviceName %q", s.Spec.ServiceName)
		}
		claims := s.Spec.VolumeClaimTemplates
		if sc.postgres() && len(claims) != 0 {
			t.Errorf("pods on PostgreSQL need no volume, got claims %+v", claims)
		}
		if !sc.postgres() && (len(claims) != 1 || claims[0].Name != "data") {
			t.Errorf("a SQLite StatefulSet needs the data volume claim, got %+v", claims)
		}
	case sc.kind == "Deployment" && len(o.deployments) == 1 && len(o.statefulSets) == 0:
		pod, replicas = o.deployments[0].Spec.Template, o.deployments[0].Spec.Replicas
	default:
		t.Fatalf("want one %s, got %d StatefulSets and %d Deployments", sc.kind, len(o.statefulSets), len(o.deployments))
	}
	if replicas == nil {
		t.Errorf("replicas unset, want %d", sc.replicas)
	} else if *replicas != sc.replicas {
		t.Errorf("replicas %d, want %d", *replicas, sc.replicas)
	}
	c := pod.Spec.Containers[0]
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("probes: liveness %+v readiness %+v", c.LivenessProbe, c.ReadinessProbe)
	}
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v", c.Resources)
	}
	return pod
}

// checkSecurity checks what a restricted namespace demands: non-root,
// read-only root filesystem, every capability dropped.
func checkSecurity(t *testing.T, pod corev1.PodTemplateSpec) {
	t.Helper()
	ps, cs := pod.Spec.SecurityContext, pod.Spec.Containers[0].SecurityContext
	switch {
	case ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot:
		t.Error("pod does not require non-root")
	case cs == nil || cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem:
		t.Error("root filesystem is writable")
	case cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation:
		t.Error("privilege escalation allowed")
	case cs.Capabilities == nil || !slices.Equal(cs.Capabilities.Drop, []corev1.Capability{"ALL"}):
		t.Errorf("capabilities %+v, want ALL dropped", cs.Capabilities)
	}
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Error("service account token mounted")
	}
}

// checkServices checks the Service, the headless one a StatefulSet
// needs, and that the ServiceMonitor scrapes each pod once.
func checkServices(t *testing.T, sc scenario, o objects) {
	t.Helper()
	want := 1
	if sc.kind == "StatefulSet" {
		want = 2
	}
	if len(o.services) != want {
		t.Fatalf("%d Services, want %d", len(o.services), want)
	}
	scraped := 0
	for _, s := range o.services {
		if _, headless := s.Labels["queuewatch.io/headless"]; !headless {
			scraped++
		}
	}
	if len(o.monitors) != 1 || scraped != 1 || o.monitors[0].Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("want one ServiceMonitor of /metrics selecting one Service, got %d monitors, %d Services", len(o.monitors), scraped)
	}
	if sc.name == "ha" && (len(o.ingresses) != 1 || o.ingresses[0].Spec.Rules[0].Host != "queuewatch.example.com") {
		t.Errorf("ingress %+v", o.ingresses)
	}
}

// granularity is the scenario's config.metrics.granularity.
func granularity(sc scenario) string {
	if strings.Contains(sc.values, "granularity: topic") {
		return "topic"
	}
	return "partition"
}

// repoRules and repoDashboards are the repo's generated files for a
// granularity, which the chart's copies must equal.
var (
	repoRules = map[string]string{
		"partition": "../../prometheus/rules/queuewatch.rules.yml",
		"topic":     "../../alerts/testdata/granularity-topic.rules.yml",
		"group":     "../../alerts/testdata/granularity-group.rules.yml",
	}
	repoDashboards = map[string]string{
		"partition": "../../grafana/dashboards",
		"topic":     "../../grafana/dashboards-topic",
		"group":     "../../grafana/dashboards-group",
	}
)

// checkRules checks the PrometheusRule holds the repo's rule file for
// the granularity, rule for rule.
func checkRules(t *testing.T, sc scenario, o objects) {
	t.Helper()
	if len(o.rules) != 1 {
		t.Fatalf("%d PrometheusRules, want 1", len(o.rules))
	}
	data, err := os.ReadFile(repoRules[granularity(sc)])
	if err != nil {
		t.Fatal(err)
	}
	var want monitoringv1.PrometheusRuleSpec
	if err := yaml.UnmarshalStrict(data, &want); err != nil {
		t.Fatal(err)
	}
	if len(want.Groups) == 0 || len(want.Groups[0].Rules) < 10 {
		t.Fatalf("the repo's rule file parsed to %d groups: the comparison would prove little", len(want.Groups))
	}
	if !reflect.DeepEqual(o.rules[0].Spec, want) {
		t.Errorf("PrometheusRule differs from %s", repoRules[granularity(sc)])
	}
}

// checkDashboards checks there is a ConfigMap per generated dashboard,
// labelled for the sidecar, holding the file byte for byte.
func checkDashboards(t *testing.T, sc scenario, o objects) {
	t.Helper()
	dir := repoDashboards[granularity(sc)]
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in %s: %v", dir, err)
	}
	got := map[string]string{}
	for _, cm := range o.configMaps {
		if cm.Labels["grafana_dashboard"] != "1" {
			continue
		}
		for k, v := range cm.Data {
			got[k] = v
		}
	}
	if len(got) != len(files) {
		t.Errorf("%d dashboard ConfigMaps, want %d (%s)", len(got), len(files), dir)
	}
	for _, f := range files {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got[filepath.Base(f)] != string(want) {
			t.Errorf("dashboard %s differs from %s", filepath.Base(f), f)
		}
	}
}

// checkConfig loads the rendered queuewatch.yml as the pod would: with
// the pod's environment (secrets as placeholders) and, for a shard, a
// StatefulSet pod's hostname. It must pass config validation.
func checkConfig(t *testing.T, sc scenario, o objects, pod corev1.PodTemplateSpec) {
	t.Helper()
	var file string
	for _, cm := range o.configMaps {
		if v, ok := cm.Data["queuewatch.yml"]; ok {
			file = v
		}
	}
	if file == "" {
		t.Fatal("no ConfigMap holds queuewatch.yml")
	}
	t.Setenv("HOSTNAME", "") // the pod's environment alone says which shard it is
	setPodEnv(t, sc, pod)
	checkAudit(t, sc, file)
	cfg, err := config.Parse([]byte(file), "queuewatch.yml")
	if err != nil {
		t.Fatalf("rendered config does not validate: %v\n%s", err, file)
	}
	if cfg.Listen != "0.0.0.0:8080" || cfg.DataDir != "/var/lib/queuewatch" {
		t.Errorf("listen %q data_dir %q", cfg.Listen, cfg.DataDir)
	}
	if cfg.Shard != sc.shard {
		t.Errorf("pod %s: shard %+v, want %+v", sc.pod, cfg.Shard, sc.shard)
	}
}

// setPodEnv sets the container's environment for config.Parse: plain
// values as they are, and a placeholder for every variable a Secret
// provides (by key, or every key of an envFrom Secret the test values
// name in secretEnv or by convention).
func setPodEnv(t *testing.T, sc scenario, pod corev1.PodTemplateSpec) {
	t.Helper()
	c := pod.Spec.Containers[0]
	for _, e := range c.Env {
		v := e.Value
		switch from := e.ValueFrom; {
		case from == nil:
		case from.FieldRef != nil && from.FieldRef.FieldPath == "metadata.name":
			v = sc.pod
		case from.SecretKeyRef != nil:
			v = "postgres://queuewatch:placeholder@postgres:5432/queuewatch"
		default:
			t.Fatalf("env %s comes from %+v, which the test cannot stand in for", e.Name, from)
		}
		t.Setenv(e.Name, v)
	}
	if len(c.EnvFrom) > 0 {
		// The credentials these scenarios reference.
		t.Setenv("KAFKA_PASSWORD", "placeholder")
		t.Setenv("RABBITMQ_PASSWORD", "placeholder")
		t.Setenv("OIDC_CLIENT_SECRET", "placeholder")
		t.Setenv("SESSION_KEY", strings.Repeat("ab", 32))
		t.Setenv("MASKING_KEY", "placeholder-placeholder")
	}
}

// checkAudit checks the rendered audit section: the DSN from the pod's
// environment on PostgreSQL, none (the SQLite default) otherwise.
func checkAudit(t *testing.T, sc scenario, file string) {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(file), &doc); err != nil {
		t.Fatal(err)
	}
	audit, ok := doc["audit"]
	if sc.postgres() {
		want := map[string]any{"driver": "postgres", "dsn": "${QUEUEWATCH_AUDIT_DSN}"}
		if !reflect.DeepEqual(audit, want) {
			t.Errorf("audit section %v, want %v", audit, want)
		}
	} else if ok {
		t.Errorf("audit section %v with sqlite: the default needs none", audit)
	}
}

// TestChartRefusesBadValues renders values that would deploy something
// broken: each fails with a message that says what to change.
func TestChartRefusesBadValues(t *testing.T) {
	for _, tc := range []struct{ name, values, want string }{
		{"two sqlite replicas", "replicaCount: 2", "replicaCount > 1 needs audit.driver postgres"},
		{"postgres without dsn", "audit: {driver: postgres}", "audit.driver postgres needs audit.dsn or audit.existingSecret"},
		{"unknown driver", "audit: {driver: mysql}", "at '/audit/driver': value must be one of 'sqlite', 'postgres'"},
		{"zero shards", "shards: 0", "at '/shards': minimum: got 0, want 1"},
		{"mistyped value", "replicas: 2", "additional properties 'replicas' not allowed"},
		{"sqlite standbys of shards", "shards: 2\nreplicaCount: 2", "replicaCount > 1 needs audit.driver postgres"},
		{"listen set", "config: {listen: '0.0.0.0:9090'}", "config.listen is set by the chart"},
		{"open ingress", "ingress: {enabled: true}", "ingress.enabled with config.auth.mode none"},
		{"custom thresholds", "config: {alerts: {lag_high: 5}}", "config.alerts changes the thresholds"},
		{"unknown granularity", "config: {metrics: {granularity: member}}", `no rule file for config.metrics.granularity "member"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, tc.values)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("render error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestChartLintStrict lints the chart as helm lint --strict does, for
// each scenario: a warning fails it.
func TestChartLintStrict(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			l := lint.RunAll(chartDir, parseValues(t, sc.values), namespace)
			for _, m := range l.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("lint: %s", m)
				}
			}
		})
	}
}

// TestChartFilesGolden fails when the chart's copies of the rule files
// and dashboards differ from the repo's generated ones (helm can only
// read files inside the chart); QUEUEWATCH_UPDATE_GOLDEN=1 copies them,
// as make generate does.
func TestChartFilesGolden(t *testing.T) {
	pairs := map[string]string{}
	for g, src := range repoRules {
		pairs[filepath.Join(chartDir, "files/rules", g+".rules.yml")] = src
	}
	for g, dir := range repoDashboards {
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no dashboards in %s", dir)
		}
		for _, f := range files {
			pairs[filepath.Join(chartDir, "files/dashboards", g, filepath.Base(f))] = f
		}
	}
	for dst, src := range pairs {
		want, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if os.Getenv("QUEUEWATCH_UPDATE_GOLDEN") != "" {
			if err := os.WriteFile(dst, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(dst)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s: run make generate", dst, src)
		}
	}
}
