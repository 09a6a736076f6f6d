package rabbitmq

import (
	"context"
	"net/http"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/conformance"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.World {
		p := newProxy(t)
		return &conformanceWorld{w: newWorld(t, worldOpts{}), proxy: p}
	})
}

// conformanceWorld is the suite's view of a test vhost: work.dlq
// dead-letters from work, and "moved" is the other queue. Services reach
// the broker through a TCP proxy so a fault can cut their connections.
type conformanceWorld struct {
	w     *world
	proxy *toxiproxy.Proxy
}

func (c *conformanceWorld) Service(t *testing.T, maxReplays int) *dlqreplay.Service {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return c.service(t, maxReplays, st, c.proxy)
}

// ServiceOn reaches the broker through a proxy of its own: its crash
// stops that proxy for good, which cuts the service's connections, and
// RabbitMQ gives back what they held unacknowledged.
func (c *conformanceWorld) ServiceOn(t *testing.T, st dlqreplay.Store) (*dlqreplay.Service, func(t *testing.T)) {
	p := newProxy(t)
	return c.service(t, 0, st, p), func(t *testing.T) { p.Stop() }
}

func (c *conformanceWorld) service(t *testing.T, maxReplays int, st dlqreplay.Store, p *toxiproxy.Proxy) *dlqreplay.Service {
	be, err := New(Options{
		Cluster:        access(t, testCluster, "amqp://guest:guest@"+p.Listen+"/", testenv.ManagementURLWithAuth),
		ConfirmTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := dlqreplay.New(dlqreplay.Options{
		Store: st, Backends: []dlqreplay.Backend{be}, MaxReplays: maxReplays,
		FlushInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc
}

func (c *conformanceWorld) DLQ() string    { return c.w.dlq }
func (c *conformanceWorld) Source() string { return "work" }

func (c *conformanceWorld) Other() string {
	c.w.declare("moved", nil)
	return "moved"
}

func (c *conformanceWorld) DeadLetter(t *testing.T, msgs ...conformance.Message) {
	pubs := make([]amqp.Publishing, len(msgs))
	for i, m := range msgs {
		extra := amqp.Table{conformance.TestIDHeader: m.ID, "tenant": m.Tenant}
		if m.ReplayCount > 0 {
			extra[queue.HeaderReplayCount] = int64(m.ReplayCount)
		}
		pubs[i] = deadLetter(m.ID, []byte(`{"id":"`+m.ID+`"}`), "rejected", extra)
		if m.Origin != "" {
			death := pubs[i].Headers["x-death"].([]any)[0].(amqp.Table)
			death["queue"], death["routing-keys"] = m.Origin, []any{m.Origin}
			pubs[i].Headers["x-first-death-queue"] = m.Origin
		}
	}
	c.w.publish("", "work.dlq", pubs...)
}

func (c *conformanceWorld) InDLQ(t *testing.T) []string { return c.w.peekIDs("work.dlq") }

func (c *conformanceWorld) Arrived(t *testing.T, name string) []conformance.Arrival {
	var out []conformance.Arrival
	for _, d := range c.w.drain(name) {
		// The count is decimal text on every broker (an AMQP long-long
		// before issue 21, which would read as "" here).
		n, _ := d.Headers[queue.HeaderReplayCount].(string)
		id, _ := d.Headers[queue.HeaderReplayID].(string)
		out = append(out, conformance.Arrival{ID: d.MessageId, ReplayCount: n, ReplayID: id})
	}
	return out
}

// Faults: the connection cut under the job, and the target filling up (a
// max-length policy with reject-publish nacks every publish past it; the
// limit is set above the depth, since a policy below it would drop
// messages that already arrived).
func (c *conformanceWorld) Faults() []conformance.Fault {
	policy := testenv.APIPath("policies", c.w.vh, "qw-full")
	return []conformance.Fault{
		{
			Name:   "connection cut by a TCP proxy",
			Inject: func(t *testing.T) { c.proxy.Stop() },
			Heal: func(t *testing.T) {
				if err := c.proxy.Start(); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			Name: "target full",
			Inject: func(t *testing.T) {
				c.w.a.Do(http.MethodPut, policy, map[string]any{
					"pattern": "^work$", "apply-to": "queues",
					"definition": map[string]any{"max-length": c.w.depth("work") + 50, "overflow": "reject-publish"},
				})
			},
			Heal: func(t *testing.T) { c.w.a.Do(http.MethodDelete, policy, nil) },
		},
	}
}
