package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
)

// DefaultListEvery is how often a poll lists the queues through the
// management API while rabbitmq_prometheus serves the depths: every fifth
// poll. A listing of 10,000 queues costs the node 9 to 17 times the
// plugin's scrape (docs/performance.md), and the status window (10 polls
// by default) still holds two listings, which rates and stall need.
const DefaultListEvery = 5

// pluginState is what the source remembers between polls to read depths
// from rabbitmq_prometheus instead of the management listing.
type pluginState struct {
	// last is the last management listing (with its topology), which
	// plugin polls update with the plugin's depths and consumers.
	last *view
	// sinceList counts the polls since last was read.
	sinceList int
	// retryIn counts down the listings until the plugin is tried again
	// after it failed or could not cover every queue.
	retryIn int
	// serving tells whether the last poll was served by the plugin and
	// tried whether it was ever asked, so that changes of path are
	// logged once.
	serving, tried bool
}

func (s *Source) listEvery() int {
	if s.opts.ListEvery > 0 {
		return s.opts.ListEvery
	}
	return DefaultListEvery
}

// readView is this poll's view of the queues. While rabbitmq_prometheus
// answers for every queue, depths and consumers come from it on every poll,
// and the management API lists the queues only every listEvery-th poll or
// when the plugin shows queues come or go; the other polls reuse the last
// listing for the rest. Listing polls take the plugin's depths too, so a
// queue's depths form one series: the plugin reads the queues' statistics
// as they are emitted, the management API as its agent last collected
// them, up to five seconds apart.
func (s *Source) readView(ctx context.Context, now time.Time) (*view, error) {
	s.mu.Lock()
	st := s.plugin
	s.mu.Unlock()
	var d *rabbit.Depths
	if s.exporter != nil && st.retryIn == 0 {
		d = s.scrape(ctx)
	}
	if d != nil && st.last != nil && st.sinceList+1 < s.listEvery() {
		v, why := mergeDepths(st.last, d)
		if v != nil {
			s.mu.Lock()
			s.plugin.sinceList++
			s.mu.Unlock()
			return v, nil
		}
		if why != errSetChanged {
			s.pluginUnusable(why)
			d = nil
		}
	}
	v, err := s.readManagement(ctx)
	if err != nil {
		return s.withoutListing(ctx, st.last, d, err)
	}
	v.listedAt = now
	v.sources = dlqSources(v) // once per listing, shared by the polls until the next
	s.mu.Lock()
	s.plugin.last, s.plugin.sinceList = v, 0
	if s.plugin.retryIn > 0 {
		s.plugin.retryIn--
	}
	s.mu.Unlock()
	if d == nil {
		return v, nil
	}
	m, why := mergeDepths(v, d)
	switch {
	case m != nil:
		return m, nil
	case why != errSetChanged: // a queue on another node
		s.pluginUnusable(why)
	}
	return v, nil // queues came or went between the scrape and the listing
}

// withoutListing is the last listing with the plugin's depths when a due
// listing failed, marked partial: every queue keeps its depths while the
// management API is down, its type, policies and counters as of that
// listing. Without the plugin's answer, or when the API refused the
// credentials, the listing's error stands.
func (s *Source) withoutListing(ctx context.Context, last *view, d *rabbit.Depths, err error) (*view, error) {
	if d == nil || last == nil || ctx.Err() != nil || errors.Is(err, rabbit.ErrUnauthorized) {
		return nil, err
	}
	v, _ := mergeDepths(last, d)
	if v == nil {
		return nil, err // queues came or went: what the listing knew is not enough
	}
	s.log.Warn("management API unavailable, depths from rabbitmq_prometheus with the last listing", "listed_at", last.listedAt, "err", err)
	v.partial = append(v.partial, fmt.Sprintf("management API unavailable: %v; queue types, policies and counters as of the listing at %s",
		err, last.listedAt.UTC().Format(time.TimeOnly)))
	return v, nil
}

// scrape reads the plugin, or returns nil and stops using it for a while
// when it fails.
func (s *Source) scrape(ctx context.Context) *rabbit.Depths {
	d, err := s.exporter.QueueDepths(ctx, s.opts.VHosts)
	if err != nil {
		s.pluginUnusable(err.Error())
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.plugin.serving {
		s.log.Info("reading queue depths from rabbitmq_prometheus, listing through the management API every few polls",
			"url", s.exporter.URL(), "list_every", s.listEvery())
	}
	s.plugin.serving, s.plugin.tried = true, true
	return d
}

// pluginUnusable stops reading the plugin until a few listings later: it
// is absent, failed, or cannot see every queue.
func (s *Source) pluginUnusable(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plugin.retryIn = s.listEvery()
	if s.plugin.serving || !s.plugin.tried {
		s.log.Warn("rabbitmq_prometheus not used, listing queues through the management API every poll",
			"url", s.exporter.URL(), "reason", why)
	}
	s.plugin.serving, s.plugin.tried = false, true
}

// errSetChanged is mergeDepths' reason when queues came or went: a
// listing learns the new ones' type, arguments and policy.
const errSetChanged = "the set of queues changed"

// mergeDepths returns last with each queue's ready, unacknowledged and
// consumer counts from d, or nil and the reason when d cannot stand in for
// a listing. What the plugin does not show is kept from the listing:
// type, arguments, policy and the message_stats counters (which stay
// stamped with the listing's time, so rates are deltas between listings).
// A head timestamp is kept only while nothing can have taken the head the
// listing saw: no consumer at the listing or now, and the ready count not
// below the listing's. A queue with consumers has a new head every few
// messages while its ready count holds steady; its listing's head would
// age on every poll until the next listing, a lag that is not there, so
// its head age is unknown between listings.
func mergeDepths(last *view, d *rabbit.Depths) (*view, string) {
	for _, q := range last.queues {
		if q.Node != "" && q.Node != d.Node {
			return nil, fmt.Sprintf("queue %q of vhost %q runs on %s, the plugin answers for %s only", q.Name, q.VHost, q.Node, d.Node)
		}
	}
	if len(d.Queues) != len(last.queues) {
		return nil, errSetChanged
	}
	qs := make([]rabbit.Queue, len(last.queues))
	for i, q := range last.queues {
		dq, ok := d.Queues[rabbit.QueueKey{VHost: q.VHost, Name: q.Name}]
		if !ok {
			return nil, errSetChanged
		}
		consumed := dq.Consumers > 0 || q.Consumers == nil || *q.Consumers > 0
		if q.HeadTimestamp != nil && (consumed || dq.Ready == 0 || q.Ready == nil || dq.Ready < *q.Ready) {
			q.HeadTimestamp = nil
		}
		if dq.Consumers == 0 {
			q.Utilisation = nil
		}
		q.Ready, q.Unacked, q.Consumers = &dq.Ready, &dq.Unacked, &dq.Consumers
		qs[i] = q
	}
	return &view{
		queues: qs, exchanges: last.exchanges, bindings: last.bindings, listedAt: last.listedAt, sources: last.sources,
		partial: slices.Clone(last.partial), // what the listing missed (a configured vhost not found) still is
	}, ""
}
