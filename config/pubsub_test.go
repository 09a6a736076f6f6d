package config

import (
	"testing"
	"time"
)

// TestPubSub reads the pubsub section of conf.good.yml and checks the
// defaults and the subscription filter.
func TestPubSub(t *testing.T) {
	for _, env := range []string{"KAFKA_PROD_PASSWORD", "RABBITMQ_PASSWORD", "NATS_PASSWORD"} {
		t.Setenv(env, "x")
	}
	c, err := Load("testdata/conf.good.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.PubSub) != 1 {
		t.Fatalf("pubsub: %d projects, want 1", len(c.PubSub))
	}
	s := c.PubSub[0]
	if s.Name != "orders-gcp" || s.Project != "orders-prod" || s.Endpoint != "" || s.Monitoring.Enabled || s.Interval() != time.Minute {
		t.Errorf("pubsub[0] = %+v", s)
	}
	if s.Subscriptions.Match("orders-test") || !s.Subscriptions.Match("orders") {
		t.Error("subscriptions.exclude ignored")
	}

	m, err := Parse([]byte(`pubsub: [{name: local, project: queuewatch-test, endpoint: "127.0.0.1:8085", monitoring: {enabled: true}}]`), "p.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.RequireSources(); err != nil {
		t.Errorf("a Pub/Sub project alone is a source: %v", err)
	}
	if p := m.PubSub[0]; p.Interval() != DefaultPubSubPollInterval || !p.Monitoring.Enabled || p.Endpoint != "127.0.0.1:8085" {
		t.Errorf("pubsub[0] = %+v", p)
	}
	// A domain-scoped project id is a project id.
	if _, err := Parse([]byte(`pubsub: [{name: g, project: "example.com:orders-prod"}]`), "d.yml"); err != nil {
		t.Errorf("domain-scoped project refused: %v", err)
	}
}
