package ui

import (
	"net/url"
	"strings"

	"github.com/queuewatch/queuewatch/queue"
)

// The dashboards a page links to when grafana_url is set, by the UID the
// grafana package gives them (stable across regeneration), and the
// variables that select one reader or DLQ on them. TestGrafanaLinks checks
// every UID and variable name against the generated dashboards, so a
// renamed variable fails a test rather than a link.
var (
	grafanaGroup       = grafanaBoard{uid: "queuewatch-consumer-lag", vars: []string{"cluster", "group"}}
	grafanaShare       = grafanaBoard{uid: "queuewatch-consumer-lag", vars: []string{"share_cluster", "share_group"}}
	grafanaStreams     = grafanaBoard{uid: "queuewatch-consumer-lag", vars: []string{"streams_cluster", "streams_group"}}
	grafanaSQS         = grafanaBoard{uid: "queuewatch-consumer-lag", vars: []string{"sqs_account", "sqs_queue"}}
	grafanaKinesis     = grafanaBoard{uid: "queuewatch-consumer-lag", vars: []string{"kinesis_account", "kinesis_application"}}
	grafanaPubSub      = grafanaBoard{uid: "queuewatch-consumer-lag", vars: []string{"pubsub_project", "pubsub_subscription"}}
	grafanaOutbox      = grafanaBoard{uid: "queuewatch-consumer-lag", vars: []string{"source"}}
	grafanaConsumer    = grafanaBoard{uid: "queuewatch-nats", vars: []string{"cluster", "stream", "consumer"}}
	grafanaRabbitQueue = grafanaBoard{uid: "queuewatch-consumer-lag", vars: []string{"rabbitmq_cluster", "rabbitmq_vhost", "rabbitmq_queue"}}
	grafanaDLQ         = grafanaBoard{uid: "queuewatch-dlq", vars: []string{"broker", "cluster", "dlq"}}
)

// grafanaBoard is a dashboard and the variables, in order, that select
// one object on it.
type grafanaBoard struct {
	uid  string
	vars []string
}

// Link is the board's address in the Grafana at base with its variables
// set to values (one per variable, in order); "" when base is not set.
func (b grafanaBoard) Link(base string, values ...string) string {
	if base == "" {
		return ""
	}
	q := url.Values{}
	for i, v := range b.vars {
		q.Set("var-"+v, values[i])
	}
	return strings.TrimRight(base, "/") + "/d/" + url.PathEscape(b.uid) + "?" + q.Encode()
}

// grafanaDLQLink is d's row of the dead-letter dashboard.
func (s *Server) grafanaDLQLink(d *queue.DLQ) string {
	return grafanaDLQ.Link(s.GrafanaURL(), string(d.Broker), d.Cluster, d.Name)
}
