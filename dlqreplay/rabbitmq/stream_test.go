package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// streamEnv is one test's vhost with a stream DLQ and a Service over it.
// It uses only internal/testenv so it does not depend on the package's
// other test helpers.
type streamEnv struct {
	t   *testing.T
	ch  *amqp.Channel
	svc *dlqreplay.Service
	ref dlqreplay.Ref
}

// newStreamEnv declares queue name in a fresh vhost with args and builds a
// Service whose backend uses the management API only when mgmt is set.
func newStreamEnv(t *testing.T, name string, args amqp.Table, mgmt bool) *streamEnv {
	t.Helper()
	a := testenv.Rabbit(t)
	vh := a.VHost("stream")
	ch := testenv.Channel(t, vh)
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatalf("declare %s: %v", name, err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	mgmtURL := ""
	if mgmt {
		mgmtURL = testenv.ManagementURLWithAuth
	}
	opts := Options{Cluster: access(t, "stream-test", testenv.DefaultAMQPURL, mgmtURL), StreamIdle: 500 * time.Millisecond}
	be, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := dlqreplay.New(dlqreplay.Options{Store: st, Backends: []dlqreplay.Backend{be}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return &streamEnv{
		t: t, ch: ch, svc: svc,
		ref: dlqreplay.Ref{Broker: queue.RabbitMQ, Cluster: "stream-test", VHost: vh, Name: name},
	}
}

// publish appends msgs to the queue and waits for every confirm.
func (e *streamEnv) publish(msgs ...amqp.Publishing) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, m := range msgs {
		dc, err := e.ch.PublishWithDeferredConfirmWithContext(ctx, "", e.ref.Name, false, false, m)
		if err != nil {
			e.t.Fatal(err)
		}
		if ok, err := dc.WaitContext(ctx); !ok || err != nil {
			e.t.Fatalf("publish %s not confirmed: %v", m.MessageId, err)
		}
	}
}

// waitDepth waits until queue.declare reports n messages.
func (e *streamEnv) waitDepth(n int) {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		q, err := e.ch.QueueDeclarePassive(e.ref.Name, false, false, false, false, nil)
		if err != nil {
			e.t.Fatal(err)
		}
		if q.Messages == n {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("queue %s reports %d messages, want %d", e.ref.Name, q.Messages, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (e *streamEnv) browse(after string, limit int) dlqreplay.Page {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := e.svc.Browse(ctx, e.ref.ID(), dlqreplay.BrowseOptions{Limit: limit, After: after})
	if err != nil {
		e.t.Fatalf("browse after %q: %v", after, err)
	}
	return p
}

// streamDead is a message as RabbitMQ dead-letters it from "orders".
func streamDead(id string, i int) amqp.Publishing {
	return amqp.Publishing{
		MessageId: id, Body: fmt.Appendf(nil, `{"n":%d}`, i), ContentType: "application/json",
		Headers: amqp.Table{
			"x-death": []any{amqp.Table{
				"count": int64(1), "reason": "rejected", "queue": "orders", "exchange": "",
				"routing-keys": []any{"orders"}, "time": time.Unix(1_700_000_000+int64(i), 0),
			}},
			"x-first-death-queue": "orders", "x-first-death-reason": "rejected",
		},
	}
}

func pageIDs(p dlqreplay.Page) []string {
	out := make([]string, len(p.Messages))
	for i, m := range p.Messages {
		out[i] = m.ID
	}
	return out
}

var streamArgs = amqp.Table{"x-queue-type": "stream"}

func TestStreamBrowseByOffset(t *testing.T) {
	for _, tc := range []struct {
		name string
		mgmt bool
	}{
		{"type from management api", true},
		{"type probed without management api", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newStreamEnv(t, "orders.dlq", streamArgs, tc.mgmt)
			var want []string
			var msgs []amqp.Publishing
			for i := range 25 {
				id := fmt.Sprintf("m-%02d", i)
				want = append(want, id)
				msgs = append(msgs, streamDead(id, i))
			}
			e.publish(msgs...)
			// queue.declare reports a stream's depth only after a few
			// seconds; a stream that reports one must still be read as a
			// stream (without the management API it once was not).
			e.waitDepth(25)

			read := func() []string {
				t.Helper()
				var got []string
				after := ""
				for _, pg := range []struct {
					size int
					next string
				}{{10, "10"}, {10, "20"}, {5, ""}} {
					p := e.browse(after, 10)
					if len(p.Messages) != pg.size || p.Next != pg.next {
						t.Fatalf("page after %q: %d messages, next %q; want %d, %q", after, len(p.Messages), p.Next, pg.size, pg.next)
					}
					for i, m := range p.Messages {
						off := int64(len(got) + i)
						if m.Position != off {
							t.Errorf("message %s at position %d, want offset %d", m.ID, m.Position, off)
						}
						if m.Death.Source() != "orders" || m.Death.Reason() != "rejected" {
							t.Errorf("message %s death decoded as %q/%q", m.ID, m.Death.Source(), m.Death.Reason())
						}
						if string(m.Body) != fmt.Sprintf(`{"n":%d}`, off) {
							t.Errorf("message %s body %q", m.ID, m.Body)
						}
					}
					if len(p.Groups) != 1 || p.Groups[0].Count != pg.size {
						t.Errorf("page after %q groups %+v, want one of %d", after, p.Groups, pg.size)
					}
					got = append(got, pageIDs(p)...)
					after = p.Next
				}
				// Next is empty at the end, but a page after the last
				// offset is allowed and empty.
				if p := e.browse("25", 10); len(p.Messages) != 0 || p.Next != "" {
					t.Fatalf("page after the end: %v, next %q", pageIDs(p), p.Next)
				}
				return got
			}
			first := read()
			if !slices.Equal(first, want) {
				t.Fatalf("first read %v, want %v", first, want)
			}
			// Browsing removed nothing: a second read sees the same.
			if second := read(); !slices.Equal(second, want) {
				t.Fatalf("second read %v, want %v", second, want)
			}
			// A page can start at any offset.
			if got := pageIDs(e.browse("7", 3)); !slices.Equal(got, want[7:10]) {
				t.Errorf("page after 7: %v, want %v", got, want[7:10])
			}
			// A message without a message-id is named by its offset, and a
			// browse that reached the end resumes where it stopped.
			e.publish(amqp.Publishing{Body: []byte("no id")})
			p := e.browse("25", 10)
			if got := pageIDs(p); !slices.Equal(got, []string{"offset-25"}) || p.Next != "" {
				t.Errorf("page after 25: %v next %q, want [offset-25]", got, p.Next)
			}
		})
	}
}

func TestStreamBrowseEmpty(t *testing.T) {
	for _, mgmt := range []bool{true, false} {
		t.Run("management="+strconv.FormatBool(mgmt), func(t *testing.T) {
			e := newStreamEnv(t, "empty.dlq", streamArgs, mgmt)
			if p := e.browse("", 10); len(p.Messages) != 0 || p.Next != "" {
				t.Fatalf("empty stream page: %v, next %q", pageIDs(p), p.Next)
			}
			if _, err := e.svc.Browse(context.Background(), e.ref.ID(), dlqreplay.BrowseOptions{After: "-1"}); !errors.Is(err, dlqreplay.ErrInvalidRequest) {
				t.Fatalf("after -1: %v, want ErrInvalidRequest", err)
			}
		})
	}
}

func TestStreamJobsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		mgmt bool
		req  dlqreplay.Request
	}{
		{"replay", true, dlqreplay.Request{Action: dlqreplay.ActionReplay, Selection: dlqreplay.Selection{All: true}}},
		{"replay without management api", false, dlqreplay.Request{Action: dlqreplay.ActionReplay, Selection: dlqreplay.Selection{All: true}}},
		{"dry run", true, dlqreplay.Request{Action: dlqreplay.ActionReplay, DryRun: true, Selection: dlqreplay.Selection{All: true}}},
		{"move", true, dlqreplay.Request{Action: dlqreplay.ActionMove, Target: dlqreplay.Target{Name: "elsewhere"}, Selection: dlqreplay.Selection{All: true}}},
		{"delete", false, dlqreplay.Request{Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{IDs: []string{"m-00"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newStreamEnv(t, "orders.dlq", streamArgs, tc.mgmt)
			if _, err := e.ch.QueueDeclare("elsewhere", true, false, false, false, nil); err != nil {
				t.Fatal(err)
			}
			e.publish(streamDead("m-00", 0), streamDead("m-01", 1))
			tc.req.DLQ = e.ref.ID()
			_, err := e.svc.Start(context.Background(), tc.req)
			if !errors.Is(err, dlqreplay.ErrInvalidRequest) {
				t.Fatalf("start %s on a stream: %v, want ErrInvalidRequest", tc.name, err)
			}
			if got := pageIDs(e.browse("", 10)); !slices.Equal(got, []string{"m-00", "m-01"}) {
				t.Fatalf("stream after refused job: %v", got)
			}
		})
	}
}

// TestStreamProbeLeavesOtherQueues checks that, without the management
// API, an empty classic or quorum DLQ is not taken for a stream: it
// browses empty and takes jobs.
func TestStreamProbeLeavesOtherQueues(t *testing.T) {
	for _, tc := range []struct {
		name string
		args amqp.Table
	}{
		{"classic", nil},
		{"quorum", amqp.Table{"x-queue-type": "quorum"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newStreamEnv(t, "plain.dlq", tc.args, false)
			if p := e.browse("", 10); len(p.Messages) != 0 || p.Next != "" {
				t.Fatalf("empty %s queue page: %v, next %q", tc.name, pageIDs(p), p.Next)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r, err := e.svc.Run(ctx, dlqreplay.Request{DLQ: e.ref.ID(), DryRun: true, Selection: dlqreplay.Selection{All: true}})
			if err != nil {
				t.Fatalf("dry run on an empty %s queue: %v", tc.name, err)
			}
			if len(r.Outcomes) != 0 {
				t.Fatalf("dry run outcomes %+v, want none", r.Outcomes)
			}
		})
	}
}
