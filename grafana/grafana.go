// Package grafana defines queuewatch's Grafana dashboards in Go with the
// Grafana Foundation SDK. The JSON under grafana/dashboards (and, for the
// topic and group metrics granularities, grafana/dashboards-topic and
// grafana/dashboards-group) is generated from them and committed, so
// Grafana's file provisioning loads it directly; a test fails when the
// committed JSON differs from what the code generates, when a query does not
// parse as PromQL, or when it selects no series queuewatch exports at its
// granularity, so a renamed metric breaks the build instead of a dashboard.
//
// Every query uses the datasource variable ${datasource}. Links from a panel
// to the queuewatch UI start with ${queuewatch_url}, a text box variable
// (default DefaultQueuewatchURL) that operators set once per dashboard or
// pass in the URL (?var-queuewatch_url=https://queuewatch.example.com).
//
// Group status is shown as a word, a shape and a colour, never colour alone,
// with the same palette as the queuewatch UI: ● ok green, ▲ warn amber,
// ↺ rewind violet, ? error grey, ■ stall and ■ stop red. Where a panel ranks
// statuses it uses queue's severity order (queue.Statuses), as the UI does.
package grafana

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// DefaultQueuewatchURL is the default of the queuewatch_url variable: the
// address `queuewatch serve` and the compose stack listen on.
const DefaultQueuewatchURL = "http://localhost:8080"

// Dashboard UIDs, stable so that links and bookmarks survive regeneration.
const (
	UIDConsumerLag = "queuewatch-consumer-lag"
	UIDDLQ         = "queuewatch-dlq"
	UIDSelf        = "queuewatch-self"
)

// Status palette, the dark-theme colours of the queuewatch UI (web/static/app.css).
const (
	colorOK     = "#3fb950"
	colorWarn   = "#d29922"
	colorBad    = "#f85149"
	colorRewind = "#a371f7"
	colorError  = "#8b949e"
)

// Variants maps each directory of committed dashboards (under grafana/) to
// the metrics settings its dashboards are built for: the consumer lag
// dashboard queries only the series a granularity exports. Provision the
// directory that matches metrics.granularity; the opt-in offset families
// add the "Consume and produce rates" panel (DashboardsFor).
var Variants = map[string]config.Metrics{
	"dashboards":       config.Default().Metrics,
	"dashboards-topic": {Granularity: config.GranularityTopic},
	"dashboards-group": {Granularity: config.GranularityGroup},
}

// Dashboards builds every dashboard for the default metrics settings, keyed
// by its file name under grafana/dashboards.
func Dashboards() (map[string]dashboard.Dashboard, error) {
	return DashboardsFor(config.Default().Metrics)
}

// DashboardsFor builds every dashboard for the metrics settings m, keyed by
// file name.
func DashboardsFor(m config.Metrics) (map[string]dashboard.Dashboard, error) {
	builders := map[string]*dashboard.DashboardBuilder{}
	for _, p := range dashboardParts {
		b, started := builders[p.file]
		switch {
		case p.start != nil && !started:
			builders[p.file] = p.start(m)
		case p.rows != nil && started:
			builders[p.file] = p.rows(b)
		default:
			return nil, fmt.Errorf("build dashboard %s: a part must start it once, before the parts that add rows", p.file)
		}
	}
	out := make(map[string]dashboard.Dashboard, len(builders))
	for file, b := range builders {
		d, err := b.Build()
		if err != nil {
			return nil, fmt.Errorf("build dashboard %s: %w", file, err)
		}
		clearPlacement(&d)
		out[file] = d
	}
	return out, nil
}

// dashboardPart is what one broker, or the broker-neutral DLQ and self
// views, adds to the dashboards: either a dashboard of its own (start) or
// rows on one that a part before it started (rows). One is set.
type dashboardPart struct {
	file  string // under grafana/dashboards
	start func(config.Metrics) *dashboard.DashboardBuilder
	rows  func(*dashboard.DashboardBuilder) *dashboard.DashboardBuilder
}

// dashboardParts registers every broker's dashboard part once, one line
// each, in the order they build: a new broker adds a line and a file, and
// DashboardsFor never names one.
var dashboardParts = []dashboardPart{
	{file: "consumer-lag.json", start: consumerLag},
	// The outbox is the producer side of lag: its row sits next to the
	// consumer lag it causes.
	{file: "consumer-lag.json", rows: withOutbox},
	// An SQS queue's consumers are readers like the groups above.
	{file: "consumer-lag.json", rows: withSQS},
	// A KCL application is a reader of a Kinesis stream.
	{file: "consumer-lag.json", rows: withKinesis},
	// A Pub/Sub subscription's subscribers are readers too.
	{file: "consumer-lag.json", rows: withPubSub},
	// A Kafka share group is a reader like a consumer group.
	{file: "consumer-lag.json", rows: withShareGroups},
	// So is a Kafka Streams application's streams group.
	{file: "consumer-lag.json", rows: withStreamsGroups},
	// A Kafka Connect connector is a reader too: a sink reads through its
	// consumer group, charted above.
	{file: "consumer-lag.json", rows: withConnectors},
	// A RabbitMQ queue's consumers are readers too.
	{file: "consumer-lag.json", rows: withRabbitMQ},
	{file: "nats-jetstream.json", start: natsJetStream},
	{file: "dead-letter-queues.json", start: deadLetterQueues},
	{file: "queuewatch.json", start: self},
}

// Marshal renders a dashboard the way it is committed: indented JSON ending
// in a newline, with "<", ">" and "&" left readable in queries. encoding/json
// sorts map keys, so the output is stable.
func Marshal(d dashboard.Dashboard) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("marshal dashboard %s: %w", deref(d.Uid), err)
	}
	return buf.Bytes(), nil
}

// clearPlacement drops the "inControlsMenu" placement the SDK gives every
// link: Grafana 12 would hide dashboard links in a menu, and on data links
// it means nothing.
func clearPlacement(d *dashboard.Dashboard) {
	for i := range d.Links {
		d.Links[i].Placement = nil
	}
	for _, p := range d.Panels {
		if p.Panel == nil || p.Panel.FieldConfig == nil {
			continue
		}
		for i := range p.Panel.FieldConfig.Defaults.Links {
			p.Panel.FieldConfig.Defaults.Links[i].Placement = nil
		}
	}
}

// newDashboard starts a dashboard with the settings all three share.
func newDashboard(uid, title, description string) *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(title).
		Uid(uid).
		Description(description).
		Tags([]string{"queuewatch"}).
		Editable().
		Refresh("30s").
		Time("now-1h", "now").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").
			Label("Data source").
			Description("Prometheus that scrapes queuewatch.").
			Type("prometheus")).
		Link(dashboard.NewDashboardLinkBuilder("queuewatch dashboards").
			Type(dashboard.DashboardLinkTypeDashboards).
			Tags([]string{"queuewatch"}).
			AsDropdown(true).
			IncludeVars(true).
			KeepTime(true)).
		Link(dashboard.NewDashboardLinkBuilder("queuewatch UI").
			Type(dashboard.DashboardLinkTypeLink).
			Url("${queuewatch_url}/").
			Icon("external link").
			TargetBlank(true))
}

// urlVariable is the text box holding the queuewatch UI address.
func urlVariable() *dashboard.TextBoxVariableBuilder {
	return dashboard.NewTextBoxVariableBuilder("queuewatch_url").
		Label("queuewatch URL").
		Description("Address of the queuewatch UI that panel links open.").
		DefaultValue(dashboard.StringOrMap{String: ptr(DefaultQueuewatchURL)})
}

// labelVariable is a multi-value variable over a label's values, All by default.
func labelVariable(name, label, query, description string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Description(description).
		Datasource(datasource()).
		Query(dashboard.StringOrMap{String: ptr(query)}).
		Definition(query).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).
		IncludeAll(true).
		AllValue(".*").
		Current(dashboard.VariableOption{
			Selected: ptr(true),
			Text:     dashboard.StringOrArrayOfString{String: ptr("All")},
			Value:    dashboard.StringOrArrayOfString{String: ptr("$__all")},
		})
}

func datasource() common.DataSourceRef {
	return common.DataSourceRef{Type: ptr("prometheus"), Uid: ptr("${datasource}")}
}

// rangeQuery is a range query for time series panels.
func rangeQuery(ref, expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		RefId(ref).
		Datasource(datasource()).
		Expr(expr).
		LegendFormat(legend).
		Range()
}

// instantQuery is an instant query for stat and bar gauge panels.
func instantQuery(ref, expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		RefId(ref).
		Datasource(datasource()).
		Expr(expr).
		LegendFormat(legend).
		Instant()
}

// tableQuery is an instant query whose labels become table columns.
func tableQuery(ref, expr string) *prometheus.DataqueryBuilder {
	return instantQuery(ref, expr, "__auto").Format(prometheus.PromQueryFormatTable)
}

// link is a data link opening the queuewatch UI in a new tab.
func link(title, path string) []cog.Builder[dashboard.DashboardLink] {
	return []cog.Builder[dashboard.DashboardLink]{
		dashboard.NewDashboardLinkBuilder(title).Url("${queuewatch_url}" + path).TargetBlank(true),
	}
}

// Data link paths of the queuewatch UI (DESIGN §2), filled from the series'
// labels (charts) or the row's label columns (tables); names are
// percent-encoded because they may contain "/" or spaces.
var (
	groupPath    = groupLink("__field.labels.")
	dlqPath      = dlqLink("__field.labels.")
	groupRowPath = groupLink("__data.fields.")
	dlqRowPath   = dlqLink("__data.fields.")
)

func groupLink(prefix string) string {
	return "/kafka/" + linkVar(prefix, "cluster") + "/groups/" + linkVar(prefix, "group")
}

// dlqLink is the DLQ page, whose id is "broker:cluster:vhost:name".
func dlqLink(prefix string) string {
	return "/dlq/" + linkVar(prefix, "broker") + ":" + linkVar(prefix, "cluster") + ":" +
		linkVar(prefix, "vhost") + ":" + linkVar(prefix, "dlq")
}

func linkVar(prefix, label string) string {
	return "${" + prefix + label + ":percentencode}"
}

// statusExpr encodes each reader's current status (its one status series,
// 1 with the status as a label, collectors.statusDesc) as its
// queue.Status.Severity, so that "max by", sorting a table by status and
// colour thresholds all rank statuses in the one order the UI uses;
// statusMappings turns the code back into a word, shape and colour. metric
// is a broker's status family, sel the dashboard's label matchers and
// identity the labels that name one reader (cluster and group for Kafka).
func statusExpr(metric, sel string, identity ...string) string {
	var b strings.Builder
	b.WriteString("max by (" + strings.Join(identity, ", ") + ") (\n")
	for i, st := range queue.Statuses {
		b.WriteString("  ")
		if i == 0 {
			b.WriteString("  ")
		} else {
			b.WriteString("or ")
		}
		fmt.Fprintf(&b, `(%s{%s, status=%q} == 1) * %d`+"\n", metric, sel, string(st), st.Severity())
	}
	b.WriteString(")")
	return b.String()
}

// statusColors is the UI's palette: ● ok green, ▲ warn amber, ↺ rewind
// violet, ? error grey, ■ stall and ■ stop red.
var statusColors = map[queue.Status]string{
	queue.StatusOK: colorOK, queue.StatusWarn: colorWarn, queue.StatusRewind: colorRewind,
	queue.StatusError: colorError, queue.StatusStall: colorBad, queue.StatusStop: colorBad,
}

// statusMappings maps statusExpr's codes to the UI's words, shapes and colours.
func statusMappings() []dashboard.ValueMapping {
	opts := map[string]dashboard.ValueMappingResult{}
	for _, st := range queue.Statuses {
		code := st.Severity()
		opts[strconv.Itoa(code)] = dashboard.ValueMappingResult{
			Text: ptr(st.Glyph() + " " + string(st)), Color: ptr(statusColors[st]), Index: ptr(int32(code)),
		}
	}
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{Type: dashboard.MappingTypeValueToText, Options: opts}}}
}

// upMappings shows collector_up as a word, shape and colour.
func upMappings() []dashboard.ValueMapping {
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{
		Type: dashboard.MappingTypeValueToText,
		Options: map[string]dashboard.ValueMappingResult{
			"0": {Text: ptr("■ down"), Color: ptr(colorBad), Index: ptr(int32(0))},
			"1": {Text: ptr("● up"), Color: ptr(colorOK), Index: ptr(int32(1))},
		},
	}}}
}

// thresholds is an absolute threshold scheme: base colour, then each step.
func thresholds(base string, steps ...dashboard.Threshold) *dashboard.ThresholdsConfigBuilder {
	return dashboard.NewThresholdsConfigBuilder().
		Mode(dashboard.ThresholdsModeAbsolute).
		Steps(append([]dashboard.Threshold{{Color: base}}, steps...))
}

func step(v float64, color string) dashboard.Threshold {
	return dashboard.Threshold{Value: ptr(v), Color: color}
}

// legend is a visible list legend under the chart.
func legend() *common.VizLegendOptionsBuilder {
	return common.NewVizLegendOptionsBuilder().
		ShowLegend(true).
		DisplayMode(common.LegendDisplayModeList).
		Placement(common.LegendPlacementBottom)
}

// tooltip shows every series at the cursor, largest first.
func tooltip() *common.VizTooltipOptionsBuilder {
	return common.NewVizTooltipOptionsBuilder().
		Mode(common.TooltipDisplayModeMulti).
		Sort(common.SortOrderDescending)
}

// lastValue reduces a series to its latest value, for stats and bar gauges.
func lastValue() *common.ReduceDataOptionsBuilder {
	return common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Values(false)
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
