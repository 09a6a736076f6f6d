package queue

import (
	"testing"
	"time"
)

func TestHeadroom(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    Headroom
		want string
		secs float64
	}{
		{"age", AgeHeadroom(time.Hour, 40*time.Minute, "retention.ms"), "oldest pending record is deleted in 20m (retention.ms 1h)", 1200},
		{"overdue", AgeHeadroom(time.Hour, 2*time.Hour, "retention.ms"), "oldest pending record is due for deletion now (retention.ms 1h)", 0},
		{"infinite", AgeHeadroom(-1, time.Hour, "retention.ms"), "", 0},
		{"projected", ProjectedHeadroom(6000, 5-3, "retention.bytes 1 GiB"), "oldest pending record is deleted in 50m at this rate (retention.bytes 1 GiB)", 3000},
		{"not closing", ProjectedHeadroom(6000, 3-5, "retention.bytes 1 GiB"), "", 0},
		{"where", Headroom{Seconds: 11520, Known: true, Where: "orders/3"}, "oldest pending record (orders/3) is deleted in 3h 12m", 11520},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.h.Sentence("record"); got != tc.want {
				t.Errorf("sentence %q, want %q", got, tc.want)
			}
			if tc.h.Seconds != tc.secs {
				t.Errorf("seconds %v, want %v", tc.h.Seconds, tc.secs)
			}
		})
	}
}

func TestHeadroomSooner(t *testing.T) {
	age := AgeHeadroom(time.Hour, 10*time.Minute, "retention.ms")
	proj := ProjectedHeadroom(100, 1, "retention.bytes")
	if got := age.Sooner(proj); got != proj {
		t.Errorf("sooner of 50m and 100s is %+v", got)
	}
	if got := proj.Sooner(Headroom{}); got != proj {
		t.Errorf("an unknown headroom won: %+v", got)
	}
	if got := (Headroom{}).Sooner(age); got != age {
		t.Errorf("a known headroom lost to an unknown one: %+v", got)
	}
	if !proj.Below(time.Hour) || age.Below(10*time.Minute) || (Headroom{}).Below(time.Hour) {
		t.Error("Below")
	}
}

// TestHeadroomAtRisk: an age limit is at risk once the oldest pending
// message is past half of it; a reader a second behind on max_age 1h is
// not (it is always under an hour from the limit and loses nothing); a
// projection is, as its gap is closing.
func TestHeadroomAtRisk(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    Headroom
		want bool
	}{
		{"a second behind on max_age 1h", AgeHeadroom(time.Hour, time.Second, "max_age"), false},
		{"40m behind on retention.ms 1h", AgeHeadroom(time.Hour, 40*time.Minute, "retention.ms"), true},
		{"half way", AgeHeadroom(time.Hour, 30*time.Minute, "retention.ms"), true},
		{"projected", ProjectedHeadroom(6000, 2, "retention.bytes"), true},
		{"unknown", Headroom{}, false},
	} {
		if got := tc.h.AtRisk(); got != tc.want {
			t.Errorf("%s: AtRisk = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestDLQHeadroom: a DLQ's headroom is its own queue's, found in its
// poll by vhost and name; a DLQ that is no queue there has none.
func TestDLQHeadroom(t *testing.T) {
	rabbit := &Snapshot{Broker: RabbitMQ, Queues: []Queue{
		{VHost: "/", Name: "orders.dlq", Ready: 5, MessageTTL: 24 * time.Hour, HeadMessageAge: 23 * time.Hour, HasHeadAge: true},
		{VHost: "other", Name: "orders.dlq", Ready: 5},
		{VHost: "/", Name: "retry.dlq", Ready: 5, MessageTTL: time.Minute, HeadMessageAge: time.Second, HasHeadAge: true, HasDeadLetter: true},
	}}
	sqs := &Snapshot{Broker: SQS, SQSQueues: []SQSQueue{
		{Name: "orders-dlq", DLQ: true, Visible: 7, Retention: 4 * time.Hour, OldestAge: 200 * time.Minute, OldestAgeBasis: SQSAgeBrowse},
	}}
	for _, tc := range []struct {
		name string
		snap *Snapshot
		d    DLQ
		want string
	}{
		{"rabbitmq ttl", rabbit, DLQ{VHost: "/", Name: "orders.dlq"}, "oldest pending dead letter is deleted in 1h (message TTL 1d, or later: the age is from the publish, RabbitMQ's TTL from the dead-lettering)"},
		{"rabbitmq other vhost", rabbit, DLQ{VHost: "other", Name: "orders.dlq"}, ""},
		{"rabbitmq dead-letters on", rabbit, DLQ{VHost: "/", Name: "retry.dlq"}, ""},
		{"sqs", sqs, DLQ{Name: "orders-dlq"}, "oldest pending dead letter (seen while browsing) is deleted in 40m (MessageRetentionPeriod 4h, from the original enqueue)"},
		{"kafka", &Snapshot{Broker: Kafka}, DLQ{Name: "orders.DLT"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.snap.DLQHeadroom(&tc.d).Sentence("dead letter"); got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}
