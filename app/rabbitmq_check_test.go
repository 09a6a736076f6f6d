package app

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// listedVHost creates a vhost holding queue rc.work.dlq with two messages.
func listedVHost(t *testing.T, a *testenv.RabbitAdmin) string {
	t.Helper()
	vh := a.VHost("listed")
	a.Do(http.MethodPut, testenv.APIPath("queues", vh, "rc.work.dlq"), map[string]any{"durable": true})
	for _, body := range []string{"a", "b"} {
		a.Do(http.MethodPost, testenv.APIPath("exchanges", vh, "amq.default", "publish"), map[string]any{
			"routing_key": "rc.work.dlq", "payload": body, "payload_encoding": "string", "properties": map[string]any{},
		})
	}
	return vh
}

type sourcesJSON struct {
	Sources []struct {
		Up        bool     `json:"up"`
		Polled    bool     `json:"polled"`
		LastError string   `json:"last_error"`
		Partial   []string `json:"partial"`
	} `json:"sources"`
}

func (r *running) sources(t *testing.T) sourcesJSON {
	t.Helper()
	_, body := r.get(t, "/api/v1/sources")
	var out sourcesJSON
	if err := json.Unmarshal([]byte(body), &out); err != nil || len(out.Sources) != 1 {
		t.Fatalf("sources %q: %v", body, err)
	}
	return out
}

// TestServeListedQueueMissing checks that in AMQP-only mode a dotted
// dlq_queues name is measured in the URL's vhost, and that a listed queue
// that does not exist shows as a DLQ with an error and a partial source,
// counted in queuewatch_collector_partial_errors.
func TestServeListedQueueMissing(t *testing.T) {
	a := testenv.Rabbit(t)
	vh := listedVHost(t, a)
	cfg := testConfig(t)
	cfg.RabbitMQ = []config.RabbitMQ{{
		Name: "main", URL: "amqp://guest:guest@127.0.0.1:5672/" + url.PathEscape(vh),
		DLQQueues: []string{"rc.work.dlq", "rc.gone.dlq"},
	}}
	r := start(t, cfg)
	want := "queue rc.gone.dlq in vhost " + vh + ": not found"
	eventually(t, "a polled source", func() bool { return r.sources(t).Sources[0].Polled })
	src := r.sources(t).Sources[0]
	if !src.Up || !slices.Contains(src.Partial, want) {
		t.Errorf("source %+v, want up with partial %q", src, want)
	}
	_, body := r.get(t, "/api/v1/dlqs")
	var dlqs struct {
		DLQs []struct {
			VHost, Name, Error string
			Messages           int64
		} `json:"dlqs"`
	}
	if err := json.Unmarshal([]byte(body), &dlqs); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range dlqs.DLQs {
		if d.VHost == vh {
			got[d.Name] = d.Error
			if d.Name == "rc.work.dlq" && d.Messages != 2 {
				t.Errorf("rc.work.dlq has %d messages, want 2", d.Messages)
			}
		}
	}
	if e, ok := got["rc.work.dlq"]; !ok || e != "" {
		t.Errorf("rc.work.dlq: listed %v, error %q", ok, e)
	}
	if got["rc.gone.dlq"] != "not found" {
		t.Errorf("rc.gone.dlq error %q, want not found (dlqs %s)", got["rc.gone.dlq"], body)
	}
	_, metrics := r.get(t, "/metrics")
	if !strings.Contains(metrics, `queuewatch_collector_partial_errors{broker="rabbitmq",cluster="main"} 1`) ||
		!strings.Contains(metrics, `queuewatch_collector_up{broker="rabbitmq",cluster="main"} 1`) {
		t.Errorf("metrics lack partial_errors 1 and up 1:\n%s", grepLines(metrics, "queuewatch_collector_"))
	}
}

// TestServeWrongAMQPPassword checks that a wrong AMQP password puts the
// source down with the broker's refusal, not the poll's deadline, even
// though the poll timeout (1 s) is shorter than the broker takes to refuse.
func TestServeWrongAMQPPassword(t *testing.T) {
	a := testenv.Rabbit(t)
	vh := listedVHost(t, a)
	user := testenv.Unique("qw-serve")
	a.Do(http.MethodPut, testenv.APIPath("users", user), map[string]any{"password": "right-password", "tags": ""})
	t.Cleanup(func() { a.Do(http.MethodDelete, testenv.APIPath("users", user), nil) })
	a.Do(http.MethodPut, testenv.APIPath("permissions", vh, user), map[string]string{"configure": ".*", "write": ".*", "read": ".*"})
	cfg := testConfig(t)
	cfg.RabbitMQ = []config.RabbitMQ{{
		Name: "main", URL: "amqp://" + user + ":wrong-password@127.0.0.1:5672/" + url.PathEscape(vh),
		ManagementURL: testenv.ManagementURL, ManagementUsername: "guest", ManagementPassword: "guest",
		DLQQueues: []string{"rc.work.dlq"},
	}}
	r := start(t, cfg)
	eventually(t, "the broker's refusal as the source's last error", func() bool {
		return strings.Contains(r.sources(t).Sources[0].LastError, "ACCESS_REFUSED")
	})
	if src := r.sources(t).Sources[0]; src.Up || strings.Contains(src.LastError, "wrong-password") {
		t.Errorf("source %+v, want down without the password", src)
	}
	_, metrics := r.get(t, "/metrics")
	if !strings.Contains(metrics, `queuewatch_collector_up{broker="rabbitmq",cluster="main"} 0`) {
		t.Errorf("metrics lack up 0:\n%s", grepLines(metrics, "queuewatch_collector_"))
	}
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
