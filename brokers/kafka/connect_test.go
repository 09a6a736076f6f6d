package kafka

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// TestParseConnectors reads the answer a real Kafka Connect 4.4 worker
// gave (recorded by collectors/kafka/realkafka's
// TestKafkaConnectTaskFailed): two sinks, one whose task failed on a
// record that is not JSON.
func TestParseConnectors(t *testing.T) {
	body, err := os.ReadFile("testdata/connect-connectors.json")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ParseConnectors(body, "prod", "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Name != "healthy-sink" || cs[1].Name != "poisoned-sink" {
		t.Fatalf("connectors %+v, want healthy-sink and poisoned-sink, by name", cs)
	}
	h, p := cs[0], cs[1]
	if h.Cluster != "prod" || h.Connect != "main" || h.Type != "sink" || h.State != queue.ConnectRunning ||
		len(h.Tasks) != 1 || h.Tasks[0].State != queue.ConnectRunning || h.Group != "connect-healthy-sink" ||
		h.DLQTopic != "" || strings.Join(h.Topics, ",") != "payments" {
		t.Errorf("healthy sink: %+v", h)
	}
	if p.State != queue.ConnectRunning || len(p.Tasks) != 1 || p.Tasks[0].State != queue.ConnectFailed ||
		p.Tasks[0].Trace != "org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded in error handler" ||
		p.Group != "poisoned-sink-readers" || p.DLQTopic != "orders-dlq" || strings.Join(p.Topics, ",") != "orders" {
		t.Errorf("poisoned sink: %+v", p)
	}
}

// TestParseConnectorsWithoutStatus: a connector deleted while Connect
// answered has no status; it is listed with an error, not dropped, and a
// source has no consumer group.
func TestParseConnectorsWithoutStatus(t *testing.T) {
	body := `{"gone": {"info": {"type": "sink", "config": {}}},
	  "cdc": {"status": {"type": "source", "connector": {"state": "PAUSED"}, "tasks": [{"id": 1, "state": "PAUSED"}, {"id": 0, "state": "PAUSED"}]},
	          "info": {"type": "source", "config": {"topics": ""}}}}`
	cs, err := ParseConnectors([]byte(body), "prod", "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Name != "cdc" || cs[1].Name != "gone" {
		t.Fatalf("connectors %+v", cs)
	}
	if c := cs[0]; c.Type != "source" || c.Group != "" || c.Topics != nil || c.Tasks[0].ID != 0 || c.State != queue.ConnectPaused {
		t.Errorf("source: %+v", c)
	}
	if g := cs[1]; g.Err != "Connect gave no status" {
		t.Errorf("connector without status: %+v", g)
	}
}

// TestConnectorsRequest: a poll is one GET with the configured
// credentials (a token read from its file); Connect's refusal comes back
// with its status and message, not the secret.
func TestConnectorsRequest(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.RequestURI() != "/connectors?expand=status&expand=info" {
			t.Errorf("request %s %s", r.Method, r.URL.RequestURI())
		}
		switch r.Header.Get("Authorization") {
		case "Bearer s3cret":
			_, _ = w.Write([]byte(`{"s": {"status": {"type": "sink", "connector": {"state": "RUNNING"}, "tasks": []}}}`))
		case "Basic cXc6cGFzcw==": // qw:pass
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"error_code": 403, "message": "qw may not list connectors"}`))
		default:
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	read := func(auth config.ConnectAuth) ([]queue.Connector, error) {
		t.Helper()
		c, err := newConnect(config.Connect{Name: "main", URL: srv.URL + "/", Auth: auth})
		if err != nil {
			t.Fatal(err)
		}
		return c.Connectors(context.Background(), "prod")
	}
	cs, err := read(config.ConnectAuth{TokenFile: token})
	if err != nil || len(cs) != 1 || cs[0].Group != "connect-s" {
		t.Errorf("with the token: %+v, %v", cs, err)
	}
	_, err = read(config.ConnectAuth{Username: "qw", Password: "pass"})
	if want := "connect main: list connectors: 403 Forbidden: qw may not list connectors"; err == nil || err.Error() != want {
		t.Errorf("refused: %v, want %s", err, want)
	}
	if _, err = read(config.ConnectAuth{Token: "wrong"}); err == nil || strings.Contains(err.Error(), "wrong") {
		t.Errorf("unauthorized: %v, want an error without the token", err)
	}
	if n := requests.Load(); n != 3 {
		t.Errorf("%d requests for three reads", n)
	}
}
