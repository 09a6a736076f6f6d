package frameworks

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestSpringAMQPDeadLetters runs a Spring AMQP 4.1 listener that fails for
// messages whose body is not a number; after one retry
// RepublishMessageRecoverer republishes them to orders.dlq with its
// x-exception-* and x-original-* headers. queuewatch must list the DLQ and
// decode each of those headers as Spring wrote them.
func TestSpringAMQPDeadLetters(t *testing.T) {
	t.Parallel()
	testenv.Slow(t, "a Spring AMQP listener on the real RabbitMQ")
	fw := testenv.RealFramework(t, "spring-amqp")
	admin := testenv.Rabbit(t)
	vh := admin.VHost("spring")
	ch := testenv.Channel(t, vh)
	const exchange, key, src, dlqName = "orders-x", "orders.created", "orders", "orders.dlq"
	if err := ch.ExchangeDeclare(exchange, "direct", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{src, dlqName} {
		if _, err := ch.QueueDeclare(name, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := ch.QueueBind(src, key, exchange, false, nil); err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	const n = 9
	for i := range n {
		body := fmt.Sprint(100 * (i + 1))
		if i%3 == 0 {
			body = fmt.Sprintf("amount-%d", i)
			failed[fmt.Sprintf("m-%d", i)] = true
		}
		if err := ch.PublishWithContext(context.Background(), exchange, key, true, false,
			amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i), Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	started := time.Now()
	if _, err := fw.Run(ctx, "io.queuewatch.frameworks.SpringAmqpDlq", "127.0.0.1", "5672", vh, "guest", "guest", src, dlqName, fmt.Sprint(n)); err != nil {
		t.Fatal(err)
	}
	t.Logf("the Spring AMQP listener ran %v", time.Since(started).Round(time.Millisecond))

	cfg := baseConfig(t)
	cfg.RabbitMQ = []config.RabbitMQ{{
		Name: "main", URL: testenv.DefaultAMQPURL, ManagementURL: testenv.ManagementURL, VHosts: []string{vh},
	}}
	q := start(t, cfg)
	id := queue.DLQRef{Broker: queue.RabbitMQ, Cluster: "main", VHost: vh, Name: dlqName}.ID()
	q.waitDLQ(t, id, int64(len(failed)))
	msgs := q.messages(t, id)
	if len(msgs) != len(failed) {
		t.Fatalf("browsed %d dead letters, want %d", len(msgs), len(failed))
	}
	screenshot(t, q, id, "spring-amqp")
	checkPage(t, q, id, "java.lang.IllegalStateException", "order m-0 has no valid amount",
		"ListenerExecutionFailedException", "java.lang.NumberFormatException", "orders-x", "orders.created")
	// Spring sets no timestamp and writes no x-death: when the message
	// died is unknown, not "never".
	if page := string(q.get(t, "/dlq/"+url.PathEscape(id))); strings.Contains(page, ">never<") {
		t.Error("the DLQ page says Spring AMQP's dead letters died never")
	}
	// What Spring wrote, read after queuewatch browsed (browsing leaves the
	// queue as it was, so the same messages are there in the same order),
	// and held unacknowledged until the test ends.
	written := readQueue(t, ch, dlqName, len(failed))
	for i, w := range written {
		if !failed[w.MessageId] {
			t.Fatalf("unexpected dead letter %q", w.MessageId)
		}
		m := msgs[i]
		if got := m.Properties["message_id"]; got != w.MessageId {
			t.Fatalf("message %d: the API has %q, the queue %q", i, got, w.MessageId)
		}
		checkSpringAMQP(t, m.Failure, w, exchange, key)
		if i == 0 {
			saveGolden(t, "spring-amqp", m.Headers)
		}
	}
}

// checkSpringAMQP compares the API's decoding of one dead letter with the
// headers Spring wrote (w).
func checkSpringAMQP(t *testing.T, f failure, w amqp.Delivery, exchange, key string) {
	t.Helper()
	raw := func(name string) string {
		v, ok := w.Headers[name].(string)
		if !ok {
			t.Errorf("Spring wrote no %s string header: %T", name, w.Headers[name])
		}
		return v
	}
	for _, c := range []struct{ name, got, want string }{
		{"reason", f.Reason, "exception"},
		{"framework", f.Framework, "spring-amqp"},
		{"exception message", f.ExceptionMessage, raw("x-exception-message")},
		{"stack trace", f.StackTrace, raw("x-exception-stacktrace")},
		{"original exchange", f.OriginalExchange, raw("x-original-exchange")},
		{"original routing key", f.OriginalRoutingKey, raw("x-original-routingKey")},
		{"original exchange (sent)", f.OriginalExchange, exchange},
		{"original routing key (sent)", f.OriginalRoutingKey, key},
		// The listener's exception, the one whose message Spring wrote,
		// not the container's wrapper nor the root cause.
		{"exception class", f.ExceptionClass, "java.lang.IllegalStateException"},
		{"wrapper class", f.WrapperClass, "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException"},
		{"cause class", f.CauseClass, "java.lang.NumberFormatException"},
	} {
		if c.got != c.want {
			t.Errorf("%s of %s: got %q, want %q", c.name, w.MessageId, c.got, c.want)
		}
	}
	if want := "order " + w.MessageId + " has no valid amount"; f.ExceptionMessage != want {
		t.Errorf("exception message %q, want the listener's %q", f.ExceptionMessage, want)
	}
}

// readQueue gets n messages of name without acknowledging them; closing
// the channel when the test ends requeues them.
func readQueue(t *testing.T, ch *amqp.Channel, name string, n int) []amqp.Delivery {
	t.Helper()
	var out []amqp.Delivery
	for range n {
		d, ok, err := ch.Get(name, false)
		if err != nil || !ok {
			t.Fatalf("get %s: %v %v", name, ok, err)
		}
		out = append(out, d)
	}
	return out
}
