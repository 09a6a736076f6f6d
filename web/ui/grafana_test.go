package ui

import (
	"slices"
	"testing"

	"github.com/queuewatch/queuewatch/grafana"
)

// TestGrafanaLinks: every dashboard a page links to exists with the UID
// the link names, and has every variable the link sets, in every
// granularity's dashboards — a renamed variable would select nothing.
func TestGrafanaLinks(t *testing.T) {
	boards := map[string]grafanaBoard{
		"group": grafanaGroup, "share": grafanaShare, "sqs": grafanaSQS, "kinesis": grafanaKinesis, "pubsub": grafanaPubSub, "outbox": grafanaOutbox,
		"consumer": grafanaConsumer, "dlq": grafanaDLQ, "rabbitmq queue": grafanaRabbitQueue,
	}
	for dir, m := range grafana.Variants {
		dashboards, err := grafana.DashboardsFor(m)
		if err != nil {
			t.Fatal(err)
		}
		vars := map[string][]string{}
		for _, d := range dashboards {
			if d.Uid == nil {
				continue
			}
			for _, v := range d.Templating.List {
				vars[*d.Uid] = append(vars[*d.Uid], v.Name)
			}
		}
		for name, b := range boards {
			have, ok := vars[b.uid]
			if !ok {
				t.Errorf("%s: the %s page links to dashboard %q, which %s does not have", dir, name, b.uid, dir)
				continue
			}
			for _, v := range b.vars {
				if !slices.Contains(have, v) {
					t.Errorf("%s: the %s page sets var-%s, which dashboard %q lacks (it has %q)", dir, name, v, b.uid, have)
				}
			}
		}
	}
	if got := grafanaGroup.Link("", "prod", "g"); got != "" {
		t.Errorf("a link without grafana_url: %q", got)
	}
	want := "https://g.example/grafana/d/queuewatch-consumer-lag?var-cluster=prod&var-group=a%2Fb+%26c"
	if got := grafanaGroup.Link("https://g.example/grafana/", "prod", "a/b &c"); got != want {
		t.Errorf("link %q; want %q", got, want)
	}
}
