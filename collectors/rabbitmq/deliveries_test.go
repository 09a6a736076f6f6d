package rabbitmq

import (
	"context"
	"net/http"
	neturl "net/url"
	"os"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestPollingSpendsNoDelivery polls a quorum DLQ without a delivery limit,
// a classic DLQ and a stream DLQ, each holding one message without a
// timestamp (so the broker reports no head_message_timestamp), a dozen
// times as serve would, then reads each message: polling must not have
// delivered any of them. On RabbitMQ 4.x every return of a quorum message
// counts against the default delivery limit of 20.
func TestPollingSpendsNoDelivery(t *testing.T) {
	a := requireRabbit(t)
	vh, url := a.isolatedVHost("nodeliver")
	ch := isolatedChannel(t, url, vh)
	declare(t, ch, "quorum.dlq", amqp.Table{"x-queue-type": "quorum"})
	declare(t, ch, "classic.dlq", nil)
	declare(t, ch, "stream.dlq", amqp.Table{"x-queue-type": "stream"})
	for _, q := range []string{"quorum.dlq", "classic.dlq", "stream.dlq"} {
		publish(t, ch, "", q, text(q))
	}
	waitDepth(t, ch, "quorum.dlq", 1)
	waitDepth(t, ch, "classic.dlq", 1)

	s := newSource(t, isolatedConfig(url), Options{VHosts: []string{vh}, DLQNamePattern: testNamePattern})
	for range 12 {
		snap := poll(t, s)
		for _, q := range []string{"quorum.dlq", "classic.dlq"} {
			if d := mustDLQ(t, snap, vh, q); d.Messages != 1 {
				t.Fatalf("%s: %d messages, want 1", q, d.Messages)
			}
		}
		mustDLQ(t, snap, vh, "stream.dlq")
		time.Sleep(50 * time.Millisecond)
	}

	m := getOne(t, ch, "quorum.dlq")
	if n, _ := rabbit.HeaderInt(m.Headers["x-delivery-count"]); n != 0 || m.Redelivered {
		t.Errorf("quorum.dlq: x-delivery-count %d, redelivered %v after 12 polls; want 0 and false: polling spent deliveries", n, m.Redelivered)
	}
	if m := getOne(t, ch, "classic.dlq"); m.Redelivered {
		t.Error("classic.dlq: message redelivered after 12 polls: polling returned it to the queue")
	}
}

// getOne reads the head message of q with basic.get and acks it.
func getOne(t testing.TB, ch *amqp.Channel, q string) amqp.Delivery {
	t.Helper()
	m, ok, err := ch.Get(q, false)
	if err != nil || !ok {
		t.Fatalf("get %s: ok %v, err %v", q, ok, err)
	}
	if err := m.Ack(false); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestServeLoopSpendsNoDelivery runs the collectors scheduler, as serve
// does, at a short interval for about 20 polls against two quorum DLQs
// and checks that every message's x-delivery-count is as it was.
func TestServeLoopSpendsNoDelivery(t *testing.T) {
	// Polls start every interval ±10%, so 3.5 s hold about 23 of them.
	serveAgainstQuorumDLQs(t, 150*time.Millisecond, 3500*time.Millisecond, 18)
}

// TestSoakServeSpendsNoDelivery is the long form of
// TestServeLoopSpendsNoDelivery: QW_SOAK=10m runs serve's scheduler at a
// 2 s interval for ten minutes.
func TestSoakServeSpendsNoDelivery(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("QW_SOAK"))
	if err != nil || d <= 0 {
		t.Skip("set QW_SOAK to a duration (e.g. 10m) to run the soak")
	}
	serveAgainstQuorumDLQs(t, 2*time.Second, d, int(d/(2*time.Second))*9/10)
}

// serveAgainstQuorumDLQs polls two quorum DLQs (three messages each, one
// carrying a timestamp) with the scheduler for runFor and checks that at
// least minPolls polls succeeded and that no message was delivered.
func serveAgainstQuorumDLQs(t *testing.T, interval, runFor time.Duration, minPolls int) {
	a := requireRabbit(t)
	vh, url := a.isolatedVHost("serveq")
	ch := isolatedChannel(t, url, vh)
	dlqs := []string{"orders.dlq", "payments.dlq"}
	for _, q := range dlqs {
		declare(t, ch, q, amqp.Table{"x-queue-type": "quorum"})
		publish(t, ch, "", q, text("a"))
		publish(t, ch, "", q, amqp.Publishing{Body: []byte("b"), Timestamp: time.Now().Add(-time.Hour)})
		publish(t, ch, "", q, text("c"))
		waitDepth(t, ch, q, 3)
	}
	s := newSource(t, isolatedConfig(url), Options{VHosts: []string{vh}, DLQNamePattern: testNamePattern})
	c := collectors.New([]collectors.Source{s}, collectors.Options{Interval: interval})
	ctx, cancel := context.WithTimeout(context.Background(), runFor)
	defer cancel()
	polls := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	var last time.Time
	for ctx.Err() == nil {
		if st := c.Statuses(); len(st) == 1 && st[0].LastSuccess.After(last) {
			last = st[0].LastSuccess
			polls++
		}
		time.Sleep(interval / 3)
	}
	<-done
	if polls < minPolls {
		t.Fatalf("%d successful polls, want at least %d; statuses %+v", polls, minPolls, c.Statuses())
	}
	t.Logf("%d polls in %v", polls, runFor)
	for _, q := range dlqs {
		for i := range 3 {
			m := getOne(t, ch, q)
			if n, _ := rabbit.HeaderInt(m.Headers["x-delivery-count"]); n != 0 || m.Redelivered {
				t.Errorf("%s message %d (%s): x-delivery-count %d, redelivered %v after %d polls; want 0, false",
					q, i, m.Body, n, m.Redelivered, polls)
			}
		}
	}
}

// isolatedVHost creates a vhost whose queues only a user of its own may
// read, and returns it with that user's AMQP URL. Other processes polling
// every vhost of the shared test broker as guest (other test runs of a
// collector that reads DLQ heads) can still connect and measure depths,
// so they see no error for the vhost, but cannot deliver these messages:
// a delivery count that moves was moved by this test.
func (a *admin) isolatedVHost(prefix string) (vhost, url string) {
	a.t.Helper()
	vhost = a.VHost(prefix)
	user := testenv.Unique("qw-" + prefix)
	a.Do(http.MethodPut, rabbit.APIPath("users", user), map[string]any{"password": "secret", "tags": ""})
	a.t.Cleanup(func() { a.Do(http.MethodDelete, rabbit.APIPath("users", user), nil) })
	a.Do(http.MethodPut, rabbit.APIPath("permissions", vhost, user), map[string]string{"configure": ".*", "write": ".*", "read": ".*"})
	a.Do(http.MethodPut, rabbit.APIPath("permissions", vhost, "guest"), map[string]string{"configure": "^$", "write": "^$", "read": "^$"})
	return vhost, "amqp://" + neturl.PathEscape(user) + ":secret@127.0.0.1:5672/"
}

// isolatedConfig reaches an isolated vhost over AMQP as its own user and
// the management API as guest.
func isolatedConfig(url string) config.RabbitMQ {
	return config.RabbitMQ{URL: url, ManagementURL: testenv.ManagementURL, ManagementUsername: "guest", ManagementPassword: "guest"}
}

// isolatedChannel opens a confirm-mode channel on vhost as url's user.
func isolatedChannel(t testing.TB, url, vhost string) *amqp.Channel {
	t.Helper()
	conn, err := amqp.DialConfig(url, amqp.Config{Vhost: vhost})
	if err != nil {
		t.Fatalf("dial vhost %q: %v", vhost, err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	return ch
}

// declare declares a durable queue over AMQP (guest may not configure
// queues in an isolated vhost).
func declare(t testing.TB, ch *amqp.Channel, name string, args amqp.Table) {
	t.Helper()
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatalf("declare %s: %v", name, err)
	}
}
