package nats

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/queuewatch/queuewatch/config"
)

func startServer(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	opts.Port = -1
	opts.JetStream = true
	opts.StoreDir = t.TempDir()
	opts.NoLog, opts.NoSigs = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(s.Shutdown)
	return s
}

func TestConnectWithCredentials(t *testing.T) {
	s := startServer(t, &server.Options{Username: "qw", Password: "s3cret"})
	url := strings.Replace(s.ClientURL(), "nats://", "nats://qw:s3cret@", 1)
	c, err := New(config.NATS{Name: "n", URL: url})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.URL(), "s3cret") {
		t.Errorf("URL() shows the password: %s", c.URL())
	}
	nc, js, err := c.Connect(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := js.AccountInfo(context.Background()); err != nil {
		t.Errorf("account info: %v", err)
	}

	c, _ = New(config.NATS{Name: "n", URL: s.ClientURL(), User: "qw", Password: "wrong"})
	if _, _, err := c.Connect(context.Background(), "test"); err == nil || !strings.Contains(err.Error(), "nats n: connect") {
		t.Errorf("wrong password: err = %v", err)
	}
}
