package config

import (
	"testing"
	"time"
)

// TestSQS reads the SQS section of conf.good.yml and checks the defaults
// and the queue selection: the prefix, then whole-name include and
// exclude regexes.
func TestSQS(t *testing.T) {
	for _, env := range []string{"KAFKA_PROD_PASSWORD", "RABBITMQ_PASSWORD", "NATS_PASSWORD"} {
		t.Setenv(env, "x")
	}
	c, err := Load("testdata/conf.good.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.SQS) != 1 {
		t.Fatalf("sqs: %d accounts, want 1", len(c.SQS))
	}
	s := c.SQS[0]
	if s.Name != "prod-eu" || s.Region != "eu-west-1" || s.Endpoint != "" ||
		s.RoleARN != "arn:aws:iam::123456789012:role/queuewatch-readonly" || s.Queues.Prefix != "orders" ||
		s.CloudWatch.OldestAge || s.Interval() != 4*time.Minute {
		t.Errorf("sqs[0] = %+v", s)
	}

	m, err := Parse([]byte(`sqs: [{name: local, region: us-east-1, endpoint: "http://127.0.0.1:9324",
  queues: {prefix: orders, include: ['orders-.*', 'orders'], exclude: ['.*-test']}}]`), "q.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.RequireSources(); err != nil {
		t.Errorf("an SQS account alone is a source: %v", err)
	}
	q := m.SQS[0]
	if q.Interval() != DefaultSQSPollInterval || q.CloudWatch.OldestAge {
		t.Errorf("default interval %s, want %s; cloudwatch %+v, want off", q.Interval(), DefaultSQSPollInterval, q.CloudWatch)
	}
	cw, err := Parse([]byte(`sqs: [{name: prod, region: eu-west-1, cloudwatch: {oldest_age: true}}]`), "cw.yml")
	if err != nil {
		t.Fatalf("cloudwatch.oldest_age: true is refused: %v", err)
	}
	if !cw.SQS[0].CloudWatch.OldestAge {
		t.Error("cloudwatch.oldest_age: true read as false")
	}
	for name, want := range map[string]bool{
		"orders": true, "orders-eu": true, "orders-eu.fifo": true,
		"orders-test": false, "ordersx": false, "payments-orders": false, "billing": false,
	} {
		if got := q.Queues.Match(name); got != want {
			t.Errorf("Match(%q) = %v, want %v", name, got, want)
		}
	}
	// Built in code, without Validate, the patterns still apply.
	code := SQSQueues{Prefix: "a", Exclude: []string{"a-dlq"}}
	if !code.Match("a-main") || code.Match("a-dlq") || code.Match("b") {
		t.Error("SQSQueues built in code ignores its patterns")
	}
}
