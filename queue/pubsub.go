package queue

import (
	"net/url"
	"strings"
	"time"
)

// PubSub is Google Cloud Pub/Sub (or its emulator): a cluster is one
// project.
const PubSub Broker = "pubsub"

// PubSubSubscription is one Pub/Sub subscription as of a read of its
// project: its configuration from the admin API, the traps found in it,
// and, when the project reads Cloud Monitoring, its backlog and oldest
// age (which trail the present by minutes).
type PubSubSubscription struct {
	Cluster string
	Name    string
	Topic   string
	// Delivery is pull, push, bigquery, cloudstorage or bigtable.
	Delivery string
	// DeadLetterTopic is where messages go after MaxDeliveryAttempts;
	// empty without a dead-letter policy. DeadLetterQueues are the
	// subscriptions of that topic, the subscription's DLQs.
	DeadLetterTopic     string
	MaxDeliveryAttempts int
	DeadLetterQueues    []string
	// RetryMin and RetryMax are the retry policy's backoff; zero without
	// one (immediate redelivery).
	RetryMin, RetryMax time.Duration
	AckDeadline        time.Duration
	Retention          time.Duration
	RetainAcked        bool
	Filter             string
	ExactlyOnce        bool
	Ordering           bool
	// State is ACTIVE or RESOURCE_ERROR; empty when the server does not
	// report it (the emulator).
	State    string
	Detached bool
	// DLQ is set when the subscription is attached to a dead-letter topic:
	// it is a DLQ and not judged as a reader.
	DLQ bool
	// Lints are the configuration traps found (brokers/pubsub.Lints).
	Lints []PubSubLint

	// Monitoring is Cloud Monitoring's figures, nil when the project does
	// not read it or it had none for the subscription.
	Monitoring *PubSubMetrics

	// Status and StatusReason are alerts' judgement; StatusSince is when
	// the current non-ok condition began.
	Status       Status
	StatusReason string
	StatusSince  time.Time
}

// PubSubLint is one configuration trap of a subscription: its kind (the
// lint label of queuewatch_pubsub_subscription_lint) and the sentence
// that explains it.
type PubSubLint struct {
	Kind     string
	Sentence string
}

// PubSubLintResourceError is the lint of a subscription in
// RESOURCE_ERROR, which delivers nothing: it judges the subscription
// stop; every other lint judges it warn.
const PubSubLintResourceError = "resource_error"

// PubSubMetrics are Cloud Monitoring's newest figures of a subscription.
type PubSubMetrics struct {
	// At is the end of the newest point read.
	At time.Time
	// Undelivered is num_undelivered_messages, the backlog.
	Undelivered    int64
	HasUndelivered bool
	// OldestAge is oldest_unacked_message_age.
	OldestAge    time.Duration
	HasOldestAge bool
	// DeadLettered and ExpiredAcks are the messages dead-lettered and the
	// ack deadlines expired in the newest sample period (about a minute).
	DeadLettered int64
	ExpiredAcks  int64
	BacklogBytes int64
}

// PubSubMonitoringNote says how old Cloud Monitoring's figures are.
const PubSubMonitoringNote = "Cloud Monitoring, minutes behind"

// EffectiveStatus is the status s shows everywhere.
func (s *PubSubSubscription) EffectiveStatus() Status { return EffectiveStatus("", s.Status) }

// Reader is the subscribers of s in the shape every reader shares: the
// backlog and oldest age are Cloud Monitoring's, unknown without it.
// Pub/Sub does not tell how many subscribers there are.
func (s *PubSubSubscription) Reader() Reader {
	r := Reader{
		Broker: PubSub, Cluster: s.Cluster, Name: s.Name, Title: s.Name,
		Status: s.EffectiveStatus(), Reason: s.StatusReason, StatusSince: s.StatusSince,
		BacklogUnit: UnitMessages, LagBasis: LagUnknown, Members: -1,
		Page: PubSubSubscriptionPage(s.Cluster, s.Name),
	}
	if m := s.Monitoring; m != nil {
		r.Backlog, r.BacklogKnown = m.Undelivered, m.HasUndelivered
		if m.HasOldestAge {
			r.LagSeconds, r.LagBasis = m.OldestAge.Seconds(), LagExact
		}
		if s.Retention > 0 && m.HasOldestAge && m.Undelivered > 0 {
			r.Headroom = AgeHeadroom(s.Retention, m.OldestAge, "messageRetentionDuration")
		}
	}
	return r.known()
}

// LintText is every lint's sentence, joined for one line.
func (s *PubSubSubscription) LintText() string {
	out := make([]string, len(s.Lints))
	for i, l := range s.Lints {
		out[i] = l.Sentence
	}
	return strings.Join(out, "; ")
}

// PubSubSubscriptionPage is the path of a subscription's page:
// /pubsub/{project}/subscriptions/{subscription}, every segment escaped.
func PubSubSubscriptionPage(cluster, name string) string {
	return "/pubsub/" + url.PathEscape(cluster) + "/subscriptions/" + url.PathEscape(name)
}

// PubSubProject is what a read of a Pub/Sub project learned besides its
// subscriptions.
type PubSubProject struct {
	// Project is the Google Cloud project id.
	Project string
	// ReadAt is when the project was last read; ReadEvery how often it
	// is (pubsub[].poll_interval, at least the top-level poll_interval).
	ReadAt    time.Time
	ReadEvery time.Duration
	// Topics and Subscriptions are how many the project has, before
	// include and exclude.
	Topics, Subscriptions int
	// Monitoring is set when the project reads Cloud Monitoring;
	// MonitoringCalls counts its timeSeries.list calls so far.
	Monitoring      bool
	MonitoringCalls int64
}

// PubSubMonitoringPricePerThousandCalls is what Google bills for a
// thousand Cloud Monitoring read calls (projects.timeSeries.list) beyond
// the free million a month, in US dollars, as its pricing page said when
// this was written; the free allowance is not subtracted here.
const PubSubMonitoringPricePerThousandCalls = 0.01

// PubSubMonitoringMonthlyCost is what reading callsPerRead Cloud
// Monitoring calls every interval costs in a 30-day month: 5 metrics every
// minute are 5 × 43,200 = 216,000 calls, $2.16.
func PubSubMonitoringMonthlyCost(callsPerRead int, interval time.Duration) (calls int64, usd float64) {
	if interval <= 0 {
		return 0, 0
	}
	calls = int64(callsPerRead) * int64(30*24*time.Hour/interval)
	return calls, float64(calls) * PubSubMonitoringPricePerThousandCalls / 1000
}

// PubSubSubscription returns the subscription with the given name, if the
// snapshot has it.
func (s *Snapshot) PubSubSubscription(name string) (*PubSubSubscription, bool) {
	for i := range s.PubSubSubscriptions {
		if s.PubSubSubscriptions[i].Name == name {
			return &s.PubSubSubscriptions[i], true
		}
	}
	return nil, false
}
