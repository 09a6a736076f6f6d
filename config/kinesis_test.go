package config

import (
	"testing"
	"time"
)

// TestKinesis reads the Kinesis section of conf.good.yml and checks the
// defaults of an account and an application set down to names.
func TestKinesis(t *testing.T) {
	for _, env := range []string{"KAFKA_PROD_PASSWORD", "RABBITMQ_PASSWORD", "NATS_PASSWORD"} {
		t.Setenv(env, "x")
	}
	c, err := Load("testdata/conf.good.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Kinesis) != 1 || len(c.Kinesis[0].Applications) != 1 {
		t.Fatalf("kinesis: %+v, want one account with one application", c.Kinesis)
	}
	k := c.Kinesis[0]
	a := k.Applications[0]
	if k.Name != "prod-eu" || k.Region != "eu-west-1" || k.Interval() != time.Minute ||
		!k.Streams.Match("orders-eu") || k.Streams.Match("payments") ||
		a.Name != "billing" || a.LeaseTable != "billing" || a.Stream != "orders" || a.Failover() != 10*time.Second {
		t.Errorf("kinesis[0] = %+v", k)
	}

	m, err := Parse([]byte(`kinesis: [{name: local, region: us-east-1, endpoint: "http://127.0.0.1:4568",
  dynamodb_endpoint: "http://127.0.0.1:5000", applications: [{name: app, lease_table: app, stream: s}]}]`), "k.yml")
	if err != nil {
		t.Fatalf("a Kinesis account alone is a source: %v", err)
	}
	if got := m.Kinesis[0]; got.Interval() != DefaultKinesisPollInterval || got.Applications[0].Failover() != DefaultKinesisFailoverTime ||
		!got.Streams.Match("anything") {
		t.Errorf("defaults: interval %s, failover %s", got.Interval(), got.Applications[0].Failover())
	}
}
