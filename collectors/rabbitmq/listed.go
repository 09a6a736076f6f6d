package rabbitmq

import (
	"fmt"
	"slices"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/queue"
)

// errNotFound is the DLQ error of a queue that dlq_queues names but that no
// watched vhost holds.
const errNotFound = "not found"

// reportMissing adds a DLQ with an error, and a partial note, for every
// queue that dlq_queues names (an ExplicitQueues ref that ExplicitDLQ
// marks) and that exists in none of its watched vhosts: a listed DLQ that
// is not there is a typo or a deleted queue, and either must be seen and
// alertable (queuewatch_collector_partial_errors) rather than measured as
// empty. A name found in one watched vhost is not missing from the others.
func (s *Source) reportMissing(snap *queue.Snapshot, exists func(QueueRef) bool) {
	byName := map[string][]QueueRef{}
	var names []string
	for _, r := range s.opts.ExplicitQueues {
		if s.opts.ExplicitDLQ == nil || !s.opts.ExplicitDLQ(r.VHost, r.Name) ||
			s.opts.IncludeQueue != nil && !s.opts.IncludeQueue(r.VHost, r.Name) {
			continue
		}
		if _, ok := byName[r.Name]; !ok {
			names = append(names, r.Name)
		}
		byName[r.Name] = append(byName[r.Name], r)
	}
	slices.Sort(names)
	for _, name := range names {
		refs := byName[name]
		if slices.ContainsFunc(refs, exists) {
			continue
		}
		for _, r := range refs {
			snap.DLQs = append(snap.DLQs, queue.DLQ{
				Broker: queue.RabbitMQ, Cluster: s.Cluster(), VHost: r.VHost, Name: r.Name,
				Detection: queue.DetectedConfig, Err: errNotFound,
			})
			snap.Partial = append(snap.Partial, fmt.Sprintf("queue %s in vhost %s: %s", r.Name, r.VHost, errNotFound))
		}
	}
}

// listedIn reports a name as existing when any listed (watched) queue has
// it, whatever its vhost: with all vhosts watched, a named DLQ may live in
// another vhost than the URL's.
func listedIn(qs []rabbit.Queue) func(QueueRef) bool {
	names := map[string]bool{}
	for _, q := range qs {
		names[q.Name] = true
	}
	return func(r QueueRef) bool { return names[r.Name] }
}

// measuredIn reports a queue as existing unless its AMQP probe found it
// missing: a vhost that could not be reached says nothing either way.
func measuredIn(plans []plan) func(QueueRef) bool {
	missing := map[vhostName]bool{}
	for _, p := range plans {
		if p.missing {
			missing[vhostName{p.vhost, p.name}] = true
		}
	}
	return func(r QueueRef) bool { return !missing[vhostName{r.VHost, r.Name}] }
}
