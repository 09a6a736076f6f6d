package rabbitmq

import (
	"context"
	"errors"
	"slices"
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

// readTopology fills v's exchanges and bindings for the vhosts where some
// queue dead-letters somewhere routing must resolve.
func (s *Source) readTopology(ctx context.Context, v *view) error {
	var need []string
	for _, q := range v.queues {
		if needsTopology(q) && !slices.Contains(need, q.VHost) {
			need = append(need, q.VHost)
		}
	}
	if len(need) == 0 {
		return nil
	}
	scopes := need
	if len(need) > perVHostTopologyMax {
		scopes = []string{""} // "" reads every vhost at once
	}
	for _, vh := range scopes {
		xs, err := s.mgmt.exchanges(ctx, vh)
		if err != nil {
			return err
		}
		v.exchanges = append(v.exchanges, xs...)
	}
	if ok, err := s.readTargetedBindings(ctx, v); ok || err != nil {
		return err
	}
	for _, vh := range scopes {
		bs, err := s.mgmt.bindings(ctx, vh)
		if err != nil {
			return err
		}
		v.bindings = append(v.bindings, bs...)
	}
	return nil
}

// needsTopology reports whether resolving q's dead-letter target needs
// exchanges or bindings: all cases but the default exchange with a routing
// key, which names the target queue.
func needsTopology(q mgmtQueue) bool {
	if !deadLetters(q) {
		return false
	}
	dl := effectiveDeadLetter(q.Arguments, q.EffectivePolicy)
	return dl.exchange != "" || !dl.hasKey
}

// readTargetedBindings reads only the bindings routing needs, following
// exchange-to-exchange bindings and alternate exchanges. It returns false,
// having read nothing into v, when that would take more than
// maxTargetedBindingRequests requests.
func (s *Source) readTargetedBindings(ctx context.Context, v *view) (bool, error) {
	types := map[[2]string]exchangeInfo{}
	for _, x := range v.exchanges {
		alt, _ := x.Arguments["alternate-exchange"].(string)
		types[[2]string{x.VHost, x.Name}] = exchangeInfo{typ: x.Type, alternate: alt}
	}
	var todo []bindingRequest
	add := func(r bindingRequest) {
		if !slices.Contains(todo, r) && (r.ofQueue || r.name != "") {
			todo = append(todo, r)
		}
	}
	for _, q := range v.queues {
		if !needsTopology(q) {
			continue
		}
		dl := effectiveDeadLetter(q.Arguments, q.EffectivePolicy)
		add(bindingRequest{vhost: q.VHost, name: dl.exchange})
		typ := types[[2]string{q.VHost, dl.exchange}].typ
		if !dl.hasKey && typ != "fanout" && typ != "headers" {
			add(bindingRequest{vhost: q.VHost, name: q.Name, ofQueue: true})
		}
	}
	var bindings []mgmtBinding
	for i := 0; i < len(todo); i++ {
		if len(todo) > maxTargetedBindingRequests {
			return false, nil
		}
		r := todo[i]
		bs, err := s.mgmt.targetedBindings(ctx, r)
		if errors.Is(err, errNotFound) {
			continue // a missing DLX drops dead letters; a deleted queue has none
		}
		if err != nil {
			return false, err
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
	v.bindings = append(v.bindings, slices.Compact(bindings)...)
	return true, nil
}

func compareBindings(a, b mgmtBinding) int {
	for _, c := range [][2]string{
		{a.VHost, b.VHost}, {a.Source, b.Source}, {a.DestinationType, b.DestinationType},
		{a.Destination, b.Destination}, {a.RoutingKey, b.RoutingKey},
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
