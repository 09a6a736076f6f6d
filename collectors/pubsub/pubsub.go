package pubsub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	brokerpubsub "github.com/queuewatch/queuewatch/brokers/pubsub"
	"github.com/queuewatch/queuewatch/queue"
)

// Options configure one project's source.
type Options struct {
	// Cluster is the access to the project, shared with its replay
	// backend; its name is the cluster label on every metric.
	Cluster *brokerpubsub.Cluster
	// Include decides which subscriptions are readers; nil reads all.
	Include func(name string) bool
	// Interval is how often the project is read; zero reads it on every
	// poll.
	Interval time.Duration
	// Tick is the scheduler's poll interval. A poll less than Tick/2
	// before a read is due reads (as for SQS accounts).
	Tick   time.Duration
	Logger *slog.Logger
}

// Source polls one Pub/Sub project. The scheduler never runs two polls of
// one source at once; mu guards the state a poll keeps for the next.
type Source struct {
	opts Options
	name string
	log  *slog.Logger
	now  func() time.Time

	mu       sync.Mutex
	last     *queue.Snapshot
	lastRead time.Time
	// known are the DLQs found so far and their sources, kept listed
	// after their subscription or policy is gone.
	known map[string][]string
}

// New creates a source; it sends nothing until the first poll.
func New(opts Options) (*Source, error) {
	if opts.Cluster == nil {
		return nil, errors.New("pubsub source: no cluster")
	}
	if opts.Include == nil {
		opts.Include = func(string) bool { return true }
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Source{
		opts: opts, name: opts.Cluster.Name(),
		log: opts.Logger.With("broker", "pubsub", "cluster", opts.Cluster.Name()),
		now: time.Now, known: map[string][]string{},
	}, nil
}

// Broker returns queue.PubSub.
func (s *Source) Broker() queue.Broker { return queue.PubSub }

// Cluster returns the configured project name.
func (s *Source) Cluster() string { return s.name }

// Close closes the project's client; app closes sources after the replay
// backends that share it.
func (s *Source) Close() {
	if err := s.opts.Cluster.Close(); err != nil {
		s.log.Warn("close", "err", err)
	}
}

// Poll reads the project, or returns the last snapshot when the next read
// is not yet due.
func (s *Source) Poll(ctx context.Context) (*queue.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.last != nil && now.Sub(s.lastRead) < s.opts.Interval-s.opts.Tick/2 {
		return s.handOut(), nil
	}
	snap, err := s.read(ctx, now)
	if err != nil {
		return nil, err
	}
	s.last, s.lastRead = snap, now
	return s.handOut(), nil
}

// handOut is a copy of the last snapshot with subscriptions of its own:
// evaluation writes each one's status into what a poll returns.
func (s *Source) handOut() *queue.Snapshot {
	c := *s.last
	c.PubSubSubscriptions = slices.Clone(s.last.PubSubSubscriptions)
	return &c
}

// read reads the topology, Cloud Monitoring when enabled, and the DLQs.
func (s *Source) read(ctx context.Context, now time.Time) (*queue.Snapshot, error) {
	c := s.opts.Cluster
	topo, err := c.Topology(ctx)
	if err != nil {
		return nil, err
	}
	snap := &queue.Snapshot{
		Broker: queue.PubSub, Cluster: s.name, Time: now,
		PubSub: &queue.PubSubProject{
			Project: c.Project(), ReadAt: now, ReadEvery: max(s.opts.Interval, s.opts.Tick),
			Topics: len(topo.Topics), Subscriptions: len(topo.Subscriptions), Monitoring: c.ReadsMonitoring(),
		},
	}
	var metrics map[string]*brokerpubsub.SubscriptionMetrics
	if c.ReadsMonitoring() {
		metrics, err = c.SubscriptionMetrics(ctx, now)
		if err != nil {
			s.log.Warn("read cloud monitoring", "err", err)
			snap.Partial = append(snap.Partial, err.Error())
		}
	}
	dls := topo.DeadLetters()
	isDLQ := map[string]bool{}
	for _, d := range dls {
		for _, id := range d.DLQs {
			isDLQ[id] = true
		}
	}
	lints := map[string][]queue.PubSubLint{}
	for _, l := range topo.Lints() {
		lints[l.Subscription] = append(lints[l.Subscription], queue.PubSubLint{Kind: string(l.Kind), Sentence: l.Sentence})
	}
	for _, sub := range topo.Subscriptions {
		if !s.opts.Include(sub.ID) {
			continue
		}
		q := subscription(s.name, sub, metrics[sub.ID])
		q.DLQ, q.Lints = isDLQ[sub.ID], lints[sub.ID]
		for _, d := range dls {
			if d.Source == sub.ID {
				q.DeadLetterQueues = d.DLQs
			}
		}
		snap.PubSubSubscriptions = append(snap.PubSubSubscriptions, q)
	}
	snap.DLQs = s.dlqs(ctx, topo, dls, metrics)
	snap.PubSub.MonitoringCalls = c.MonitoringCalls()
	snap.Duration = s.now().Sub(now)
	return snap, nil
}

// subscription is sub in the vocabulary, with Cloud Monitoring's figures
// when there are any.
func subscription(cluster string, sub brokerpubsub.Subscription, m *brokerpubsub.SubscriptionMetrics) queue.PubSubSubscription {
	q := queue.PubSubSubscription{
		Cluster: cluster, Name: sub.ID, Topic: sub.Topic, Delivery: string(sub.Delivery),
		DeadLetterTopic: sub.DeadLetterTopic, MaxDeliveryAttempts: sub.MaxDeliveryAttempts,
		RetryMin: sub.RetryMin, RetryMax: sub.RetryMax, AckDeadline: sub.AckDeadline, Retention: sub.Retention,
		RetainAcked: sub.RetainAcked, Filter: sub.Filter, ExactlyOnce: sub.ExactlyOnce, Ordering: sub.Ordering,
		State: sub.State, Detached: sub.Detached,
	}
	if m != nil {
		q.Monitoring = &queue.PubSubMetrics{
			At: m.At, Undelivered: m.Undelivered, HasUndelivered: m.HasUndelivered,
			OldestAge: m.OldestAge, HasOldestAge: m.HasOldestAge,
			DeadLettered: m.DeadLettered, ExpiredAcks: m.ExpiredAcks, BacklogBytes: m.BacklogBytes,
		}
	}
	return q
}

// countParallel bounds the DLQ counts one read runs at once: a count's
// last pull waits for messages that do not come (up to two seconds), so
// counting one after another would spend the poll's deadline.
const countParallel = 4

// dlqs lists the DLQ subscriptions found now and before, each with its
// depth: Cloud Monitoring's backlog where it has one, else a count (a
// lower bound), a few at a time.
func (s *Source) dlqs(ctx context.Context, topo *brokerpubsub.Topology, dls []brokerpubsub.DeadLetter, metrics map[string]*brokerpubsub.SubscriptionMetrics) []queue.DLQ {
	sources := map[string][]string{}
	for _, d := range dls {
		for _, id := range d.DLQs {
			sources[id] = append(sources[id], d.Source)
		}
	}
	maps.Copy(s.known, sources)
	names := slices.Sorted(maps.Keys(s.known))
	out := make([]queue.DLQ, len(names))
	sem := make(chan struct{}, countParallel)
	var wg sync.WaitGroup
	for i, name := range names {
		out[i] = queue.DLQ{Broker: queue.PubSub, Cluster: s.name, Name: name, Sources: slices.Sorted(slices.Values(s.known[name])), Detection: queue.DetectedTopology}
		d := &out[i]
		sub, listed := topo.Subscription(name)
		switch m := metrics[name]; {
		case !listed:
			// Gone, or no longer attached: listed at 0 (DESIGN §3).
		case m != nil && m.HasUndelivered:
			d.Messages = m.Undelivered
			d.OldestAge, d.HasOldestAge = m.OldestAge, m.HasOldestAge && m.Undelivered > 0
		default:
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				s.count(ctx, d, sub)
			})
		}
	}
	wg.Wait()
	return out
}

// count fills d's depth with a count of sub, a lower bound.
func (s *Source) count(ctx context.Context, d *queue.DLQ, sub *brokerpubsub.Subscription) {
	n, err := s.opts.Cluster.Count(ctx, sub)
	d.Messages, d.AtLeast = n, true
	if err != nil {
		d.Err = countError(err)
		s.log.Warn("count dlq", "dlq", d.Name, "err", err)
	}
}

// countError is a failed count as the DLQ's error.
func countError(err error) string {
	if errors.Is(err, brokerpubsub.ErrCountChained) {
		return "depth unknown without monitoring.enabled: " + err.Error()
	}
	return fmt.Sprintf("count: %s", strings.TrimSpace(err.Error()))
}
