package queue

import (
	"net/url"
	"time"
)

// SQS is Amazon SQS (or an SQS-compatible server): a cluster is one
// account and region.
const SQS Broker = "sqs"

// SQSQueue is one SQS queue as of a poll. SQS's counts are approximate
// (eventually consistent for about a minute on AWS; exact on ElasticMQ).
type SQSQueue struct {
	Cluster string
	Name    string
	URL     string
	ARN     string
	FIFO    bool
	// Visible is ApproximateNumberOfMessages: available to receive.
	Visible int64
	// InFlight is ApproximateNumberOfMessagesNotVisible: received by a
	// consumer, neither deleted nor back yet.
	InFlight int64
	// Delayed is ApproximateNumberOfMessagesDelayed: sent with a delay not
	// yet over.
	Delayed           int64
	VisibilityTimeout time.Duration
	// Retention is MessageRetentionPeriod; 0 when the server does not
	// report it (ElasticMQ).
	Retention time.Duration
	// DeadLetterQueue names the queue the RedrivePolicy sends messages to
	// after MaxReceiveCount receives; empty without a policy.
	DeadLetterQueue string
	MaxReceiveCount int
	// DLQ is set when the queue is a DLQ: its snapshot lists it among its
	// DLQs (the redrive target of a queue, at this read or an earlier one).
	// A DLQ is not judged as a reader (see Snapshot.JudgedAsReader).
	DLQ bool
	// Err is why the queue could not be fully read: its counts are zero
	// and meaningless when ARN is empty too (the attributes were not read),
	// else only its redrive policy is unknown.
	Err string

	// OldestAge is the age of the queue's oldest message as of the read,
	// found as OldestAgeBasis says; it means nothing when the basis is
	// SQSAgeUnknown.
	OldestAge      time.Duration
	OldestAgeBasis SQSAgeBasis

	// Status and StatusReason are alerts.SQSStatus over the account's previous
	// read and this one, filled by alerts evaluation (which judges a
	// re-read after a job from the status the queue had).
	Status       Status
	StatusReason string
	// StatusSince is when the current non-ok condition began (see Onset),
	// as far as the reads show; zero when ok.
	StatusSince time.Time

	// Read says when the counts were read: at the account's last read, or
	// by a re-read after a job.
	Read DepthRead
}

// SQSAgeBasis says where an SQS queue's oldest age comes from: SQS's
// own API does not tell it.
type SQSAgeBasis string

// Where an SQS queue's oldest age comes from.
const (
	SQSAgeUnknown SQSAgeBasis = ""
	// SQSAgeBrowse is the oldest SentTimestamp a browse (or a job) of the
	// queue received since the queue was last seen empty or a job last
	// deleted from it: an estimate, and a lower bound while the browse did
	// not reach the oldest message.
	SQSAgeBrowse SQSAgeBasis = "browse"
	// SQSAgeCloudWatch is CloudWatch's ApproximateAgeOfOldestMessage.
	SQSAgeCloudWatch SQSAgeBasis = "cloudwatch"
)

// SQSSeenWhileBrowsing is how the UI qualifies an age of basis
// SQSAgeBrowse.
const SQSSeenWhileBrowsing = "seen while browsing"

// Messages is every message the queue holds: visible, in flight and
// delayed.
func (q *SQSQueue) Messages() int64 { return q.Visible + q.InFlight + q.Delayed }

// SQSInFlightLimit is how many messages an SQS queue can have in flight
// (received, not yet deleted): beyond it ReceiveMessage fails with
// OverLimit. AWS applies 120,000 to standard queues and, since 2024, to
// FIFO queues too.
const SQSInFlightLimit = 120000

// EffectiveStatus is the status q shows everywhere (see EffectiveStatus).
// A queue whose attributes were read keeps its status when only its
// redrive policy is unknown.
func (q *SQSQueue) EffectiveStatus() Status { return EffectiveStatus(q.readErr(), q.Status) }

// EffectiveReason is the sentence that goes with q's EffectiveStatus.
func (q *SQSQueue) EffectiveReason() string { return EffectiveReason(q.readErr(), q.StatusReason) }

// readErr is Err when the queue's attributes could not be read at all.
func (q *SQSQueue) readErr() string {
	if q.ARN != "" {
		return ""
	}
	return q.Err
}

// Reader is the consumers of q in the shape every reader shares: their
// backlog is q's visible messages (in-flight ones are already received)
// and their lag age the oldest message's age where known: exact from
// CloudWatch, an estimate (a lower bound, kept across polls) when a
// browse saw it. SQS does not tell how many consumers there are.
func (q *SQSQueue) Reader() Reader {
	r := Reader{
		Broker: SQS, Cluster: q.Cluster, Name: q.Name, Title: q.Name,
		Status: q.EffectiveStatus(), Reason: q.EffectiveReason(), StatusSince: q.StatusSince,
		Backlog: q.Visible, BacklogUnit: UnitMessages, BacklogKnown: true,
		LagBasis: LagUnknown, Members: -1, Err: q.readErr(),
		Headroom: q.RetentionHeadroom(),
		Page:     SQSQueuePage(q.Cluster, q.Name),
	}
	switch q.OldestAgeBasis {
	case SQSAgeCloudWatch:
		r.LagSeconds, r.LagBasis = q.OldestAge.Seconds(), LagExact
	case SQSAgeBrowse:
		r.LagSeconds, r.LagBasis, r.LagNote = q.OldestAge.Seconds(), LagEstimate, SQSSeenWhileBrowsing
	}
	return r.known()
}

// RetentionHeadroom is how long, as of the read, until SQS deletes q's
// oldest message: MessageRetentionPeriod less its age. It is unknown when
// q is empty, its retention is not reported (ElasticMQ) or its oldest age
// is not known (neither CloudWatch nor a browse told it).
//
// A standard queue's dead letters keep their original enqueue time, and
// SQS deletes them by it: a browse reads that time (SentTimestamp), so
// its age is the right clock; CloudWatch's age of a DLQ runs from when
// the message was moved, so the headroom it gives is at most that. A FIFO
// queue's dead letters start a new clock when moved.
//
// Worked example: retention 4d, oldest message seen while browsing 3d 20h
// old: 4h.
func (q *SQSQueue) RetentionHeadroom() Headroom {
	if q.Retention <= 0 || q.Messages() == 0 || q.OldestAgeBasis == SQSAgeUnknown {
		return Headroom{}
	}
	h := AgeHeadroom(q.Retention, q.OldestAge, "MessageRetentionPeriod")
	standardDLQ := q.DLQ && !q.FIFO
	switch {
	case standardDLQ && q.OldestAgeBasis == SQSAgeCloudWatch:
		h.Limit += ", or less: SQS counts a dead letter's retention from its original enqueue, CloudWatch's age from the move"
	case standardDLQ:
		h.Limit += ", from the original enqueue"
	}
	if q.OldestAgeBasis == SQSAgeBrowse {
		h.Where = SQSSeenWhileBrowsing
	}
	return h
}

// SQSQueuePage is the path of an SQS queue's page, shaped like a Kafka
// group's: /sqs/{account}/queues/{queue}, every segment escaped.
func SQSQueuePage(cluster, name string) string {
	return "/sqs/" + url.PathEscape(cluster) + "/queues/" + url.PathEscape(name)
}

// SQSAccount is what a poll of an SQS account learned besides its queues:
// what it costs to read.
type SQSAccount struct {
	// ReadAt is when the account was last read (listed and every watched
	// queue's attributes read); a re-read after a job does not move it.
	ReadAt time.Time
	// ReadEvery is how often the account is read (config
	// sqs[].poll_interval, at least the top-level poll_interval); polls in
	// between serve the last read.
	ReadEvery time.Duration
	// Listed is how many queue names ListQueues returned under the
	// prefix, before include and exclude.
	Listed int
	// OldestAgeMetrics is how many CloudWatch metrics a read asks for
	// (one ApproximateAgeOfOldestMessage per queue read) when the account
	// reads CloudWatch; 0 when it does not.
	OldestAgeMetrics int
	// Requests are the requests sent to the account since queuewatch
	// started, per action, sorted by action.
	Requests []SQSRequests
}

// SQSRequestsPerPoll is how many requests one read of an account makes:
// one ListQueues per 1,000 names listed (at least one), and one
// GetQueueAttributes per watched queue. For 2,500 names listed of which
// 1,000 are watched: 3 + 1,000 = 1,003.
func SQSRequestsPerPoll(listed, watched int) int {
	return max(1, (listed+999)/1000) + watched
}

// SQSPricePerMillion is what AWS bills for a million standard SQS
// requests, in US dollars (first 1 million a month free, not counted here).
const SQSPricePerMillion = 0.40

// SQSMonthlyCost is what reading an account every interval costs in a
// 30-day month, in US dollars, at SQSPricePerMillion: requests per read ×
// reads a month. 1,001 requests every 5 minutes: 1,001 × 8,640 =
// 8,648,640 requests, $3.46.
func SQSMonthlyCost(requestsPerPoll int, interval time.Duration) (requests int64, usd float64) {
	if interval <= 0 {
		return 0, 0
	}
	polls := int64(30 * 24 * time.Hour / interval)
	requests = int64(requestsPerPoll) * polls
	return requests, float64(requests) * SQSPricePerMillion / 1e6
}

// CloudWatchPricePerThousandMetrics is what AWS bills GetMetricData for
// a thousand metrics asked for, in US dollars; the calls themselves are
// not billed, and no free tier applies to it.
const CloudWatchPricePerThousandMetrics = 0.01

// CloudWatchMonthlyCost is what asking for metricsPerPoll CloudWatch
// metrics every interval costs in a 30-day month, in US dollars: 100
// queues every 4 minutes are 100 × 10,800 = 1,080,000 metrics, $10.80.
func CloudWatchMonthlyCost(metricsPerPoll int, interval time.Duration) (metrics int64, usd float64) {
	if interval <= 0 {
		return 0, 0
	}
	metrics = int64(metricsPerPoll) * int64(30*24*time.Hour/interval)
	return metrics, float64(metrics) * CloudWatchPricePerThousandMetrics / 1000
}

// SQSRequests is how many requests of one action queuewatch sent to an
// SQS account since it started: AWS bills each.
type SQSRequests struct {
	Action string
	Count  int64
}

// SQSQueue returns the SQS queue with the given name, if the snapshot has
// it.
func (s *Snapshot) SQSQueue(name string) (*SQSQueue, bool) {
	for i := range s.SQSQueues {
		if s.SQSQueues[i].Name == name {
			return &s.SQSQueues[i], true
		}
	}
	return nil, false
}
