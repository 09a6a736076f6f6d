package grafana

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// updateGolden is the environment variable that rewrites the committed
// dashboards (and, in alerts, the rule files) instead of comparing.
const updateGolden = "QUEUEWATCH_UPDATE_GOLDEN"

const dashboardDir = "dashboards"

// dashboards builds the dashboards of every variant, keyed by their path
// under grafana/ ("dashboards-topic/consumer-lag.json").
func dashboards(t *testing.T) map[string]dashboard.Dashboard {
	t.Helper()
	out := map[string]dashboard.Dashboard{}
	for dir, m := range Variants {
		ds, err := DashboardsFor(m)
		if err != nil {
			t.Fatal(err)
		}
		for file, d := range ds {
			out[dir+"/"+file] = d
		}
	}
	return out
}

// TestDashboardsGolden fails when the committed JSON differs from what the
// Go code generates; QUEUEWATCH_UPDATE_GOLDEN=1 rewrites it.
func TestDashboardsGolden(t *testing.T) {
	ds := dashboards(t)
	update := os.Getenv(updateGolden) != ""
	for path, d := range ds {
		t.Run(path, func(t *testing.T) {
			got, err := Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (generate it with %s=1 go test ./grafana)", err, updateGolden)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is out of date: regenerate with %s=1 go test ./grafana", path, updateGolden)
			}
		})
	}
	for dir := range Variants {
		committed, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range committed {
			if _, ok := ds[filepath.ToSlash(f)]; !ok {
				t.Errorf("%s is committed but no longer generated: delete it", f)
			}
		}
	}
	// The default directory is what Dashboards builds and compose provisions.
	def, err := Dashboards()
	if err != nil {
		t.Fatal(err)
	}
	for file := range def {
		a, _ := Marshal(def[file])
		b, _ := Marshal(ds[dashboardDir+"/"+file])
		if !bytes.Equal(a, b) {
			t.Errorf("Dashboards()[%s] differs from the %s variant", file, dashboardDir)
		}
	}
}

// TestDashboardsLoadAsJSON checks the committed files are dashboards Grafana
// can provision: valid JSON with the uid, title and panels.
func TestDashboardsLoadAsJSON(t *testing.T) {
	for file, want := range map[string]string{
		"consumer-lag.json":       UIDConsumerLag,
		"dead-letter-queues.json": UIDDLQ,
		"queuewatch.json":         UIDSelf,
		"nats-jetstream.json":     UIDNATS,
	} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dashboardDir, file))
			if err != nil {
				t.Fatal(err)
			}
			var d struct {
				UID    string            `json:"uid"`
				Title  string            `json:"title"`
				Panels []json.RawMessage `json:"panels"`
			}
			if err := json.Unmarshal(data, &d); err != nil {
				t.Fatal(err)
			}
			if d.UID != want || d.Title == "" || len(d.Panels) == 0 {
				t.Errorf("uid %q title %q with %d panels", d.UID, d.Title, len(d.Panels))
			}
		})
	}
}

// query is one PromQL expression of a dashboard, where it was found.
type query struct {
	where string
	expr  string
}

// labelValues matches a Grafana label_values(selector, label) variable query.
var labelValues = regexp.MustCompile(`^label_values\((.*),\s*\w+\)$`)

// dashboardQueries returns every PromQL expression of d: panel targets and
// the selectors inside label_values variable queries.
func dashboardQueries(t *testing.T, file string, d dashboard.Dashboard) []query {
	t.Helper()
	var out []query
	for _, p := range panels(d) {
		for _, target := range p.Targets {
			raw, err := json.Marshal(target)
			if err != nil {
				t.Fatal(err)
			}
			var q struct {
				Expr string `json:"expr"`
			}
			if err := json.Unmarshal(raw, &q); err != nil {
				t.Fatal(err)
			}
			if q.Expr == "" {
				t.Errorf("%s: panel %q has a target without expr", file, deref(p.Title))
				continue
			}
			out = append(out, query{file + ": panel " + deref(p.Title), q.Expr})
		}
	}
	if d.Templating.List != nil {
		for _, v := range d.Templating.List {
			if v.Type != "query" || v.Query == nil || v.Query.String == nil {
				continue
			}
			m := labelValues.FindStringSubmatch(*v.Query.String)
			if m == nil {
				t.Errorf("%s: variable %s query %q is not label_values(selector, label)", file, v.Name, *v.Query.String)
				continue
			}
			out = append(out, query{file + ": variable " + v.Name, m[1]})
		}
	}
	return out
}

func panels(d dashboard.Dashboard) []dashboard.Panel {
	var out []dashboard.Panel
	for _, p := range d.Panels {
		if p.Panel != nil {
			out = append(out, *p.Panel)
		}
		if p.RowPanel != nil {
			out = append(out, p.RowPanel.Panels...)
		}
	}
	return out
}

// Grafana variables, replaced by values that keep the PromQL valid.
var (
	grafanaInterval = regexp.MustCompile(`\$(__rate_interval|__interval|__range)\b|\$\{(__rate_interval|__interval|__range)\}`)
	grafanaVariable = regexp.MustCompile(`\$\{\w+(:\w+)?\}|\$\w+`)
)

// substitute replaces Grafana variables the way Grafana would before sending
// the query: durations by a duration, others by a plain value.
func substitute(expr string) string {
	expr = grafanaInterval.ReplaceAllString(expr, "5m")
	return grafanaVariable.ReplaceAllString(expr, "x")
}

func TestSubstitute(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`rate(m{a=~"$cluster"}[$__rate_interval])`, `rate(m{a=~"x"}[5m])`},
		{`m{a=~"${cluster}", b="${x:regex}"}[${__range}]`, `m{a=~"x", b="x"}[5m]`},
		{`m offset $__interval`, `m offset 5m`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := substitute(tc.in); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDashboardQueriesParse parses every dashboard query with the PromQL
// parser after substituting Grafana's variables.
func TestDashboardQueriesParse(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	n := 0
	for file, d := range dashboards(t) {
		for _, q := range dashboardQueries(t, file, d) {
			n++
			if _, err := p.ParseExpr(substitute(q.expr)); err != nil {
				t.Errorf("%s: %q: %v", q.where, q.expr, err)
			}
		}
	}
	if n < 20 {
		t.Errorf("found only %d queries: the walk over the dashboards is broken", n)
	}
}

// metricNames returns the metric names expr selects.
func metricNames(t *testing.T, expr string) []string {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(substitute(expr))
	if err != nil {
		t.Fatalf("parse %q: %v", expr, err)
	}
	var names []string
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == "__name__" {
				name = m.Value
			}
		}
		if name == "" {
			t.Errorf("%q selects series without a metric name", expr)
		}
		names = append(names, name)
		return nil
	})
	return names
}

// ruleExprs returns the expression of every alert rule generated for the
// metrics settings m.
func ruleExprs(t *testing.T, m config.Metrics) []query {
	t.Helper()
	cfg := config.Default()
	cfg.Metrics = m
	data, err := alerts.Rules(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	var out []query
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			out = append(out, query{"rule " + r.Alert, r.Expr})
		}
	}
	return out
}

// TestPanelsDescribedAndLinked checks every panel has a title, a
// description and the datasource variable, and that panels charting
// consumer groups or DLQs link to their queuewatch page.
func TestPanelsDescribedAndLinked(t *testing.T) {
	for file, d := range dashboards(t) {
		for _, p := range panels(d) {
			title := deref(p.Title)
			t.Run(file+"/"+title, func(t *testing.T) {
				if title == "" || deref(p.Description) == "" {
					t.Errorf("panel %q has no title or description", title)
				}
				if p.Datasource == nil || deref(p.Datasource.Uid) != "${datasource}" {
					t.Errorf("panel does not use the datasource variable")
				}
				var links []string
				if p.FieldConfig != nil {
					for _, l := range p.FieldConfig.Defaults.Links {
						links = append(links, deref(l.Url))
					}
				}
				var legends []string
				table := false
				for _, target := range p.Targets {
					raw, err := json.Marshal(target)
					if err != nil {
						t.Fatal(err)
					}
					var q struct {
						Legend string `json:"legendFormat"`
						Format string `json:"format"`
					}
					if err := json.Unmarshal(raw, &q); err != nil {
						t.Fatal(err)
					}
					legends = append(legends, q.Legend)
					table = table || q.Format == "table"
				}
				all := strings.Join(legends, " ")
				// A share or streams group's series link to its own page.
				groupLinkPath := groupPath
				if strings.HasPrefix(title, "Share group") {
					groupLinkPath = sharePath
				}
				if strings.HasPrefix(title, "Streams group") {
					groupLinkPath = streamsPath
				}
				for _, tc := range []struct{ label, path string }{
					{"{{group}}", groupLinkPath},
					{"{{dlq}}", dlqPath},
					{"{{table}}", outboxPath},
					{"{{slot}}", outboxPath},
				} {
					if strings.Contains(all, tc.label) && !slices.Contains(links, "${queuewatch_url}"+tc.path) {
						t.Errorf("panel shows %s series but has no link to %s (links %q)", tc.label, tc.path, links)
					}
				}
				for _, l := range links {
					if !strings.HasPrefix(l, "${queuewatch_url}/") {
						t.Errorf("link %q does not start with ${queuewatch_url}/", l)
					}
					// Table rows have no series labels: their links read
					// the row's columns instead.
					if strings.Contains(l, "${__") && (table != strings.Contains(l, "${__data.fields.") || table == strings.Contains(l, "${__field.labels.")) {
						t.Errorf("link %q does not fit a panel with table=%v", l, table)
					}
				}
			})
		}
	}
}

// TestVariablesDefined checks every $variable a dashboard uses is defined in
// it (or is one of Grafana's built-ins).
func TestVariablesDefined(t *testing.T) {
	used := regexp.MustCompile(`\$\{(\w+)(?::\w+)?\}|\$(\w+)`)
	for file, d := range dashboards(t) {
		t.Run(file, func(t *testing.T) {
			defined := map[string]bool{}
			for _, v := range d.Templating.List {
				defined[v.Name] = true
			}
			for _, want := range []string{"datasource", "queuewatch_url"} {
				if !defined[want] {
					t.Errorf("variable %s missing", want)
				}
			}
			data, err := Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range used.FindAllStringSubmatch(string(data), -1) {
				name := m[1] + m[2]
				if !defined[name] && !strings.HasPrefix(name, "__") {
					t.Errorf("uses undefined variable $%s", name)
				}
			}
		})
	}
}

// TestStatusPalette checks that every status panel (Kafka groups, NATS
// consumers, outbox tables) shows each status as the word, shape and colour
// of the queuewatch UI, and that its query encodes each status as its rank
// in queue's one severity order, so that "max by" and sorting by status put
// the worst first, as the UI does.
func TestStatusPalette(t *testing.T) {
	ds := dashboards(t)
	// The UI's palette (its dark theme, which suits Grafana's default),
	// least to most severe.
	ui := darkPalette(t)
	want := []struct{ code, text, color string }{
		{"0", "● ok", ui["ok"]},
		{"1", "▲ warn", ui["warn"]},
		{"2", "↺ rewind", ui["rewind"]},
		{"3", "? error", ui["err"]},
		{"4", "■ stall", ui["bad"]},
		{"5", "■ stop", ui["bad"]},
	}
	for _, tt := range []struct{ file, title, metric string }{
		{"consumer-lag.json", "Group status", "queuewatch_kafka_consumergroup_status"},
		{"nats-jetstream.json", "Consumer status", "queuewatch_nats_consumer_status"},
		{"consumer-lag.json", "Outbox status", "queuewatch_outbox_status"},
	} {
		t.Run(tt.title, func(t *testing.T) {
			d := ds[dashboardDir+"/"+tt.file]
			var status *dashboard.Panel
			for _, p := range panels(d) {
				if deref(p.Title) == tt.title {
					status = &p
				}
			}
			if status == nil || status.FieldConfig == nil || len(status.FieldConfig.Defaults.Mappings) != 1 {
				t.Fatalf("%s panel with one value mapping not found", tt.title)
			}
			qs := dashboardQueries(t, tt.file, dashboard.Dashboard{Panels: []dashboard.PanelOrRowPanel{{Panel: status}}})
			if len(qs) != 1 {
				t.Fatalf("%s panel has %d queries; want 1", tt.title, len(qs))
			}
			expr := qs[0].expr
			got := status.FieldConfig.Defaults.Mappings[0].ValueMap.Options
			if len(got) != len(want) {
				t.Errorf("%d mappings; want %d", len(got), len(want))
			}
			for _, w := range want {
				r, ok := got[w.code]
				if !ok || deref(r.Text) != w.text || deref(r.Color) != w.color {
					t.Errorf("code %s: got %q %q, want %q %q", w.code, deref(r.Text), deref(r.Color), w.text, w.color)
				}
				word := strings.Fields(w.text)[1]
				if !regexp.MustCompile(`\(` + tt.metric + `\{[^}]*status="` + word + `"\} == 1\) \* ` + w.code + "\n").MatchString(expr) {
					t.Errorf("the query does not encode %s as %s:\n%s", word, w.code, expr)
				}
				if sev := queue.Status(word).Severity(); strconv.Itoa(sev) != w.code {
					t.Errorf("%s has severity %d in queue; the dashboard pins %s", word, sev, w.code)
				}
			}
		})
	}
}

// darkPalette reads the status colours of the UI's dark theme from its
// stylesheet, so that the dashboards cannot drift from the UI.
func darkPalette(t *testing.T) map[string]string {
	t.Helper()
	css, err := os.ReadFile(filepath.Join("..", "web", "static", "app.css"))
	if err != nil {
		t.Fatal(err)
	}
	_, dark, ok := strings.Cut(string(css), `:root[data-theme="dark"] {`)
	if !ok {
		t.Fatal("app.css has no dark theme block")
	}
	dark, _, _ = strings.Cut(dark, "}")
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`--(ok|warn|bad|rewind|err): (#[0-9a-f]{6})`).FindAllStringSubmatch(dark, -1) {
		out[m[1]] = m[2]
	}
	if len(out) != 5 {
		t.Fatalf("dark theme status colours %v; want ok, warn, bad, rewind and err", out)
	}
	return out
}

// TestDashboardPartsOrder: a broker's rows need a dashboard started by a
// line before theirs, and a file is started once; a table that breaks
// either is an error, not a dashboard missing its rows.
func TestDashboardPartsOrder(t *testing.T) {
	saved := dashboardParts
	t.Cleanup(func() { dashboardParts = saved })
	for name, parts := range map[string][]dashboardPart{
		"rows before start": {{file: "consumer-lag.json", rows: withOutbox}, {file: "consumer-lag.json", start: consumerLag}},
		"started twice":     {{file: "queuewatch.json", start: self}, {file: "queuewatch.json", start: self}},
	} {
		dashboardParts = parts
		if _, err := DashboardsFor(config.Default().Metrics); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
