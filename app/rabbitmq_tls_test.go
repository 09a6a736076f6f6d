package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

func TestMain(m *testing.M) {
	// The Kafka node of the OAUTHBEARER check test trusts a Keycloak.
	testenv.KafkaWithOAuth()
	code := m.Run()
	testenv.StopRabbitMQTLS()
	testenv.StopElasticMQ()
	testenv.StopMoto()
	testenv.StopKinesis()
	testenv.StopPubSub()
	testenv.StopKafka()
	testenv.StopSchemaRegistry()
	os.Exit(code)
}

// TestRabbitMQTLSEverywhere configures a cluster that is reachable over
// TLS only, with a private CA, a client certificate and a server name
// that differs from the host in the URLs, and wires it the way Run does:
// the collector sees the DLQ's depth, browsing returns the messages and
// leaves them, and a replay moves them back to their source queue.
func TestRabbitMQTLSEverywhere(t *testing.T) {
	testenv.Slow(t, "a TLS-only RabbitMQ node")
	node := testenv.RabbitMQTLS(t)
	t.Logf("tls node %s started in %s", node.Node, node.Started.Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	src, dlq := testenv.Unique("tls-orders"), testenv.Unique("tls-orders")+".dlq"
	ch := tlsChannel(t, node)
	var bodies []string
	var msgs []amqp.Publishing
	for i := range 3 {
		bodies = append(bodies, fmt.Sprintf(`{"order":%d}`, i))
		msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprint("m", i), Body: []byte(bodies[i])})
	}
	testenv.DeadLetter(t, ch, src, dlq, msgs...)
	t.Cleanup(func() {
		_, _ = ch.QueueDelete(src, false, false, false)
		_, _ = ch.QueueDelete(dlq, false, false, false)
	})

	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.RabbitMQ = []config.RabbitMQ{{
		Name: "tls", URL: node.AMQPURL, ManagementURL: node.ManagementURL,
		TLS: config.TLS{Enabled: true, CAFile: node.CAFile, CertFile: node.CertFile, KeyFile: node.KeyFile, ServerName: node.ServerName},
	}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	access, err := newBrokers(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sources, closeSources, err := buildSources(cfg, access, log)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSources()
	svc, closeSvc, err := dlqService(ctx, cfg, access, log)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSvc()

	snap, err := sources[0].Poll(ctx)
	if err != nil {
		t.Fatalf("poll over tls: %v", err)
	}
	i := slices.IndexFunc(snap.DLQs, func(d queue.DLQ) bool { return d.Name == dlq })
	if i < 0 || snap.DLQs[i].Messages != 3 {
		t.Fatalf("poll over tls: DLQ %s not seen with 3 messages: %+v (partial %v)", dlq, snap.DLQs, snap.Partial)
	}

	id := queue.DLQRef{Broker: queue.RabbitMQ, Cluster: "tls", VHost: "/", Name: dlq}.ID()
	page, err := svc.Browse(ctx, id, dlqreplay.BrowseOptions{Limit: 10})
	if err != nil {
		t.Fatalf("browse over tls: %v", err)
	}
	var got []string
	for _, m := range page.Messages {
		got = append(got, string(m.Body))
	}
	if !slices.Equal(got, bodies) {
		t.Fatalf("browse over tls: bodies %q, want %q", got, bodies)
	}
	if n := depth(t, ch, dlq); n != 3 {
		t.Fatalf("after browse the DLQ holds %d messages, want 3", n)
	}

	job, err := svc.Start(ctx, dlqreplay.Request{DLQ: id, Selection: dlqreplay.Selection{All: true}, Rate: -1})
	if err != nil {
		t.Fatalf("replay over tls: %v", err)
	}
	rec, err := svc.Wait(ctx, job.ID)
	if err != nil {
		t.Fatalf("wait for replay: %v", err)
	}
	if rec.Job.State != dlqreplay.StateSucceeded || rec.Job.Progress.Moved != 3 {
		t.Fatalf("replay over tls: %s, moved %d: %s", rec.Job.State, rec.Job.Progress.Moved, rec.Job.Error)
	}
	if d, s := depth(t, ch, dlq), depth(t, ch, src); d != 0 || s != 3 {
		t.Fatalf("after replay: DLQ %d, source %d messages; want 0 and 3", d, s)
	}
}

// tlsChannel opens a channel on the TLS node for test setup; it is closed
// when the test ends.
func tlsChannel(t *testing.T, node *testenv.RabbitTLS) *amqp.Channel {
	t.Helper()
	tc, err := node.ClientTLS()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := amqp.DialTLS(node.AMQPURL, tc)
	if err != nil {
		t.Fatalf("dial tls node: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func depth(t *testing.T, ch *amqp.Channel, q string) int {
	t.Helper()
	got, err := ch.QueueDeclarePassive(q, false, false, false, false, nil)
	if err != nil {
		t.Fatalf("passive declare %s: %v", q, err)
	}
	return got.Messages
}
