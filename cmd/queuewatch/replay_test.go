package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// rabbitDLQ creates a fresh vhost with queue orders dead-lettering into
// orders.dlq, and dead-letters n messages into it.
func rabbitDLQ(t *testing.T, n int) (vhost string, ch *amqp.Channel) {
	t.Helper()
	vhost = testenv.Rabbit(t).VHost("cli")
	ch = testenv.Channel(t, vhost)
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i), Body: []byte(`{"order":1}`)}
	}
	testenv.DeadLetter(t, ch, "orders", "orders.dlq", msgs...)
	deadline := time.Now().Add(5 * time.Second)
	for {
		q, err := ch.QueueDeclarePassive("orders.dlq", true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if q.Messages == n {
			return vhost, ch
		}
		if time.Now().After(deadline) {
			t.Fatalf("dlq has %d messages, want %d", q.Messages, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestReplayCommand(t *testing.T) {
	vhost, ch := rabbitDLQ(t, 3)
	path := writeConfig(t, fmt.Sprintf(`data_dir: %s
rabbitmq:
  - name: main
    url: amqp://guest:guest@127.0.0.1:5672/
    management_url: http://127.0.0.1:15672
    vhosts: [%q]
`, t.TempDir(), vhost))
	id := "rabbitmq:main:" + vhost + ":orders.dlq"

	code, out, errOut := runCmd("replay", "--config", path, "--dlq", id, "--dry-run")
	var dry receiptSummary
	if err := json.Unmarshal([]byte(out), &dry); code != 0 || err != nil {
		t.Fatalf("dry run: exit %d %v\nstdout %s\nstderr %s", code, err, out, errOut)
	}
	if len(dry.Planned) != 3 || dry.Planned[0].Target == "" || !dry.Job.DryRun {
		t.Errorf("dry run planned %+v", dry.Planned)
	}
	if q, _ := ch.QueueDeclarePassive("orders.dlq", true, false, false, false, nil); q.Messages != 3 {
		t.Errorf("dry run changed the DLQ: %d messages", q.Messages)
	}

	code, out, errOut = runCmd("replay", "--config", path, "--dlq", id, "--rate", "-1")
	var done receiptSummary
	if err := json.Unmarshal([]byte(out), &done); code != 0 || err != nil {
		t.Fatalf("replay: exit %d %v\nstdout %s\nstderr %s", code, err, out, errOut)
	}
	if done.Job.State != dlqreplay.StateSucceeded || done.Job.Progress.Moved != 3 || len(done.Problems) != 0 {
		t.Errorf("receipt %+v", done)
	}
	dlq, _ := ch.QueueDeclarePassive("orders.dlq", true, false, false, false, nil)
	orders, _ := ch.QueueDeclarePassive("orders", true, false, false, false, nil)
	if dlq.Messages != 0 || orders.Messages != 3 {
		t.Errorf("after replay: dlq %d, orders %d; want 0 and 3", dlq.Messages, orders.Messages)
	}

	// A DLQ that does not exist in the config is a clear error.
	code, _, errOut = runCmd("replay", "--config", path, "--dlq", "rabbitmq:nope:/:x")
	if code != 1 || !strings.Contains(errOut, "unknown dlq") {
		t.Errorf("unknown cluster: %d %q", code, errOut)
	}
	if code, _, _ := runCmd("replay", "--config", path); code != 2 {
		t.Errorf("missing --dlq: exit %d, want 2", code)
	}
}

// TestReplayCommandHostileNames replays from a DLQ whose vhost and queue
// names need escaping everywhere (':' and '%' inside the DLQ ID, '/', '?',
// '#', spaces, markup and non-ASCII in URLs), named on the command line by
// the ID the UI and the API show.
func TestReplayCommandHostileNames(t *testing.T) {
	const src = `orders a%41:/?#<b>x</b>&'"名`
	vhost := testenv.Rabbit(t).VHost(`cli a%41:/<b>&'" ü`)
	ch := testenv.Channel(t, vhost)
	testenv.DeadLetter(t, ch, src, src+".dlq",
		amqp.Publishing{MessageId: "m/%41?#1", Body: []byte(`{"order":1}`)},
		amqp.Publishing{MessageId: "m-2", Body: []byte(`{"order":2}`)})
	path := writeConfig(t, fmt.Sprintf(`data_dir: %s
rabbitmq:
  - name: main
    url: amqp://guest:guest@127.0.0.1:5672/
    management_url: http://127.0.0.1:15672
    vhosts: [%q]
`, t.TempDir(), vhost))
	id := queue.DLQRef{Broker: queue.RabbitMQ, Cluster: "main", VHost: vhost, Name: src + ".dlq"}.ID()

	code, out, errOut := runCmd("replay", "--config", path, "--dlq", id, "--dry-run")
	var dry receiptSummary
	if err := json.Unmarshal([]byte(out), &dry); code != 0 || err != nil {
		t.Fatalf("dry run: exit %d %v\nstdout %s\nstderr %s", code, err, out, errOut)
	}
	if dry.Job.DLQ != id || len(dry.Planned) != 2 {
		t.Errorf("dry run of %q: job DLQ %q, planned %+v", id, dry.Job.DLQ, dry.Planned)
	}
	code, out, errOut = runCmd("replay", "--config", path, "--dlq", id, "--ids", "m/%41?#1", "--rate", "-1")
	var done receiptSummary
	if err := json.Unmarshal([]byte(out), &done); code != 0 || err != nil {
		t.Fatalf("replay: exit %d %v\nstdout %s\nstderr %s", code, err, out, errOut)
	}
	if done.Job.DLQ != id || done.Job.Progress.Moved != 1 {
		t.Errorf("receipt %+v", done.Job)
	}
	dlq, _ := ch.QueueDeclarePassive(src+".dlq", true, false, false, false, nil)
	orders, _ := ch.QueueDeclarePassive(src, true, false, false, false, nil)
	if dlq.Messages != 1 || orders.Messages != 1 {
		t.Errorf("after replay: dlq %d, source %d; want 1 and 1", dlq.Messages, orders.Messages)
	}
}
