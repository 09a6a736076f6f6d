package alerts

import (
	"strings"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// ruleSets lists every broker's rules once, and the broker-neutral DLQ and
// collector rules, in the order of the rule file: one line each. Adding a
// broker is a line here and a file with its rule set; Rules never names a
// broker.
var ruleSets = []func(ruleParams) []alertSpec{
	dlqSpecs,
	kafkaSpecs,
	rabbitMQSpecs,
	collectorSpecs,
	outboxSpecs,
	natsSpecs,
	sqsSpecs,
	kinesisSpecs,
	pubsubSpecs,
	shareSpecs,
	streamsSpecs,
	connectSpecs,
	headroomSpecs,
}

// ruleParams is what every rule set derives its rules from: the config and
// the durations and words that follow from it.
type ruleParams struct {
	cfg *config.Config
	// twoPolls is how long a fact must hold: seen by two polls in a row.
	twoPolls time.Duration
	// statusFor is how long a reader's status series must say a status
	// for its alert to fire: alerts.hysteresis_polls polls, as long as the
	// evaluation must judge a status before the series says it.
	statusFor time.Duration
	// window is the status window: trends and thresholds must hold that long.
	window time.Duration
	// hw is the window for people, the way the UI writes durations.
	hw string
}

func newRuleParams(cfg *config.Config) ruleParams {
	window := time.Duration(cfg.Alerts.Window) * cfg.PollInterval
	return ruleParams{
		cfg: cfg, twoPolls: 2 * cfg.PollInterval, statusFor: time.Duration(hysteresisPolls(cfg)) * cfg.PollInterval,
		window: window, hw: queue.HumanDuration(window),
	}
}

// hysteresisPolls is cfg's alerts.hysteresis_polls, its default when unset.
func hysteresisPolls(cfg *config.Config) int {
	if cfg.Alerts.HysteresisPolls <= 0 {
		return config.DefaultHysteresisPolls
	}
	return cfg.Alerts.HysteresisPolls
}

// readers is one kind of reader (a Kafka consumer group, a JetStream
// consumer, an outbox table) as the alert shapes shared by every broker
// see it. A broker describes its readers once and calls inStatus,
// backlogHigh and lagSecondsHigh with the words of each alert.
type readers struct {
	// status is the reader status family (one series per reader, its
	// status label the current status).
	status string
	// identity lists the labels that name one reader (cluster and group
	// for a consumer group).
	identity []string
	// name is the identity label that override patterns select on: group
	// for groups, consumer for JetStream consumers.
	name string
	// page is the reader's page in the UI, as an alert template.
	page string
	// backlog is each reader's backlog (messages or rows) over the readers
	// that matchers select, with the identity labels: the value of its
	// status and backlog alerts.
	backlog func(matchers string) string
	// lagSeconds is each reader's lag in seconds over the readers that
	// matchers select; nil when the broker has none.
	lagSeconds func(matchers string) string
	// backlogKind and lagSecondsKind are the thresholds, and so the
	// overrides, that backlogHigh and lagSecondsHigh compare with.
	backlogKind, lagSecondsKind thresholdKind
}

// alertText is the part of an alert its broker writes: name, severity and
// the annotations for people (<threshold> in description stands for the
// threshold of the rule's override segment).
type alertText struct {
	name, severity       string
	summary, description string
}

// inStatus is the alert on readers in status st: it fires for each reader
// whose status series has said st for alerts.hysteresis_polls polls,
// valued at its backlog. queuewatch evaluates the status window itself,
// and the series carries the shown status (hysteresis.go), which holds a
// condition as many polls as it lasted, N-1 polls late: waiting N polls,
// as the evaluation waits before showing a status, the rule fires for a
// condition that outlasted N polls, not for each one the UI showed.
// "== 1" selects the current status from the one-series shape the
// collectors export, and from a stateset alike.
func (r readers) inStatus(p ruleParams, st queue.Status, a alertText) alertSpec {
	expr := r.backlog("") + ` and on (` + strings.Join(r.identity, ", ") + `) (` +
		r.status + `{status="` + string(st) + `"} == 1)`
	return r.spec(a, p.statusFor, noThreshold, func(string, string) string { return expr })
}

// backlogHigh is the alert on readers whose backlog has been over the
// backlog threshold for the status window.
func (r readers) backlogHigh(p ruleParams, a alertText) alertSpec {
	return r.spec(a, p.window, r.backlogKind, func(m, t string) string { return r.backlog(m) + ` > ` + t })
}

// lagSecondsHigh is the alert on readers whose lag in seconds has been
// over the lag seconds threshold for the status window.
func (r readers) lagSecondsHigh(p ruleParams, a alertText) alertSpec {
	return r.spec(a, p.window, r.lagSecondsKind, func(m, t string) string { return r.lagSeconds(m) + ` > ` + t })
}

func (r readers) spec(a alertText, forDur time.Duration, kind thresholdKind, expr func(matchers, threshold string) string) alertSpec {
	return alertSpec{
		name: a.name, severity: a.severity, forDur: forDur, kind: kind, label: r.name, page: r.page,
		summary: a.summary, description: a.description, expr: expr,
	}
}
