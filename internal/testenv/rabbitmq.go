package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/brokers/rabbitmq"
)

// The shared test broker that .ci/run starts.
const (
	// DefaultAMQPURL is the broker's default vhost "/".
	DefaultAMQPURL = "amqp://guest:guest@127.0.0.1:5672/"
	// ManagementURL is the management API without credentials.
	ManagementURL = "http://127.0.0.1:15672"
	// ManagementURLWithAuth is the management API with guest/guest in
	// the URL, as a config file would carry them.
	ManagementURLWithAuth = "http://guest:guest@127.0.0.1:15672"
)

// APIPath joins segments into a management API path under /api, escaping
// each one: vhost and queue names may hold '/' and '%'.
func APIPath(segments ...string) string { return rabbitmq.APIPath(segments...) }

// RabbitAdmin drives the test broker's management API for test setup.
// Every request failure fails the test.
type RabbitAdmin struct {
	t  testing.TB
	hc *http.Client
}

// Rabbit returns an admin for the test broker once both its management
// API and its AMQP port answer; an unreachable broker goes to Require.
func Rabbit(t testing.TB) *RabbitAdmin {
	t.Helper()
	a := &RabbitAdmin{t: t, hc: &http.Client{Timeout: 30 * time.Second}}
	Require(t, "rabbitmq on 127.0.0.1", a.reachable())
	return a
}

func (a *RabbitAdmin) reachable() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ManagementURL+"/api/overview", nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth("guest", "guest")
	resp, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("management API: %s", resp.Status)
	}
	conn, err := amqp.DialConfig(DefaultAMQPURL, amqp.Config{Dial: amqp.DefaultDial(2 * time.Second)})
	if err != nil {
		return err
	}
	return conn.Close()
}

// Do sends one management request with body as JSON (none when nil) and
// returns the response body. path must already be escaped (see APIPath).
// A status of 300 or more fails the test, except 404 on DELETE: cleanup
// of something a test already removed is not an error.
func (a *RabbitAdmin) Do(method, path string, body any) []byte {
	a.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	// Not t.Context(): it is cancelled before the cleanups that delete
	// vhosts run.
	req, err := http.NewRequestWithContext(context.Background(), method, ManagementURL+path, r)
	if err != nil {
		a.t.Fatal(err)
	}
	req.SetBasicAuth("guest", "guest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 && (method != http.MethodDelete || resp.StatusCode != http.StatusNotFound) {
		a.t.Fatalf("%s %s: %s: %s", method, path, resp.Status, out)
	}
	return out
}

// VHost creates a vhost named Unique(prefix), grants guest everything on
// it and deletes it, with its queues, when the test ends.
func (a *RabbitAdmin) VHost(prefix string) string {
	a.t.Helper()
	name := Unique(prefix)
	a.Do(http.MethodPut, APIPath("vhosts", name), map[string]any{})
	a.Do(http.MethodPut, APIPath("permissions", name, "guest"), map[string]string{"configure": ".*", "write": ".*", "read": ".*"})
	a.t.Cleanup(func() { a.Do(http.MethodDelete, APIPath("vhosts", name), nil) })
	return name
}

// Channel opens an AMQP channel on vhost; its connection is closed when
// the test ends.
func Channel(t testing.TB, vhost string) *amqp.Channel {
	t.Helper()
	conn, err := amqp.DialConfig(DefaultAMQPURL, amqp.Config{Vhost: vhost})
	if err != nil {
		t.Fatalf("dial vhost %q: %v", vhost, err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// DeadLetter declares queue dlq and queue src, which dead-letters into dlq
// through the default exchange, then publishes each of msgs to src and
// rejects it, so that each ends up in dlq as RabbitMQ itself put it there.
func DeadLetter(t testing.TB, ch *amqp.Channel, src, dlq string, msgs ...amqp.Publishing) {
	t.Helper()
	if _, err := ch.QueueDeclare(dlq, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(src, true, false, false, false, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq}); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := ch.PublishWithContext(context.Background(), "", src, false, false, m); err != nil {
			t.Fatal(err)
		}
		d, ok, err := ch.Get(src, false)
		if err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
		if err := d.Reject(false); err != nil {
			t.Fatal(err)
		}
	}
}
