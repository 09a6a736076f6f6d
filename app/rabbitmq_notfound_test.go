package app

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestDLQNotFoundStatus checks that a DLQ whose vhost or queue does not
// exist answers 404 with the reason on both the API and the page, also
// when the DLQ is listed in dlq_queues and so shown (with its error).
func TestDLQNotFoundStatus(t *testing.T) {
	a := testenv.Rabbit(t)
	vh := listedVHost(t, a)
	cfg := testConfig(t)
	cfg.RabbitMQ = []config.RabbitMQ{{
		Name: "main", URL: "amqp://guest:guest@127.0.0.1:5672/" + url.PathEscape(vh),
		ManagementURL: testenv.ManagementURL, DLQQueues: []string{"rc.work.dlq", "rc.gone.dlq"},
	}}
	r := start(t, cfg)
	eventually(t, "a polled source", func() bool { return r.sources(t).Sources[0].Polled })
	tests := []struct{ name, id, want string }{
		{"missing vhost", "rabbitmq:main:" + vh + "-gone:rc.work.dlq", "not found"},
		{"listed queue missing", "rabbitmq:main:" + vh + ":rc.gone.dlq", "rc.gone.dlq"},
		{"unlisted queue missing", "rabbitmq:main:" + vh + ":rc.other.dlq", "rc.other.dlq"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			esc := url.PathEscape(tt.id)
			for _, path := range []string{"/api/v1/dlqs/" + esc + "/messages", "/dlq/" + esc} {
				code, body := r.get(t, path)
				if code != http.StatusNotFound || !strings.Contains(body, tt.want) {
					t.Errorf("GET %s: %d, want 404 naming %q; body %.300q", path, code, tt.want, body)
				}
			}
		})
	}
	if code, _ := r.get(t, "/dlq/"+url.PathEscape("rabbitmq:main:"+vh+":rc.work.dlq")); code != http.StatusOK {
		t.Errorf("existing DLQ page: %d, want 200", code)
	}
}
