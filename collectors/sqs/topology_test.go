package sqs

import (
	"slices"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestSQSTopology finds DLQs from redrive policies the same way on both
// SQS implementations the tests have, ElasticMQ and moto: a DLQ with two
// sources whose policies were set with maxReceiveCount as a number and as
// a string, and a FIFO pair; dead letters are made with boto3 receiving
// past maxReceiveCount, so each server moves them itself. Both servers
// hand a string maxReceiveCount back as a number (brokers/sqs's parser
// tests cover the string form AWS may return).
func TestSQSTopology(t *testing.T) {
	for _, server := range []struct {
		name  string
		start func(testing.TB) testenv.SQSServer
	}{
		{"ElasticMQ", func(t testing.TB) testenv.SQSServer { return testenv.ElasticMQ(t) }},
		{"moto", func(t testing.TB) testenv.SQSServer { return testenv.Moto(t) }},
	} {
		t.Run(server.name, func(t *testing.T) { testTopology(t, server.start(t)) })
	}
}

func testTopology(t *testing.T, s testenv.SQSServer) {
	p := testenv.Unique("topo")
	orders, returns, dlq := p+"-orders", p+"-returns", p+"-dlq"
	pay, payDLQ := p+"-pay.fifo", p+"-pay-dlq.fifo"
	createQueue(t, s, dlq, nil)
	createQueue(t, s, orders, redrive(s, dlq, "2"))
	createQueue(t, s, returns, redrive(s, dlq, `"3"`))
	createQueue(t, s, payDLQ, map[string]string{"FifoQueue": "true"})
	fifo := redrive(s, payDLQ, `"1"`)
	fifo["FifoQueue"], fifo["ContentBasedDeduplication"] = "true", "true"
	createQueue(t, s, pay, fifo)
	for _, body := range []string{"a", "b", "c"} {
		s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(orders), "--message-body", "order "+body)
	}
	s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(returns), "--message-body", "return")
	s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(pay), "--message-body", "payment", "--message-group-id", "g1")
	deadLetter(t, s, orders, dlq, 3)
	deadLetter(t, s, pay, payDLQ, 1)

	src, err := New(Options{Cluster: account(t, s, config.SQS{Queues: config.SQSQueues{Prefix: p}})})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := src.Poll(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]queue.SQSQueue{}
	for _, q := range snap.SQSQueues {
		if q.Err != "" {
			t.Errorf("%s: %s", q.Name, q.Err)
		}
		if q.ARN != s.QueueARN(q.Name) {
			t.Errorf("%s: ARN %s, want %s", q.Name, q.ARN, s.QueueARN(q.Name))
		}
		got[q.Name] = q
	}
	for _, want := range []struct {
		name, dlq string
		max       int
		fifo      bool
		visible   int64
	}{
		{orders, dlq, 2, false, 0},
		{returns, dlq, 3, false, 1},
		{dlq, "", 0, false, 3},
		{pay, payDLQ, 1, true, 0},
		{payDLQ, "", 0, true, 1},
	} {
		q, ok := got[want.name]
		if !ok {
			t.Errorf("%s not read", want.name)
			continue
		}
		if q.DeadLetterQueue != want.dlq || q.MaxReceiveCount != want.max || q.FIFO != want.fifo || q.Visible != want.visible {
			t.Errorf("%s = %+v, want DLQ %q after %d receives, FIFO %v, %d visible", want.name, q, want.dlq, want.max, want.fifo, want.visible)
		}
	}
	wantDLQs := []queue.DLQ{
		{Broker: queue.SQS, Cluster: "local", Name: dlq, Sources: []string{orders, returns}, Detection: queue.DetectedTopology, Messages: 3},
		{Broker: queue.SQS, Cluster: "local", Name: payDLQ, Sources: []string{pay}, Detection: queue.DetectedTopology, Messages: 1},
	}
	if !dlqsEqual(snap.DLQs, wantDLQs) {
		t.Errorf("DLQs %+v, want %+v", snap.DLQs, wantDLQs)
	}
	if !slices.ContainsFunc(snap.SQSQueues, func(q queue.SQSQueue) bool { return q.Name == payDLQ && q.FIFO }) {
		t.Errorf("FIFO DLQ %s not read as FIFO", payDLQ)
	}
}
