package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/queuewatch/queuewatch/config"
)

// selfSel selects the collectors of the dashboard's variables.
const selfSel = `job=~"$job", broker=~"$broker", cluster=~"$cluster"`

// self is the "queuewatch" dashboard: is queuewatch itself healthy — can
// it poll every broker, how long polls take, and how Prometheus scrapes it.
func self(config.Metrics) *dashboard.DashboardBuilder {
	return newDashboard(UIDSelf, "queuewatch",
		"queuewatch's own health: collector status per broker cluster, poll durations and errors, and Prometheus's scrapes of /metrics.").
		WithVariable(urlVariable()).
		WithVariable(labelVariable("job", "Job", `label_values(queuewatch_collector_up, job)`,
			"Prometheus jobs that scrape queuewatch.")).
		WithVariable(labelVariable("broker", "Broker", `label_values(queuewatch_collector_up{job=~"$job"}, broker)`,
			"kafka or rabbitmq.")).
		WithVariable(labelVariable("cluster", "Cluster", `label_values(queuewatch_collector_up{job=~"$job", broker=~"$broker"}, cluster)`,
			"Broker clusters queuewatch polls.")).
		WithPanel(statetimeline.NewPanelBuilder().
			Title("Collector status").
			Description("Whether the last poll of each broker cluster succeeded: ● up, ■ down. While a collector is down its lag and DLQ metrics are missing and their alerts cannot fire.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_collector_up{`+selfSel+`}`, "{{broker}} {{cluster}}")).
			Mappings(upMappings()).
			ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor(colorError)).
			ShowValue(common.VisibilityModeNever).
			MergeValues(true).
			DataLinks(link("Open queuewatch overview", "/")).
			Height(6).Span(24)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Time since last successful poll").
			Description("Seconds since each broker cluster was last polled successfully. It saw-tooths up to the poll interval when healthy; over alerts.stale_after it fires QueuewatchCollectorStale.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `time() - queuewatch_collector_last_success_timestamp_seconds{`+selfSel+`}`, "{{broker}} {{cluster}}")).
			Unit("s").
			Min(0).
			DataLinks(link("Open queuewatch overview", "/")).
			Height(8).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Poll duration").
			Description("How long polls of each broker cluster take (median and 99th percentile), failed polls included. Polls near poll_timeout are about to fail.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `histogram_quantile(0.5, sum by (broker, cluster, le) (rate(queuewatch_collector_duration_seconds_bucket{`+selfSel+`}[$__rate_interval])))`, "p50 {{broker}} {{cluster}}")).
			WithTarget(rangeQuery("B", `histogram_quantile(0.99, sum by (broker, cluster, le) (rate(queuewatch_collector_duration_seconds_bucket{`+selfSel+`}[$__rate_interval])))`, "p99 {{broker}} {{cluster}}")).
			Unit("s").
			Min(0).
			Height(8).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Poll errors").
			Description("Failed polls per broker cluster in each interval. The overview page of queuewatch shows the last error.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `sum by (broker, cluster) (increase(queuewatch_collector_errors_total{`+selfSel+`}[$__rate_interval]))`, "{{broker}} {{cluster}}")).
			Unit("short").
			Min(0).
			DataLinks(link("Open queuewatch overview", "/")).
			Height(8).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Partial errors").
			Description("Parts (consumer groups, vhosts) the last successful poll could not read. The rest of the cluster's data is still exported.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `queuewatch_collector_partial_errors{`+selfSel+`}`, "{{broker}} {{cluster}}")).
			Unit("short").
			Min(0).
			Decimals(0).
			DataLinks(link("Open queuewatch overview", "/")).
			Height(8).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Scrape duration").
			Description("How long Prometheus takes to scrape queuewatch's /metrics. Scrapes serve the last poll's snapshot and never reach a broker, so this stays flat as brokers slow down; it grows with the number of series.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `scrape_duration_seconds{job=~"$job"}`, "{{instance}}")).
			Unit("s").
			Min(0).
			Height(8).Span(12)).
		WithPanel(timeseries.NewPanelBuilder().
			Title("Series scraped").
			Description("Samples each scrape of queuewatch returns: grows with partitions, groups and queues watched.").
			Datasource(datasource()).
			Legend(legend()).
			Tooltip(tooltip()).
			WithTarget(rangeQuery("A", `scrape_samples_scraped{job=~"$job"}`, "{{instance}}")).
			Unit("short").
			Min(0).
			Height(8).Span(12))
}
