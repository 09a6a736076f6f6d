package rabbitmq

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/queue"
)

// view is what one poll read from the management API.
type view struct {
	queues    []rabbit.Queue
	exchanges []rabbit.Exchange
	bindings  []rabbit.Binding
	partial   []string
	// listedAt is when the queues were listed: the time of their
	// message_stats counters, also in polls that update only their depths.
	listedAt time.Time
	// sources are the DLQs' sources (dlqSources), resolved once per
	// listing: polls between listings share the listing's topology. nil
	// until resolved.
	sources map[vhostName][]string
}

// readManagement lists the queues of every watched vhost and reads as
// much of the exchanges and bindings as resolving dead-letter targets needs.
//
// Queues are paged per vhost even when all vhosts are watched: the broker
// builds every page from the full list it is asked for, so a page of
// /api/queues costs time proportional to all queues in the cluster (about
// 0.4 s with 10,000), while a page of /api/queues/{vhost} costs time
// proportional to that vhost's queues. One /api/vhosts request buys that.
//
// Listing 10,000 queues keeps one broker core busy for over a second, so
// the topology is read meanwhile, for the routed queues of the last poll;
// when this poll finds others, it is read again afterwards.
func (s *Source) readManagement(ctx context.Context) (*view, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops an early topology read whose answer is not used
	s.mu.Lock()
	lastRouted := s.routed
	s.mu.Unlock()
	var early <-chan topologyRead
	if len(lastRouted) > 0 {
		early = s.readTopologyEarly(ctx, lastRouted)
	}
	v := &view{}
	vhosts := s.opts.VHosts
	if len(vhosts) == 0 {
		var err error
		if vhosts, err = s.mgmt.VHosts(ctx); err != nil {
			return nil, err
		}
	}
	lists, errs := s.listQueues(ctx, vhosts)
	for i, vh := range vhosts {
		qs, err := lists[i], errs[i]
		if errors.Is(err, rabbit.ErrNotFound) {
			if len(s.opts.VHosts) > 0 {
				v.partial = append(v.partial, fmt.Sprintf("vhost %q: not found", vh))
			}
			continue // a listed vhost deleted since is no error
		}
		if err != nil {
			return nil, err
		}
		v.queues = append(v.queues, qs...)
	}
	rs := routedQueues(v.queues)
	t := s.topologyFor(ctx, rs, lastRouted, early)
	if t.err != nil {
		return nil, t.err
	}
	v.exchanges, v.bindings = t.exchanges, t.bindings
	s.mu.Lock()
	s.routed = rs
	s.mu.Unlock()
	return v, nil
}

// topologyFor is the early read when it was for the same routed queues and
// succeeded, else a fresh read.
func (s *Source) topologyFor(ctx context.Context, rs, lastRouted []routed, early <-chan topologyRead) topologyRead {
	if early != nil && slices.Equal(rs, lastRouted) {
		if t := <-early; t.err == nil {
			return t
		}
	}
	var t topologyRead
	t.exchanges, t.bindings, t.err = s.readTopology(ctx, rs)
	return t
}

// listParallelism is how many vhosts' queues are listed at once. The
// management plugin adds statistics to every page in one process (on 3.10,
// rabbit_mgmt_db_cache_queues), so that part of the pages never overlaps;
// three requests in flight keep it busy while the broker lists and encodes
// the other pages. With 10,000 queues on the 2-core benchmark machine, two
// took 1.0 s per poll against 0.77 s, and five were no faster.
const listParallelism = 3

// listQueues lists the queues of each vhost, a few vhosts at a time.
func (s *Source) listQueues(ctx context.Context, vhosts []string) ([][]rabbit.Queue, []error) {
	lists := make([][]rabbit.Queue, len(vhosts))
	errs := make([]error, len(vhosts))
	sem := make(chan struct{}, listParallelism)
	var wg sync.WaitGroup
	for i, vh := range vhosts {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			lists[i], errs[i] = s.mgmt.Queues(ctx, vh)
		})
	}
	wg.Wait()
	return lists, errs
}

func deadLetters(q rabbit.Queue) bool {
	return q.Type != rabbit.TypeStream && effectiveDeadLetter(q.Arguments, q.EffectivePolicy).hasExchange
}

// plan is one queue to measure over AMQP, usually a DLQ.
type plan struct {
	vhost, name, typ string
	dlq              bool
	detection        queue.DLQDetection
	sources          []string
	// mgmtReady and unacked come from the management API (0 without it);
	// unacked is added to the exact ready count.
	mgmtReady, unacked int64
	headTS             *float64
	// skipAMQP is set for streams, whose depth is not a ready count.
	skipAMQP bool
	// qi is the plan's index in the snapshot's queues.
	qi      int
	missing bool
}

type vhostName struct{ vhost, name string }

// build turns a management view into the reported queues and the DLQ plans,
// both sorted by vhost and name.
func build(opts Options, v *view, now time.Time) ([]queue.Queue, []plan) {
	if v.sources == nil {
		v.sources = dlqSources(v)
	}
	sources := v.sources
	qs := slices.Clone(v.queues)
	slices.SortFunc(qs, func(a, b rabbit.Queue) int {
		return cmp.Or(cmp.Compare(a.VHost, b.VHost), cmp.Compare(a.Name, b.Name))
	})
	var queues []queue.Queue
	var plans []plan
	for _, mq := range qs {
		if opts.IncludeQueue != nil && !opts.IncludeQueue(mq.VHost, mq.Name) {
			continue
		}
		q := toQueue(opts.Cluster.Name(), mq, now)
		q.CountersAt = v.listedAt
		queues = append(queues, q)
		srcs := sources[vhostName{mq.VHost, mq.Name}]
		det, ok := detect(opts, mq.VHost, mq.Name, len(srcs) > 0)
		if !ok {
			continue
		}
		plans = append(plans, plan{
			vhost: mq.VHost, name: mq.Name, typ: mq.Type,
			dlq: true, detection: det, sources: srcs,
			mgmtReady: q.Ready, unacked: q.Unacked, headTS: mq.HeadTimestamp,
			skipAMQP: mq.Type == rabbit.TypeStream,
			qi:       len(queues) - 1,
		})
	}
	return queues, plans
}

// detect returns why a queue is a DLQ, in order of trust.
func detect(opts Options, vhost, name string, hasSources bool) (queue.DLQDetection, bool) {
	switch {
	case opts.ExplicitDLQ != nil && opts.ExplicitDLQ(vhost, name):
		return queue.DetectedConfig, true
	case hasSources:
		return queue.DetectedTopology, true
	case opts.DLQNamePattern != nil && opts.DLQNamePattern.MatchString(name):
		return queue.DetectedName, true
	}
	return "", false
}

// dlqSources maps each queue that receives dead letters to the sorted
// names of the queues that send them.
func dlqSources(v *view) map[vhostName][]string {
	byVHost := map[string][]rabbit.Queue{}
	for _, q := range v.queues {
		byVHost[q.VHost] = append(byVHost[q.VHost], q)
	}
	exchanges := map[string][]rabbit.Exchange{}
	for _, x := range v.exchanges {
		exchanges[x.VHost] = append(exchanges[x.VHost], x)
	}
	bindings := map[string][]rabbit.Binding{}
	for _, b := range v.bindings {
		bindings[b.VHost] = append(bindings[b.VHost], b)
	}
	out := map[vhostName][]string{}
	for vh, qs := range byVHost {
		if !slices.ContainsFunc(qs, deadLetters) {
			continue
		}
		names := make([]string, len(qs))
		for i, q := range qs {
			names[i] = q.Name
		}
		t := newTopology(names, exchanges[vh], bindings[vh])
		for _, q := range qs {
			if !deadLetters(q) {
				continue
			}
			for _, target := range t.deadLetterTargets(q.Name, effectiveDeadLetter(q.Arguments, q.EffectivePolicy)) {
				k := vhostName{vh, target}
				out[k] = append(out[k], q.Name)
			}
		}
	}
	for k, srcs := range out {
		slices.Sort(srcs)
		out[k] = slices.Compact(srcs)
	}
	return out
}

func toQueue(cluster string, mq rabbit.Queue, now time.Time) queue.Queue {
	q := queue.Queue{
		Cluster:   cluster,
		VHost:     mq.VHost,
		Name:      mq.Name,
		Type:      mq.Type,
		Policy:    mq.Policy,
		Ready:     deref(mq.Ready),
		Unacked:   deref(mq.Unacked),
		Consumers: deref(mq.Consumers),
		Arguments: maps.Clone(map[string]any(mq.Arguments)),
	}
	if mq.HeadTimestamp != nil {
		q.HeadMessageAge = ageSince(now, time.Unix(int64(*mq.HeadTimestamp), 0))
		q.HasHeadAge = true
	}
	if st := mq.Stats; st != nil {
		q.Counters = queue.MessageCounters{
			Published: st.Publish, Consumed: st.Ack + st.DeliverNoAck + st.GetNoAck, Delivered: st.DeliverGet,
		}
		q.HasCounters = true
	}
	if mq.Utilisation != nil && q.Consumers > 0 {
		q.Utilisation, q.HasUtilisation = *mq.Utilisation, true
	}
	dl := effectiveDeadLetter(mq.Arguments, mq.EffectivePolicy)
	if dl.hasExchange {
		q.DeadLetterExchange, q.DeadLetterRoutingKey, q.HasDeadLetter = dl.exchange, dl.routingKey, true
	}
	setLimits(&q, mq.Arguments, mq.EffectivePolicy)
	return q
}

func deref[T int | int64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// ageSince is now − t, never negative (clocks of broker and collector
// differ slightly).
func ageSince(now, t time.Time) time.Duration {
	return max(now.Sub(t), 0)
}

// amqpOnlyPlans are the queues measured without the management API: the
// explicitly listed queues and the DLQs known from the last topology, each
// once, sorted.
func amqpOnlyPlans(opts Options, known []plan) []plan {
	byKey := map[vhostName]plan{}
	for _, k := range known {
		byKey[vhostName{k.vhost, k.name}] = plan{
			vhost: k.vhost, name: k.name, typ: k.typ, dlq: true,
			detection: k.detection, sources: k.sources, skipAMQP: k.skipAMQP,
		}
	}
	for _, r := range opts.ExplicitQueues {
		if opts.IncludeQueue != nil && !opts.IncludeQueue(r.VHost, r.Name) {
			continue
		}
		key := vhostName{r.VHost, r.Name}
		if _, ok := byKey[key]; ok {
			continue
		}
		p := plan{vhost: r.VHost, name: r.Name}
		p.detection, p.dlq = detect(opts, r.VHost, r.Name, false)
		byKey[key] = p
	}
	plans := slices.SortedFunc(maps.Values(byKey), func(a, b plan) int {
		return cmp.Or(cmp.Compare(a.vhost, b.vhost), cmp.Compare(a.name, b.name))
	})
	for i := range plans {
		plans[i].qi = i
	}
	return plans
}

// amqpParallelism bounds how many vhosts are measured at once.
const amqpParallelism = 4

// measure fills exact depths and oldest ages of plans over AMQP, updates the
// planned queues and appends the DLQs to snap. It returns how many plans
// could not be measured, and the broker's refusal of the login if any
// vhost's connection met one: then the source as a whole has failed.
func (s *Source) measure(ctx context.Context, snap *queue.Snapshot, plans []plan, queues []queue.Queue) (int, error) {
	byVHost := map[string][]int{}
	for i, p := range plans {
		if !p.skipAMQP {
			byVHost[p.vhost] = append(byVHost[p.vhost], i)
		}
	}
	results := make([]probeResult, len(plans))
	vhostErr := map[string]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, amqpParallelism)
	for vh, idx := range byVHost {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			probes := make([]probe, len(idx))
			for j, i := range idx {
				probes[j] = probe{queue: plans[i].name}
			}
			res, err := s.amqp.run(ctx, vh, probes)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				vhostErr[vh] = err
				return
			}
			for j, i := range idx {
				results[i] = res[j]
			}
		})
	}
	wg.Wait()
	var refused error
	for _, vh := range slices.Sorted(maps.Keys(vhostErr)) {
		if refused == nil && rabbit.IsAccessRefused(vhostErr[vh]) {
			refused = vhostErr[vh]
		}
		s.log.Warn("amqp measurement failed", "vhost", vh, "err", vhostErr[vh])
		snap.Partial = append(snap.Partial, fmt.Sprintf("vhost %q: amqp: %v", vh, vhostErr[vh]))
	}
	failed := 0
	seen := map[vhostName]backlog{}
	for i := range plans {
		p := &plans[i]
		err := vhostErr[p.vhost]
		if err == nil {
			err = results[i].err
		}
		if results[i].missing {
			p.missing = true
			continue
		}
		if err != nil {
			failed++
		}
		if !p.skipAMQP && err == nil {
			queues[p.qi].Ready = results[i].ready
			queues[p.qi].Consumers = results[i].consumers
		}
		if p.dlq {
			d := s.dlq(p, results[i], err)
			if err == nil {
				seen[vhostName{p.vhost, p.name}] = s.age(&d, p, &queues[p.qi], snap.Time)
			}
			snap.DLQs = append(snap.DLQs, d)
		}
	}
	s.keepBacklogs(seen)
	return failed, refused
}

// keepBacklogs replaces the backlogs with this poll's, so DLQs that were
// not measured are forgotten.
func (s *Source) keepBacklogs(seen map[vhostName]backlog) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backlogs = seen
}

// dlq builds the reported DLQ from its plan and measurement. When AMQP
// failed, the management numbers stand in and the error is recorded.
func (s *Source) dlq(p *plan, r probeResult, err error) queue.DLQ {
	d := queue.DLQ{
		Broker: queue.RabbitMQ, Cluster: s.Cluster(), VHost: p.vhost, Name: p.name,
		Sources: p.sources, Detection: p.detection,
	}
	switch {
	case err != nil:
		d.Messages = p.mgmtReady + p.unacked
		d.Err = "exact depth unavailable: " + err.Error()
	case p.skipAMQP:
		d.Messages = p.mgmtReady + p.unacked
	default:
		d.Messages = r.ready + p.unacked
	}
	return d
}

// age fills d's oldest age and returns the DLQ's backlog after this poll.
// The head message is never read (see doc.go): the age is exact from
// head_message_timestamp, 0 for an empty DLQ, else estimated.
func (s *Source) age(d *queue.DLQ, p *plan, q *queue.Queue, now time.Time) backlog {
	s.mu.Lock()
	prev, known := s.backlogs[vhostName{p.vhost, p.name}]
	s.mu.Unlock()
	b := nextBacklog(prev, known, d.Messages, q.Consumers, now)
	switch {
	case d.Messages == 0:
		d.HasOldestAge = true // an empty DLQ's oldest message is 0 s old, like a caught-up group's lag
		if !b.held {
			s.opts.Cluster.ForgetHead(p.vhost, p.name, now)
		}
	case p.headTS != nil:
		d.OldestAge, d.HasOldestAge = ageSince(now, time.Unix(int64(*p.headTS), 0)), true
	default:
		d.OldestAge, d.OldestAgeBasis = s.estimateAge(p, b, q.Ready, q.Consumers, now)
		d.HasOldestAge = true
	}
	return b
}
