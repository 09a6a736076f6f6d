package queue

import (
	"errors"
	"testing"
	"time"
)

func TestSQSCost(t *testing.T) {
	tests := []struct {
		listed, watched int
		interval        time.Duration
		perPoll         int
		month           int64
		usd             float64
	}{
		{0, 0, 5 * time.Minute, 1, 8640, 0.003456},
		{10, 10, 5 * time.Minute, 11, 95040, 0.038016},
		{1000, 1000, 5 * time.Minute, 1001, 8648640, 3.459456},
		{2500, 1000, 5 * time.Minute, 1003, 8665920, 3.466368},
		{1000, 1000, 15 * time.Second, 1001, 172972800, 69.18912},
		{10, 10, 0, 11, 0, 0},
	}
	for _, tt := range tests {
		perPoll := SQSRequestsPerPoll(tt.listed, tt.watched)
		month, usd := SQSMonthlyCost(perPoll, tt.interval)
		if perPoll != tt.perPoll || month != tt.month || usd < tt.usd-1e-9 || usd > tt.usd+1e-9 {
			t.Errorf("%d listed, %d watched every %s: %d per poll, %d a month, $%f; want %d, %d, $%f",
				tt.listed, tt.watched, tt.interval, perPoll, month, usd, tt.perPoll, tt.month, tt.usd)
		}
	}
}

// TestSQSDLQID: an SQS DLQ's ID has no vhost, like Kafka's and NATS's.
func TestSQSDLQID(t *testing.T) {
	d := DLQ{Broker: SQS, Cluster: "prod-eu", Name: "orders-dlq.fifo"}
	if got, want := d.ID(), "sqs:prod-eu::orders-dlq.fifo"; got != want {
		t.Errorf("ID = %q, want %q", got, want)
	}
	r, err := ParseDLQID(d.ID())
	if err != nil || r != (DLQRef{Broker: SQS, Cluster: "prod-eu", Name: "orders-dlq.fifo"}) {
		t.Errorf("ParseDLQID(%q) = %+v, %v", d.ID(), r, err)
	}
	if _, err := ParseDLQID("sqs:prod-eu:vh:q"); !errors.Is(err, ErrBadDLQID) {
		t.Errorf("an SQS ID with a vhost: %v, want ErrBadDLQID", err)
	}
}

func TestSQSQueueReader(t *testing.T) {
	q := SQSQueue{
		Cluster: "prod", Name: "orders", ARN: "arn:aws:sqs:eu-west-1:1:orders", Visible: 7, InFlight: 2,
		Status: StatusStop, StatusReason: "no consumer", Err: "redrive policy: no deadLetterTargetArn",
	}
	r := q.Reader()
	if r.Broker != SQS || r.Cluster != "prod" || r.Name != "orders" || r.Status != StatusStop || r.Reason != "no consumer" ||
		r.Backlog != 7 || !r.BacklogKnown || r.Members != -1 || r.LagBasis != LagUnknown || r.Err != "" {
		t.Errorf("Reader of a read queue with a bad policy = %+v", r)
	}
	unread := SQSQueue{Cluster: "prod", Name: "locked", Err: "get queue attributes locked: AccessDenied", Status: StatusOK}
	if r := unread.Reader(); r.Status != StatusError || r.Reason != unread.Err || r.BacklogKnown {
		t.Errorf("Reader of an unread queue = %+v, want error with an unknown backlog", r)
	}
}

// TestSQSQueuePage: a queue's reader links its page, every segment
// escaped, so "needs attention" and the worst-lag card can open it.
func TestSQSQueuePage(t *testing.T) {
	q := SQSQueue{Cluster: "prod/eu", Name: "orders dlq.fifo"}
	if got, want := q.Reader().Page, "/sqs/prod%2Feu/queues/orders%20dlq.fifo"; got != want {
		t.Errorf("Page = %q, want %q", got, want)
	}
}

// TestSQSReaderLagAge: an SQS queue's oldest age is its reader's lag age:
// exact from CloudWatch, an estimate with its note from a browse, unknown
// otherwise and for a queue that could not be read.
func TestSQSReaderLagAge(t *testing.T) {
	tests := []struct {
		name      string
		q         SQSQueue
		wantBasis LagBasis
		wantSec   float64
		wantNote  string
	}{
		{"unknown", SQSQueue{ARN: "a", Visible: 3}, LagUnknown, 0, ""},
		{"browse", SQSQueue{ARN: "a", Visible: 3, OldestAge: 3 * time.Hour, OldestAgeBasis: SQSAgeBrowse}, LagEstimate, 10800, SQSSeenWhileBrowsing},
		{"cloudwatch", SQSQueue{ARN: "a", Visible: 3, OldestAge: 90 * time.Second, OldestAgeBasis: SQSAgeCloudWatch}, LagExact, 90, ""},
		{"unread", SQSQueue{Err: "denied", OldestAge: time.Hour, OldestAgeBasis: SQSAgeBrowse}, LagUnknown, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.q.Reader()
			if r.LagBasis != tt.wantBasis || r.LagSeconds != tt.wantSec || r.LagNote != tt.wantNote {
				t.Errorf("reader lag %v s, basis %q, note %q; want %v s, %q, %q", r.LagSeconds, r.LagBasis, r.LagNote, tt.wantSec, tt.wantBasis, tt.wantNote)
			}
		})
	}
}

// TestCloudWatchCost: GetMetricData is billed per metric asked for, one
// per queue a read.
func TestCloudWatchCost(t *testing.T) {
	for _, tt := range []struct {
		queues   int
		interval time.Duration
		metrics  int64
		usd      float64
	}{
		{10, 4 * time.Minute, 108000, 1.08},
		{100, 4 * time.Minute, 1080000, 10.80},
		{1000, 4 * time.Minute, 10800000, 108},
		{10, 0, 0, 0},
	} {
		metrics, usd := CloudWatchMonthlyCost(tt.queues, tt.interval)
		if metrics != tt.metrics || usd < tt.usd-1e-9 || usd > tt.usd+1e-9 {
			t.Errorf("%d queues every %s: %d metrics, $%f; want %d, $%f", tt.queues, tt.interval, metrics, usd, tt.metrics, tt.usd)
		}
	}
}

func TestDepthReadSentence(t *testing.T) {
	now := time.Date(2026, 5, 4, 5, 15, 15, 0, time.UTC)
	tests := []struct {
		name string
		r    DepthRead
		want string
	}{
		{"read at every poll", DepthRead{}, ""},
		{"the account's read", DepthRead{At: now.Add(-192 * time.Second), Every: 4 * time.Minute}, "depth read 3m 12s ago (account read every 4m)"},
		{
			"re-read after a job",
			DepthRead{At: time.Date(2026, 5, 4, 5, 12, 3, 0, time.UTC), Every: 4 * time.Minute, AfterJob: "job-1"},
			"depth re-read after job job-1 at 05:12:03 UTC, 3m 12s ago (account read every 4m)",
		},
		{
			"a local time shown in UTC",
			DepthRead{At: time.Date(2026, 5, 4, 7, 15, 0, 0, time.FixedZone("CEST", 2*3600)), AfterJob: "job-2"},
			"depth re-read after job job-2 at 05:15:00 UTC, 15s ago",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Sentence(now); got != tt.want {
				t.Errorf("Sentence = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestJudgedAsReader: a queue its snapshot lists as a DLQ is not judged by
// its consumers, on SQS (no vhost) and RabbitMQ (per vhost) alike.
func TestJudgedAsReader(t *testing.T) {
	snap := &Snapshot{Broker: RabbitMQ, DLQs: []DLQ{{Broker: RabbitMQ, VHost: "/", Name: "orders.dlq"}}}
	if snap.JudgedAsReader("/", "orders.dlq") {
		t.Error("orders.dlq in / is judged as a reader; it is a DLQ")
	}
	if !snap.JudgedAsReader("/", "orders") || !snap.JudgedAsReader("other", "orders.dlq") {
		t.Error("a queue that is no DLQ (of its vhost) is not judged as a reader")
	}
	dlq := &Queue{VHost: "/", Name: "orders.dlq", Ready: 5}
	if dlq.NoConsumers(snap.JudgedAsReader(dlq.VHost, dlq.Name)) {
		t.Error("a DLQ with ready messages and no consumer counts as without consumers")
	}
	if q := (&Queue{VHost: "/", Name: "orders", Ready: 5}); !q.NoConsumers(snap.JudgedAsReader(q.VHost, q.Name)) {
		t.Error("a queue with ready messages and no consumer does not count as without consumers")
	}
}

func TestSQSRetentionHeadroom(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		name string
		q    SQSQueue
		want string
	}{
		{
			"browsed",
			SQSQueue{Retention: 4 * day, Visible: 3, OldestAge: 3*day + 20*time.Hour, OldestAgeBasis: SQSAgeBrowse},
			"oldest pending message (seen while browsing) is deleted in 4h (MessageRetentionPeriod 4d)",
		},
		{
			"cloudwatch",
			SQSQueue{Retention: time.Hour, Visible: 3, OldestAge: 50 * time.Minute, OldestAgeBasis: SQSAgeCloudWatch},
			"oldest pending message is deleted in 10m (MessageRetentionPeriod 1h)",
		},
		{
			"standard DLQ browsed",
			SQSQueue{Retention: time.Hour, Visible: 3, DLQ: true, OldestAge: 50 * time.Minute, OldestAgeBasis: SQSAgeBrowse},
			"oldest pending message (seen while browsing) is deleted in 10m (MessageRetentionPeriod 1h, from the original enqueue)",
		},
		{
			"standard DLQ cloudwatch",
			SQSQueue{Retention: time.Hour, Visible: 3, DLQ: true, OldestAge: 50 * time.Minute, OldestAgeBasis: SQSAgeCloudWatch},
			"oldest pending message is deleted in 10m (MessageRetentionPeriod 1h, or less: SQS counts a dead letter's retention from its original enqueue, CloudWatch's age from the move)",
		},
		{
			"FIFO DLQ",
			SQSQueue{Retention: time.Hour, Visible: 3, DLQ: true, FIFO: true, OldestAge: 50 * time.Minute, OldestAgeBasis: SQSAgeCloudWatch},
			"oldest pending message is deleted in 10m (MessageRetentionPeriod 1h)",
		},
		{"retention not reported", SQSQueue{Visible: 3, OldestAge: time.Hour, OldestAgeBasis: SQSAgeBrowse}, ""},
		{"age unknown", SQSQueue{Retention: time.Hour, Visible: 3}, ""},
		{"empty", SQSQueue{Retention: time.Hour, OldestAge: time.Hour, OldestAgeBasis: SQSAgeBrowse}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.q.RetentionHeadroom().Sentence("message"); got != tc.want {
				t.Errorf("%q\nwant %q", got, tc.want)
			}
		})
	}
}
