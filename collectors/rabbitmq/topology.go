package rabbitmq

import (
	"slices"
	"strings"
	"time"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/queue"
)

// deadLetter is a queue's effective dead-letter settings.
type deadLetter struct {
	exchange    string
	routingKey  string
	hasExchange bool
	hasKey      bool
}

// effectiveDeadLetter resolves the dead-letter exchange and routing key the
// way the broker does: each key separately, from the queue arguments when
// set there, else from the effective policy. So a policy's exchange combines
// with an argument's routing key.
func effectiveDeadLetter(args, policy map[string]any) deadLetter {
	var dl deadLetter
	dl.exchange, dl.hasExchange = stringSetting(args, policy, "x-dead-letter-exchange", "dead-letter-exchange")
	dl.routingKey, dl.hasKey = stringSetting(args, policy, "x-dead-letter-routing-key", "dead-letter-routing-key")
	return dl
}

func stringSetting(args, policy map[string]any, argKey, policyKey string) (string, bool) {
	if v, ok := args[argKey].(string); ok {
		return v, true
	}
	v, ok := policy[policyKey].(string)
	return v, ok
}

// exchangeInfo is what routing needs to know about an exchange.
type exchangeInfo struct {
	typ       string
	alternate string // alternate-exchange argument, "" if none
}

// topology is one vhost's queues, exchanges and bindings.
type topology struct {
	queues    map[string]bool
	exchanges map[string]exchangeInfo
	bySource  map[string][]rabbit.Binding // bindings by source exchange
	byQueue   map[string][]rabbit.Binding // bindings by destination queue
}

func newTopology(queues []string, exchanges []rabbit.Exchange, bindings []rabbit.Binding) *topology {
	t := &topology{
		queues:    make(map[string]bool, len(queues)),
		exchanges: make(map[string]exchangeInfo, len(exchanges)),
		bySource:  map[string][]rabbit.Binding{},
		byQueue:   map[string][]rabbit.Binding{},
	}
	for _, q := range queues {
		t.queues[q] = true
	}
	for _, x := range exchanges {
		alt, _ := x.Arguments["alternate-exchange"].(string)
		t.exchanges[x.Name] = exchangeInfo{typ: x.Type, alternate: alt}
	}
	for _, b := range bindings {
		t.bySource[b.Source] = append(t.bySource[b.Source], b)
		if b.DestinationType == "queue" {
			t.byQueue[b.Destination] = append(t.byQueue[b.Destination], b)
		}
	}
	return t
}

// deadLetterTargets returns the queues that receive what queue q
// dead-letters, sorted, never q itself.
//
// Example: q "orders" bound to exchange "shop" with key "order.created",
// with x-dead-letter-exchange "dlx" (a topic exchange) and no routing key;
// "orders.dlq" is bound to "dlx" with "order.#". The message keeps its
// original key, assumed to be "orders" (default-exchange publish) or
// "order.created" (the binding), and "order.created" matches "order.#", so
// the result is ["orders.dlq"].
func (t *topology) deadLetterTargets(q string, dl deadLetter) []string {
	if !dl.hasExchange {
		return nil
	}
	keys := []string{dl.routingKey}
	if !dl.hasKey {
		keys = t.originalKeys(q)
	}
	out := map[string]bool{}
	for _, k := range keys {
		t.route(dl.exchange, k, map[string]bool{}, out)
	}
	delete(out, q)
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// originalKeys are the routing keys messages in q are assumed to carry: its
// name (publishes through the default exchange) and its binding keys.
func (t *topology) originalKeys(q string) []string {
	keys := []string{q}
	for _, b := range t.byQueue[q] {
		if b.Source != "" && !slices.Contains(keys, b.RoutingKey) {
			keys = append(keys, b.RoutingKey)
		}
	}
	return keys
}

// route adds to out the queues a message with key published to exchange ex
// reaches, following exchange-to-exchange bindings and alternate exchanges.
func (t *topology) route(ex, key string, seen, out map[string]bool) {
	if ex == "" {
		if t.queues[key] {
			out[key] = true
		}
		return
	}
	if seen[ex] {
		return
	}
	seen[ex] = true
	info, ok := t.exchanges[ex]
	if !ok {
		return // the broker drops dead letters sent to a missing exchange
	}
	routed := false
	for _, b := range t.bySource[ex] {
		if !bindingMatches(info.typ, b.RoutingKey, key) {
			continue
		}
		routed = true
		if b.DestinationType == "exchange" {
			t.route(b.Destination, key, seen, out)
		} else {
			out[b.Destination] = true
		}
	}
	if !routed && info.alternate != "" {
		t.route(info.alternate, key, seen, out)
	}
}

// bindingMatches reports whether a binding with bindingKey on an exchange of
// type typ takes a message with routing key key. Headers exchanges match on
// message headers, which are unknown here, so every binding counts, as for
// fanout and plugin exchange types.
func bindingMatches(typ, bindingKey, key string) bool {
	switch typ {
	case "direct":
		return bindingKey == key
	case "topic":
		return topicMatch(bindingKey, key)
	}
	return true
}

// topicMatch reports whether an AMQP topic pattern matches a routing key.
// Words are separated by dots; "*" matches exactly one word and "#" zero or
// more. An empty key has no words, as in the broker.
//
// Example: "order.*.eu" matches "order.paid.eu"; "order.#" matches "order"
// and "order.paid.eu"; "*" does not match "".
func topicMatch(pattern, key string) bool {
	p, k := words(pattern), words(key)
	// m[j] is whether p[i:] matches k[j:], built from the last pattern word
	// back, so "#.#.#" patterns cost len(p)*len(k), not exponential time.
	m := make([]bool, len(k)+1)
	m[len(k)] = true
	next := make([]bool, len(k)+1)
	for i := len(p) - 1; i >= 0; i-- {
		for j := len(k); j >= 0; j-- {
			switch {
			case p[i] == "#":
				next[j] = m[j] || (j < len(k) && next[j+1])
			case j == len(k):
				next[j] = false
			case p[i] == "*" || p[i] == k[j]:
				next[j] = m[j+1]
			default:
				next[j] = false
			}
		}
		m, next = next, m
	}
	return m[0]
}

func words(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// setLimits sets q's effective message TTL, length limits and overflow
// from the queue's arguments and its effective policy the way the broker
// combines them: for a numeric limit set in both, the lower applies; the
// overflow argument wins over the policy's, and drop-head is the default.
func setLimits(q *queue.Queue, args, policy map[string]any) {
	ttl := numberSetting(args, policy, "x-message-ttl", "message-ttl")
	q.MessageTTL = time.Duration(ttl) * time.Millisecond
	q.MaxLength = numberSetting(args, policy, "x-max-length", "max-length")
	q.MaxLengthBytes = numberSetting(args, policy, "x-max-length-bytes", "max-length-bytes")
	overflow, ok := stringSetting(args, policy, "x-overflow", "overflow")
	q.DropHead = !ok || overflow == "drop-head"
}

// numberSetting is the lower of a numeric argument and policy key, 0 when
// neither is set (or set to a negative number, which the broker refuses).
func numberSetting(args, policy map[string]any, argKey, policyKey string) int64 {
	var out int64
	for _, v := range []any{args[argKey], policy[policyKey]} {
		n, ok := integer(v)
		if ok && n >= 0 && (out == 0 || n < out) {
			out = n
		}
	}
	return out
}

// integer reads a number as the management API's JSON (float64) or an
// AMQP table (an integer type) gives it.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(n), true
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	}
	return 0, false
}
