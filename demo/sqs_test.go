package demo

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopElasticMQ()
	os.Exit(code)
}

// sqsAttributes reads a queue's attributes with the aws CLI, a client no
// one here wrote.
func sqsAttributes(t *testing.T, s *testenv.ElasticMQServer, queue string) map[string]string {
	t.Helper()
	var out struct{ Attributes map[string]string }
	raw := s.AWS(t, "sqs", "get-queue-attributes", "--queue-url", s.QueueURL(queue), "--attribute-names", "All")
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("get-queue-attributes %s: %v: %s", queue, err, raw)
	}
	return out.Attributes
}

// TestSQSDemo runs the SQS demo on ElasticMQ: the two queue pairs exist
// with their redrive policies, orders are consumed, SQS itself moves the
// poison orders and payments to the DLQs after maxReceiveCount receives,
// and Close deletes every demo queue. Each run has its own prefix, so
// concurrent demos on one server do not collide.
func TestSQSDemo(t *testing.T) {
	s := testenv.ElasticMQ(t)
	prefix := testenv.Unique("demo") + "-"
	d, err := StartSQS(t.Context(), SQSOptions{Endpoint: s.Endpoint, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, pair := range [][2]string{{SQSOrders, SQSOrdersDLQ}, {SQSPayments, SQSPaymentsDLQ}} {
		var policy struct {
			Target string          `json:"deadLetterTargetArn"`
			Max    json.RawMessage `json:"maxReceiveCount"`
		}
		if err := json.Unmarshal([]byte(sqsAttributes(t, s, prefix+pair[0])["RedrivePolicy"]), &policy); err != nil {
			t.Fatalf("%s redrive policy: %v", pair[0], err)
		}
		if policy.Target != s.QueueARN(prefix+pair[1]) || string(policy.Max) != `"3"` && string(policy.Max) != "3" {
			t.Errorf("%s redrive policy %+v, want %s after 3", pair[0], policy, s.QueueARN(prefix+pair[1]))
		}
	}
	if sqsAttributes(t, s, prefix+SQSPaymentsDLQ)["FifoQueue"] != "true" {
		t.Errorf("%s is not FIFO", SQSPaymentsDLQ)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		dlq, _ := strconv.Atoi(sqsAttributes(t, s, prefix+SQSOrdersDLQ)["ApproximateNumberOfMessages"])
		payments := sqsAttributes(t, s, prefix+SQSPaymentsDLQ)
		if dlq >= seededSQSPoison {
			t.Logf("orders DLQ %d, payments DLQ %s", dlq, payments["ApproximateNumberOfMessages"])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("orders DLQ has %d messages, want the %d seeded poison orders", dlq, seededSQSPoison)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The consumer keeps up: good orders do not pile up.
	if v, _ := strconv.Atoi(sqsAttributes(t, s, prefix+SQSOrders)["ApproximateNumberOfMessages"]); v > 50 {
		t.Errorf("orders has %d visible messages: the consumer does not keep up", v)
	}
	d.Close()
	d.Close() // idempotent
	var list struct{ QueueUrls []string }
	if raw := s.AWS(t, "sqs", "list-queues", "--queue-name-prefix", prefix); len(raw) > 0 {
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatal(err)
		}
	}
	if len(list.QueueUrls) > 0 {
		t.Errorf("demo queues left behind after Close: %v", list.QueueUrls)
	}
}

// TestSQSDemoNoServer: with nothing answering, StartSQS fails fast and
// creates nothing.
func TestSQSDemoNoServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := StartSQS(ctx, SQSOptions{Endpoint: "http://127.0.0.1:1"}); err == nil {
		t.Fatal("StartSQS succeeded with no server")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("StartSQS took %s to give up", d)
	}
}
