package rabbitmq_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestDialErrors checks what a failed dial says: the broker's refusal of a
// wrong password when it arrives before the deadline (RabbitMQ sends it
// after 3 s), the deadline when that comes first, and a missing vhost as
// queue.ErrNotFound.
func TestDialErrors(t *testing.T) {
	testenv.Rabbit(t)
	bad, err := rabbitmq.New(config.RabbitMQ{Name: "main", URL: "amqp://guest:wrong-password@127.0.0.1:5672/"})
	if err != nil {
		t.Fatal(err)
	}
	dial := func(c *rabbitmq.Cluster, vhost string, timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		conn, err := c.Dial(ctx, vhost, "dial test")
		if err == nil {
			conn.Close()
		}
		return err
	}

	err = dial(bad, "/", 10*time.Second)
	if !rabbitmq.IsAccessRefused(err) || !strings.Contains(err.Error(), "ACCESS_REFUSED") || strings.Contains(err.Error(), "wrong-password") {
		t.Errorf("wrong password, 10 s: %v, want ACCESS_REFUSED without the password", err)
	}
	start := time.Now()
	err = dial(bad, "/", time.Second)
	if !errors.Is(err, context.DeadlineExceeded) || rabbitmq.IsAccessRefused(err) || time.Since(start) > 2*time.Second {
		t.Errorf("wrong password, 1 s: %v after %v, want the deadline within it", err, time.Since(start))
	}

	good, err := rabbitmq.New(config.RabbitMQ{Name: "main", URL: testenv.DefaultAMQPURL})
	if err != nil {
		t.Fatal(err)
	}
	err = dial(good, testenv.Unique("no-such-vhost"), 5*time.Second)
	if !errors.Is(err, queue.ErrNotFound) || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing vhost: %v, want queue.ErrNotFound with the broker's words", err)
	}
	if err := dial(good, "/", 5*time.Second); err != nil {
		t.Errorf("good dial: %v", err)
	}
}
