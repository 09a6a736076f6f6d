package rabbitmq

import (
	"context"
	"errors"
	"slices"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
)

// Topology reading budgets. Exchanges are few and listed whole. Bindings
// are dominated by one default-exchange binding per queue (1 MB with
// 10,000 queues), so when few requests suffice, only the bindings of the
// dead-letter exchanges and of sources without a dead-letter routing key
// are read; beyond maxTargetedBindingRequests, all bindings are listed,
// per vhost for up to perVHostTopologyMax vhosts, else cluster-wide.
const (
	maxTargetedBindingRequests = 8
	perVHostTopologyMax        = 2
)

// bindingRequest is one targeted bindings read: the bindings whose source is
// an exchange, or those whose destination is a queue.
type bindingRequest struct {
	vhost, name string
	ofQueue     bool
}

// routed is a queue whose dead-letter target takes exchanges or bindings to
// resolve. A poll's routed queues decide which topology it reads.
type routed struct {
	vhost, name string
	dl          deadLetter
}

// routedQueues lists the queues of qs whose dead-letter routing needs
// topology, in order.
func routedQueues(qs []rabbit.Queue) []routed {
	var rs []routed
	for _, q := range qs {
		if needsTopology(q) {
			rs = append(rs, routed{vhost: q.VHost, name: q.Name, dl: effectiveDeadLetter(q.Arguments, q.EffectivePolicy)})
		}
	}
	return rs
}

// topologyRead is the outcome of one readTopology.
type topologyRead struct {
	exchanges []rabbit.Exchange
	bindings  []rabbit.Binding
	err       error
}

// readTopologyEarly starts reading the topology that rs need, for use if
// the queue listing running meanwhile finds the same routed queues. The
// channel is buffered, so an answer nobody waits for is dropped.
func (s *Source) readTopologyEarly(ctx context.Context, rs []routed) <-chan topologyRead {
	out := make(chan topologyRead, 1)
	go func() {
		var r topologyRead
		r.exchanges, r.bindings, r.err = s.readTopology(ctx, rs)
		out <- r
	}()
	return out
}

// readTopology reads the exchanges and bindings for the vhosts of rs.
func (s *Source) readTopology(ctx context.Context, rs []routed) ([]rabbit.Exchange, []rabbit.Binding, error) {
	var need []string
	for _, r := range rs {
		if !slices.Contains(need, r.vhost) {
			need = append(need, r.vhost)
		}
	}
	if len(need) == 0 {
		return nil, nil, nil
	}
	scopes := need
	if len(need) > perVHostTopologyMax {
		scopes = []string{""} // "" reads every vhost at once
	}
	var exchanges []rabbit.Exchange
	for _, vh := range scopes {
		xs, err := s.mgmt.Exchanges(ctx, vh)
		if err != nil {
			return nil, nil, err
		}
		exchanges = append(exchanges, xs...)
	}
	if bs, ok, err := s.readTargetedBindings(ctx, rs, exchanges); ok || err != nil {
		return exchanges, bs, err
	}
	var bindings []rabbit.Binding
	for _, vh := range scopes {
		bs, err := s.mgmt.Bindings(ctx, vh)
		if err != nil {
			return nil, nil, err
		}
		bindings = append(bindings, bs...)
	}
	return exchanges, bindings, nil
}

// needsTopology reports whether resolving q's dead-letter target needs
// exchanges or bindings: all cases but the default exchange with a routing
// key, which names the target queue.
func needsTopology(q rabbit.Queue) bool {
	if !deadLetters(q) {
		return false
	}
	dl := effectiveDeadLetter(q.Arguments, q.EffectivePolicy)
	return dl.exchange != "" || !dl.hasKey
}

// readTargetedBindings reads only the bindings routing needs, following
// exchange-to-exchange bindings and alternate exchanges. It returns false
// when that would take more than maxTargetedBindingRequests requests.
func (s *Source) readTargetedBindings(ctx context.Context, rs []routed, exchanges []rabbit.Exchange) ([]rabbit.Binding, bool, error) {
	types := map[[2]string]exchangeInfo{}
	for _, x := range exchanges {
		alt, _ := x.Arguments["alternate-exchange"].(string)
		types[[2]string{x.VHost, x.Name}] = exchangeInfo{typ: x.Type, alternate: alt}
	}
	var todo []bindingRequest
	add := func(r bindingRequest) {
		if !slices.Contains(todo, r) && (r.ofQueue || r.name != "") {
			todo = append(todo, r)
		}
	}
	for _, r := range rs {
		add(bindingRequest{vhost: r.vhost, name: r.dl.exchange})
		typ := types[[2]string{r.vhost, r.dl.exchange}].typ
		if !r.dl.hasKey && typ != "fanout" && typ != "headers" {
			add(bindingRequest{vhost: r.vhost, name: r.name, ofQueue: true})
		}
	}
	var bindings []rabbit.Binding
	for i := 0; i < len(todo); i++ {
		if len(todo) > maxTargetedBindingRequests {
			return nil, false, nil
		}
		r := todo[i]
		bs, err := s.readBindings(ctx, r)
		if errors.Is(err, rabbit.ErrNotFound) {
			continue // a missing DLX drops dead letters; a deleted queue has none
		}
		if err != nil {
			return nil, false, err
		}
		bindings = append(bindings, bs...)
		if r.ofQueue {
			continue
		}
		if alt := types[[2]string{r.vhost, r.name}].alternate; alt != "" {
			add(bindingRequest{vhost: r.vhost, name: alt})
		}
		for _, b := range bs {
			if b.DestinationType == "exchange" {
				add(bindingRequest{vhost: r.vhost, name: b.Destination})
			}
		}
	}
	// A queue's bindings and its DLX's may overlap.
	slices.SortFunc(bindings, compareBindings)
	return slices.Compact(bindings), true, nil
}

// readBindings reads the bindings r asks for.
func (s *Source) readBindings(ctx context.Context, r bindingRequest) ([]rabbit.Binding, error) {
	if r.ofQueue {
		return s.mgmt.QueueBindings(ctx, r.vhost, r.name)
	}
	return s.mgmt.ExchangeBindings(ctx, r.vhost, r.name)
}

func compareBindings(a, b rabbit.Binding) int {
	for _, c := range [][2]string{
		{a.VHost, b.VHost},
		{a.Source, b.Source},
		{a.DestinationType, b.DestinationType},
		{a.Destination, b.Destination},
		{a.RoutingKey, b.RoutingKey},
	} {
		if c[0] != c[1] {
			if c[0] < c[1] {
				return -1
			}
			return 1
		}
	}
	return 0
}
