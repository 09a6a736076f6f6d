package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// rabbitVHost creates a vhost on the test broker holding queue
// rc.work.dlq with two messages, and returns it with the AMQP URL that
// names it.
func rabbitVHost(t *testing.T) (vhost, amqpURL string) {
	t.Helper()
	a := testenv.Rabbit(t)
	vh := a.VHost("check")
	a.Do(http.MethodPut, testenv.APIPath("queues", vh, "rc.work.dlq"), map[string]any{"durable": true})
	for _, body := range []string{"a", "b"} {
		a.Do(http.MethodPost, testenv.APIPath("exchanges", vh, "amq.default", "publish"), map[string]any{
			"routing_key": "rc.work.dlq", "payload": body, "payload_encoding": "string", "properties": map[string]any{},
		})
	}
	return vh, "amqp://guest:guest@127.0.0.1:5672/" + url.PathEscape(vh)
}

// TestCheckAMQPOnlyDottedName checks that a dotted dlq_queues name is a
// name, measured without a management API in the URL's vhost.
func TestCheckAMQPOnlyDottedName(t *testing.T) {
	_, u := rabbitVHost(t)
	path := writeConfig(t, fmt.Sprintf("rabbitmq:\n  - name: main\n    url: %q\n    dlq_queues: [rc.work.dlq]\n", u))
	code, out, errOut := runCmd("check", "--config", path)
	if code != 0 || !strings.Contains(out, "ok   rabbitmq:main: 0 groups, 1 queue, 1 DLQ") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
}

// TestCheckMissingListedQueueFails checks that a dlq_queues name that
// does not exist fails check, naming the queue and the vhost, with and
// without a management API.
func TestCheckMissingListedQueueFails(t *testing.T) {
	vh, u := rabbitVHost(t)
	for name, mgmt := range map[string]string{"amqp only": "", "management": "    management_url: " + testenv.ManagementURL + "\n"} {
		t.Run(name, func(t *testing.T) {
			path := writeConfig(t, fmt.Sprintf("rabbitmq:\n  - name: main\n    url: %q\n%s    dlq_queues: [rc.work.dlq, rc.gone.dlq]\n", u, mgmt))
			code, out, errOut := runCmd("check", "--config", path)
			want := fmt.Sprintf("queue rc.gone.dlq in vhost %s: not found", vh)
			if code != 1 || !strings.Contains(out, "FAIL rabbitmq:main") || !strings.Contains(out, want) || !strings.Contains(errOut, want) {
				t.Errorf("exit %d, want 1 naming %q\nstdout %q\nstderr %q", code, want, out, errOut)
			}
		})
	}
}

// TestCheckWrongAMQPPasswordFails checks that a user whose AMQP password
// is wrong fails check with the broker's refusal, also when the poll
// timeout is shorter than the broker takes to refuse a login.
func TestCheckWrongAMQPPasswordFails(t *testing.T) {
	a := testenv.Rabbit(t)
	vh, _ := rabbitVHost(t)
	user := testenv.Unique("qw-check")
	a.Do(http.MethodPut, testenv.APIPath("users", user), map[string]any{"password": "right-password", "tags": ""})
	t.Cleanup(func() { a.Do(http.MethodDelete, testenv.APIPath("users", user), nil) })
	a.Do(http.MethodPut, testenv.APIPath("permissions", vh, user), map[string]string{"configure": ".*", "write": ".*", "read": ".*"})
	bad := "amqp://" + user + ":wrong-password@127.0.0.1:5672/" + url.PathEscape(vh)
	for name, mgmt := range map[string]string{
		"amqp only":  "",
		"management": "    management_url: " + testenv.ManagementURL + "\n    management_username: guest\n    management_password: guest\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := writeConfig(t, fmt.Sprintf("poll_interval: 2s\nrabbitmq:\n  - name: main\n    url: %q\n%s    dlq_queues: [rc.work.dlq]\n", bad, mgmt))
			code, out, errOut := runCmd("check", "--config", path)
			if code != 1 || !strings.Contains(out, "FAIL rabbitmq:main") || !strings.Contains(out, "ACCESS_REFUSED") ||
				strings.Contains(out, "deadline") || strings.Contains(out, "wrong-password") {
				t.Errorf("exit %d, want 1 with the broker's ACCESS_REFUSED\nstdout %q\nstderr %q", code, out, errOut)
			}
		})
	}
}
