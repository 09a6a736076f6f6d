package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
)

const (
	benchVHost = "qw-bench-10k"
	mgmtURL    = "http://127.0.0.1:15672"
	promURL    = "http://127.0.0.1:15692"
	amqpURL    = "amqp://guest:guest@127.0.0.1:5672/"
	quorum     = 200 // quorum queues among the queues
	dlxSources = 500 // classic queues under the dead-letter policy
	holding    = 543 // about this many queues hold one message (every n/holding-th)
	declarers  = 8   // AMQP channels declaring in parallel
)

type admin struct{ hc *http.Client }

func newAdmin() *admin { return &admin{hc: &http.Client{Timeout: 60 * time.Second}} }

func (a *admin) do(method, path string, body any) error {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, mgmtURL+path, r)
	if err != nil {
		return err
	}
	req.SetBasicAuth("guest", "guest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	gone := method == http.MethodDelete && resp.StatusCode == http.StatusNotFound // deleting what is not there
	if resp.StatusCode >= 300 && !gone {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s %s: %s %s", method, path, resp.Status, b)
	}
	return nil
}

func (a *admin) deleteVHost(vh string) error {
	return a.do(http.MethodDelete, rabbit.APIPath("vhosts", vh), nil)
}

// seed (re)creates the vhost with its queues, policy and messages, and
// waits until the management API lists every queue.
func seed(ctx context.Context, a *admin, n int) error {
	if err := a.deleteVHost(benchVHost); err != nil {
		return err
	}
	steps := []struct {
		path string
		body any
	}{
		{rabbit.APIPath("vhosts", benchVHost), map[string]any{}},
		{rabbit.APIPath("permissions", benchVHost, "guest"), map[string]string{"configure": ".*", "write": ".*", "read": ".*"}},
		{rabbit.APIPath("policies", benchVHost, "dlx"), map[string]any{
			"pattern": `^src\.`, "apply-to": "queues",
			"definition": map[string]any{"dead-letter-exchange": "dlx"},
		}},
	}
	for _, s := range steps {
		if err := a.do(http.MethodPut, s.path, s.body); err != nil {
			return err
		}
	}
	if err := declare(ctx, n); err != nil {
		return err
	}
	return waitListed(ctx, n)
}

// name is queue i's name: the first dlxSources fall under the policy, the
// last quorum ones are quorum queues.
func name(i, n int) string {
	switch {
	case i < dlxSources:
		return fmt.Sprintf("src.%05d", i)
	case i >= n-quorum:
		return fmt.Sprintf("quorum.%05d", i)
	}
	return fmt.Sprintf("q.%05d", i)
}

func declare(ctx context.Context, n int) error {
	u := amqpURL + url.PathEscape(benchVHost)
	conn, err := amqp.Dial(u)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := setupDLX(conn); err != nil {
		return err
	}
	errs := make([]error, declarers)
	var wg sync.WaitGroup
	for w := range declarers {
		wg.Go(func() { errs[w] = declareShare(ctx, conn, w, n) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func setupDLX(conn *amqp.Connection) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if err := ch.ExchangeDeclare("dlx", "fanout", true, false, false, false, nil); err != nil {
		return err
	}
	if _, err := ch.QueueDeclare("dead", true, false, false, false, nil); err != nil {
		return err
	}
	if err := ch.QueueBind("dead", "", "dlx", false, nil); err != nil {
		return err
	}
	return ch.Publish("", "dead", false, false, amqp.Publishing{Body: []byte("dead")})
}

// declareShare declares every declarers-th queue and publishes to the
// ones that hold a message; the channel is closed (and so flushed) last.
func declareShare(ctx context.Context, conn *amqp.Connection, w, n int) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	for i := w; i < n-1; i += declarers { // the DLQ "dead" is one of the n
		if ctx.Err() != nil {
			return ctx.Err()
		}
		args := amqp.Table{}
		q := name(i, n)
		if i >= n-quorum {
			args["x-queue-type"] = "quorum"
		}
		// Wait for each answer only for quorum queues, which take a
		// Raft round; classic declarations are pipelined.
		if err := declareOne(ch, q, args, i >= n-quorum); err != nil {
			return err
		}
		if i%(n/holding) == 0 {
			if err := ch.Publish("", q, false, false, amqp.Publishing{Body: []byte("x")}); err != nil {
				return err
			}
		}
	}
	return nil
}

func declareOne(ch *amqp.Channel, q string, args amqp.Table, wait bool) error {
	if wait {
		_, err := ch.QueueDeclare(q, true, false, false, false, args)
		return err
	}
	_, err := ch.QueueDeclare(q, true, false, false, true, args)
	return err
}

// waitListed waits until the management API lists n queues in the vhost.
func waitListed(ctx context.Context, n int) error {
	c, err := rabbit.NewClient(mgmtURL, "guest", "guest", nil)
	if err != nil {
		return err
	}
	for {
		qs, err := c.Queues(ctx, benchVHost)
		if err == nil && len(qs) >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d queues listed (%d so far): %w", n, len(qs), ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
}
