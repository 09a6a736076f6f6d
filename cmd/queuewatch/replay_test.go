package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/dlqreplay"
)

const mgmt = "http://127.0.0.1:15672"

func mgmtDo(t *testing.T, method, path string, body any) {
	t.Helper()
	var buf bytes.Buffer
	if body != nil {
		_ = json.NewEncoder(&buf).Encode(body)
	}
	req, _ := http.NewRequestWithContext(context.Background(), method, mgmt+path, &buf)
	req.SetBasicAuth("guest", "guest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("RabbitMQ management API required in CI: %v", err)
		}
		t.Skipf("no RabbitMQ management API: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %s", method, path, resp.Status)
	}
}

// rabbitDLQ creates a fresh vhost with queue orders dead-lettering into
// orders.dlq, and dead-letters n messages into it.
func rabbitDLQ(t *testing.T, n int) (vhost string, ch *amqp.Channel) {
	t.Helper()
	vhost = fmt.Sprintf("qw-cli-%d", time.Now().UnixNano())
	mgmtDo(t, http.MethodPut, "/api/vhosts/"+url.PathEscape(vhost), nil)
	t.Cleanup(func() { mgmtDo(t, http.MethodDelete, "/api/vhosts/"+url.PathEscape(vhost), nil) })
	mgmtDo(t, http.MethodPut, "/api/permissions/"+url.PathEscape(vhost)+"/guest", map[string]string{"configure": ".*", "write": ".*", "read": ".*"})
	conn, err := amqp.Dial("amqp://guest:guest@127.0.0.1:5672/" + url.PathEscape(vhost))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err = conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("orders.dlq", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("orders", true, false, false, false, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := ch.PublishWithContext(context.Background(), "", "orders", false, false, amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i), Body: []byte(`{"order":1}`)}); err != nil {
			t.Fatal(err)
		}
		d, ok, err := ch.Get("orders", false)
		if err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
		if err := d.Reject(false); err != nil {
			t.Fatal(err)
		}
	}
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
