package rabbitmq

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/config"
)

func TestDeliveryLimit(t *testing.T) {
	tests := []struct {
		name         string
		args, policy map[string]any
		want         int64
		ok           bool
	}{
		{"none", nil, nil, 0, false},
		{"argument", map[string]any{"x-delivery-limit": float64(5)}, nil, 5, true},
		{"amqp argument", map[string]any{"x-delivery-limit": int32(7)}, nil, 7, true},
		{"policy", nil, map[string]any{"delivery-limit": float64(3)}, 3, true},
		{"lower policy wins", map[string]any{"x-delivery-limit": float64(10)}, map[string]any{"delivery-limit": float64(3)}, 3, true},
		{"lower argument wins", map[string]any{"x-delivery-limit": float64(2)}, map[string]any{"delivery-limit": float64(3)}, 2, true},
		{"zero is a limit", map[string]any{"x-delivery-limit": float64(0)}, map[string]any{"delivery-limit": float64(3)}, 0, true},
		{"negative ignored", map[string]any{"x-delivery-limit": float64(-1)}, nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := DeliveryLimit(tt.args, tt.policy)
			if got != tt.want || ok != tt.ok {
				t.Errorf("DeliveryLimit = %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestDeaths(t *testing.T) {
	died := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	published := died.Add(-time.Hour)
	d := &amqp.Delivery{Timestamp: published, Headers: amqp.Table{"x-death": []any{
		"not a table",
		amqp.Table{"count": int64(2), "reason": "rejected", "queue": "orders", "exchange": "shop", "time": died, "routing-keys": []any{"order.paid", 7}},
		amqp.Table{"count": int64(1), "reason": "expired", "queue": "retry"},
	}}}
	deaths := Deaths(d.Headers)
	if len(deaths) != 2 {
		t.Fatalf("deaths %+v, want 2", deaths)
	}
	first := deaths[0]
	if first.Queue != "orders" || first.Reason != "rejected" || first.Exchange != "shop" || first.Count != 2 ||
		!first.Time.Equal(died) || len(first.RoutingKeys) != 1 || first.RoutingKeys[0] != "order.paid" {
		t.Errorf("first death %+v", first)
	}
	if at, ok := DeadLetteredAt(d); !ok || !at.Equal(died) {
		t.Errorf("DeadLetteredAt = %v, %v; want the death time %v", at, ok, died)
	}
	if at, ok := DeadLetteredAt(&amqp.Delivery{Timestamp: published}); !ok || !at.Equal(published) {
		t.Errorf("without x-death: %v, %v; want the timestamp %v", at, ok, published)
	}
	if _, ok := DeadLetteredAt(&amqp.Delivery{}); ok {
		t.Error("a message with neither x-death nor timestamp has a time")
	}
}

// credentialServer answers /api/whoami and /api/queues/{vh}/{q}, and
// records the user of each request.
func credentialServer(t *testing.T, srv func(http.Handler) *httptest.Server) (*httptest.Server, *[]string) {
	t.Helper()
	var users []string
	s := srv(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _, _ := r.BasicAuth()
		users = append(users, u)
		switch r.URL.EscapedPath() {
		case "/api/whoami":
			_, _ = w.Write([]byte(`{"name":"` + u + `"}`))
		case "/api/queues/a%2Fb/q%25%20%E2%98%83":
			_, _ = w.Write([]byte(`{"name":"q% ☃","vhost":"a/b","type":"quorum","arguments":{"x-delivery-limit":5},` +
				`"effective_policy_definition":[],"consumer_details":[{"consumer_tag":"queuewatch-job-1"}]}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"Object Not Found","reason":"Not Found"}`))
		}
	}))
	t.Cleanup(s.Close)
	return s, &users
}

// TestManagementCredentials checks which credentials the management API
// gets: management_username/password, else the AMQP URL's, else the
// management URL's own.
func TestManagementCredentials(t *testing.T) {
	srv, users := credentialServer(t, httptest.NewServer)
	withUser := strings.Replace(srv.URL, "http://", "http://inurl:pw@", 1)
	tests := []struct {
		cfg  config.RabbitMQ
		want string
	}{
		{config.RabbitMQ{URL: "amqp://app:pw@h/", ManagementURL: srv.URL, ManagementUsername: "mon", ManagementPassword: "x"}, "mon"},
		{config.RabbitMQ{URL: "amqp://app:pw@h/", ManagementURL: withUser}, "app"},
		{config.RabbitMQ{URL: "amqp://h/", ManagementURL: withUser}, "inurl"},
	}
	for _, tt := range tests {
		c, err := New(tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		*users = nil
		if err := c.Management().WhoAmI(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(*users) != 1 || (*users)[0] != tt.want {
			t.Errorf("%+v: user %v, want %s", tt.cfg, *users, tt.want)
		}
	}
}

// TestManagementTLS checks that the management client trusts the
// configured CA and nothing else.
func TestManagementTLS(t *testing.T) {
	srv, _ := credentialServer(t, httptest.NewTLSServer)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	plain, err := New(config.RabbitMQ{Name: "c", URL: "amqps://u:p@127.0.0.1/", ManagementURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Management().WhoAmI(ctx); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v, want a certificate error", err)
	}
	withCA, err := New(config.RabbitMQ{
		Name: "c", URL: "amqps://u:p@127.0.0.1/", ManagementURL: srv.URL,
		TLS: config.TLS{Enabled: true, CAFile: ca},
	})
	if err != nil {
		t.Fatal(err)
	}
	q, err := withCA.Management().Queue(ctx, "a/b", "q% ☃")
	if err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	if limit, ok := q.DeliveryLimit(); q.Type != TypeQuorum || !ok || limit != 5 ||
		len(q.ConsumerDetails) != 1 || q.ConsumerDetails[0].Tag != "queuewatch-job-1" {
		t.Errorf("queue %+v", q)
	}
	_, err = withCA.Management().Queue(ctx, "a/b", "gone")
	var se *StatusError
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &se) || se.Code != http.StatusNotFound || strings.Contains(err.Error(), "u:p") {
		t.Errorf("missing queue: %v, want a 404 StatusError", err)
	}
}

func TestNewRefusesBadURLs(t *testing.T) {
	for _, cfg := range []config.RabbitMQ{
		{Name: "c", URL: "http://x"},
		{Name: "c", URL: "amqp://x/", ManagementURL: "ftp://x"},
		{Name: "c", URL: "amqp://x/", TLS: config.TLS{Enabled: true, CAFile: "/nonexistent/ca.pem"}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted it", cfg)
		}
	}
}
