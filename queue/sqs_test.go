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
