package demo

import (
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

const testRabbitURL = "amqp://guest:guest@127.0.0.1:5672/"

// rabbitOrSkip connects to the local RabbitMQ; without one the test fails
// in CI and is skipped elsewhere (testenv.Require).
func rabbitOrSkip(t *testing.T) *amqp.Connection {
	t.Helper()
	conn, err := amqp.Dial(testRabbitURL)
	testenv.Require(t, "RabbitMQ at "+testRabbitURL, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

func TestRabbitDemo(t *testing.T) {
	conn := rabbitOrSkip(t)
	r, err := StartRabbitMQ(context.Background(), testRabbitURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.VHost() != "/" {
		t.Errorf("vhost %q", r.VHost())
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		orders, err := ch.QueueDeclarePassive(RabbitOrders, true, false, false, false, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": RabbitOrdersDLQ})
		if err != nil {
			t.Fatal(err)
		}
		invoices, err := ch.QueueDeclarePassive(RabbitInvoices, true, false, false, false, amqp.Table{"x-message-ttl": int32(20_000), "x-dead-letter-exchange": RabbitDLX})
		if err != nil {
			t.Fatal(err)
		}
		dlq, err := ch.QueueDeclarePassive(RabbitOrdersDLQ, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Orders are consumed; invoices pile up until their TTL; the
		// seeded dead letters are there from the start.
		if orders.Consumers == 1 && invoices.Messages > 0 && dlq.Messages >= seededRabbitDeadLetters {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("orders consumers %d, invoices %d", orders.Consumers, invoices.Messages)
		}
		time.Sleep(200 * time.Millisecond)
	}
	r.Close()
	r.Close() // idempotent
	ch2, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch2.Close()
	if _, err := ch2.QueueDeclarePassive(RabbitOrdersDLQ, true, false, false, false, nil); err == nil {
		t.Error("demo queues are left behind after Close")
	}
}
