package rabbitmq

import (
	"slices"
	"testing"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
)

func TestTopicMatch(t *testing.T) {
	tests := []struct {
		pattern, key string
		want         bool
	}{
		{"order.created", "order.created", true},
		{"order.created", "order.paid", false},
		{"order.*", "order.paid", true},
		{"order.*", "order", false},
		{"order.*", "order.paid.eu", false},
		{"order.#", "order", true},
		{"order.#", "order.paid.eu", true},
		{"#", "", true},
		{"#", "a.b.c", true},
		{"*", "", false},
		{"", "", true},
		{"", "a", false},
		{"*.*.eu", "order.paid.eu", true},
		{"#.eu", "eu", true},
		{"#.eu", "order.paid.us", false},
		{"a.#.z", "a.z", true},
		{"a.#.z", "a.b.c.z", true},
		{"a.#.z", "a.b.c.y", false},
		{"#.#.#.#.#.#.#.#.#.#.x", "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.y", false},
		{"*.#", "a", true},
		{"*.#.*", "a", false},
		{"a..b", "a..b", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"~"+tt.key, func(t *testing.T) {
			if got := topicMatch(tt.pattern, tt.key); got != tt.want {
				t.Errorf("topicMatch(%q, %q) = %v, want %v", tt.pattern, tt.key, got, tt.want)
			}
		})
	}
}

func TestEffectiveDeadLetter(t *testing.T) {
	tests := []struct {
		name         string
		args, policy map[string]any
		want         deadLetter
	}{
		{"none", nil, nil, deadLetter{}},
		{
			"arguments",
			map[string]any{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "k"},
			nil,
			deadLetter{exchange: "dlx", routingKey: "k", hasExchange: true, hasKey: true},
		},
		{
			"policy", nil,
			map[string]any{"dead-letter-exchange": "dlx"},
			deadLetter{exchange: "dlx", hasExchange: true},
		},
		{
			"arguments win",
			map[string]any{"x-dead-letter-exchange": "a"},
			map[string]any{"dead-letter-exchange": "p"},
			deadLetter{exchange: "a", hasExchange: true},
		},
		{
			"per key",
			map[string]any{"x-dead-letter-exchange": "a"},
			map[string]any{"dead-letter-exchange": "p", "dead-letter-routing-key": "pk"},
			deadLetter{exchange: "a", routingKey: "pk", hasExchange: true, hasKey: true},
		},
		{
			"default exchange",
			map[string]any{"x-dead-letter-exchange": ""},
			nil,
			deadLetter{hasExchange: true},
		},
		{"not a string", map[string]any{"x-dead-letter-exchange": 5.0}, nil, deadLetter{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := effectiveDeadLetter(tt.args, tt.policy); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDeadLetterTargets(t *testing.T) {
	queues := []string{"src", "dlq", "other", "k1", "fan1", "fan2", "alt.dlq", "e2e.dlq"}
	exchanges := []rabbit.Exchange{
		{Name: "direct", Type: "direct"},
		{Name: "topic", Type: "topic"},
		{Name: "fanout", Type: "fanout"},
		{Name: "headers", Type: "headers"},
		{Name: "withalt", Type: "direct", Arguments: rabbit.Object{"alternate-exchange": "alt"}},
		{Name: "alt", Type: "fanout"},
		{Name: "hop", Type: "topic"},
		{Name: "shop", Type: "direct"},
	}
	b := func(src, dst, key string) rabbit.Binding {
		return rabbit.Binding{Source: src, Destination: dst, DestinationType: "queue", RoutingKey: key}
	}
	bindings := []rabbit.Binding{
		b("", "src", "src"),
		b("shop", "src", "order.created"),
		b("direct", "dlq", "dead"),
		b("direct", "other", "live"),
		b("direct", "k1", "order.created"),
		b("topic", "dlq", "dead.#"),
		b("topic", "other", "live.*"),
		b("fanout", "fan1", ""),
		b("fanout", "fan2", "x"),
		b("headers", "fan1", ""),
		b("withalt", "dlq", "dead"),
		b("alt", "alt.dlq", ""),
		{Source: "topic", Destination: "hop", DestinationType: "exchange", RoutingKey: "dead.hop.#"},
		b("hop", "e2e.dlq", "#"),
		b("fanout", "src", ""), // the source itself is never its own DLQ
	}
	topo := newTopology(queues, exchanges, bindings)
	withKey := func(ex, key string) deadLetter {
		return deadLetter{exchange: ex, routingKey: key, hasExchange: true, hasKey: true}
	}
	tests := []struct {
		name string
		dl   deadLetter
		want []string
	}{
		{"no dead-lettering", deadLetter{}, nil},
		{"direct", withKey("direct", "dead"), []string{"dlq"}},
		{"direct, no binding", withKey("direct", "nothing"), nil},
		{"topic", withKey("topic", "dead.orders.payment"), []string{"dlq"}},
		{"topic through an exchange binding", withKey("topic", "dead.hop.x"), []string{"dlq", "e2e.dlq"}},
		{"fanout", withKey("fanout", "any"), []string{"fan1", "fan2"}},
		{"headers counts every binding", withKey("headers", "any"), []string{"fan1"}},
		{"default exchange", withKey("", "dlq"), []string{"dlq"}},
		{"default exchange, missing queue", withKey("", "gone"), nil},
		{"missing exchange", withKey("nope", "dead"), nil},
		{"alternate exchange when unrouted", withKey("withalt", "unrouted"), []string{"alt.dlq"}},
		{"no alternate when routed", withKey("withalt", "dead"), []string{"dlq"}},
		{"original key from the source's bindings", deadLetter{exchange: "direct", hasExchange: true}, []string{"k1"}},
		{"original key through the default exchange", deadLetter{hasExchange: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := topo.deadLetterTargets("src", tt.dl); !slices.Equal(got, tt.want) {
				t.Errorf("targets %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseQueueRef(t *testing.T) {
	tests := []struct {
		in      string
		want    QueueRef
		wantErr bool
	}{
		{"%2F/orders.dlq", QueueRef{"/", "orders.dlq"}, false},
		{"shop/eu/orders", QueueRef{"shop", "eu/orders"}, false},
		{"a%20b%25/q 100%", QueueRef{"a b%", "q 100%"}, false},
		{"orders", QueueRef{}, true},
		{"/orders", QueueRef{}, true},
		{"shop/", QueueRef{}, true},
		{"%zz/q", QueueRef{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseQueueRef(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("ParseQueueRef(%q) = %+v, %v", tt.in, got, err)
			}
			if err == nil {
				if back, _ := ParseQueueRef(got.String()); back != got {
					t.Errorf("round trip %q → %+v", got.String(), back)
				}
			}
		})
	}
}
