package collectors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// Options configure the scheduler.
type Options struct {
	// Interval between the starts of two polls of one source.
	Interval time.Duration
	// Timeout bounds one poll; it defaults to the interval.
	Timeout time.Duration
	// History is how far back group and DLQ aggregates are kept for charts.
	History time.Duration
	// Evaluator, when set, fills derived fields (status, ETA) of each new
	// snapshot before it is published (alerts.Evaluator).
	Evaluator Evaluator
	Logger    *slog.Logger
	// Metrics selects the Kafka series /metrics exports; the zero value is
	// the default, partition granularity without opt-in families.
	Metrics config.Metrics
}

func (o *Options) setDefaults() {
	if o.Interval <= 0 {
		o.Interval = 15 * time.Second
	}
	if o.Timeout <= 0 || o.Timeout > o.Interval {
		o.Timeout = o.Interval
	}
	if o.History <= 0 {
		o.History = time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Metrics.Granularity == "" {
		o.Metrics.Granularity = config.GranularityPartition
	}
}

// Evaluator fills a snapshot's derived fields from the polls before it,
// which it remembers itself.
type Evaluator interface {
	Evaluate(latest *queue.Snapshot)
	// Complete evaluates latest as the completion of its source's previous
	// poll, whose pending parts a Finisher has just read: latest takes that
	// poll's place in the window.
	Complete(latest *queue.Snapshot)
}

// Collector polls sources and holds what they reported.
type Collector struct {
	opts    Options
	sources []*sourceState
	metrics *metrics

	// generation changes whenever a poll finishes, so the cached
	// exposition knows it is stale.
	generation atomic.Uint64
	exposition *exposition

	ready     chan struct{}
	readyOnce sync.Once
}

// New returns a collector for the given sources. Call Run to start polling.
func New(sources []Source, opts Options) *Collector {
	opts.setDefaults()
	c := &Collector{opts: opts, metrics: newMetrics(), ready: make(chan struct{})}
	maxPoints := int(opts.History/opts.Interval) + 1
	for _, s := range sources {
		c.sources = append(c.sources, &sourceState{
			src: s, maxPoints: maxPoints,
			log: opts.Logger.With("broker", s.Broker(), "cluster", s.Cluster()),
		})
	}
	c.exposition = newExposition(c)
	return c
}

// Run polls every source on its own schedule until ctx is done.
func (c *Collector) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, s := range c.sources {
		wg.Go(func() { c.loop(ctx, s) })
	}
	wg.Wait()
}

// PollOnce polls every source once, concurrently, and returns when all are
// done. It is what Run does on each tick; check and tests use it directly.
func (c *Collector) PollOnce(ctx context.Context) {
	var wg sync.WaitGroup
	for _, s := range c.sources {
		wg.Go(func() { c.poll(ctx, s) })
	}
	wg.Wait()
}

// maxBackoff caps the wait after repeated failures, so a recovered broker is
// noticed within minutes.
const maxBackoff = 5 * time.Minute

func (c *Collector) loop(ctx context.Context, s *sourceState) {
	for {
		start := time.Now()
		ok := c.poll(ctx, s)
		if ok && c.finish(ctx, s) {
			continue // poll again at once to publish what it read
		}
		// Failures back off, but a standby's: its failure is the owner's
		// poll, read from the store, and it reads again at the interval
		// to see the recovery (or take over) as soon as the owner would.
		delay := c.opts.Interval
		if !ok && polledBy(s.src) == "" {
			delay = backoff(c.opts.Interval, s.failures())
		}
		// ±10% jitter keeps many instances (and many sources) from
		// polling brokers in lockstep. The interval runs from the start
		// of one poll to the start of the next, so slow polls do not
		// stretch it; a poll longer than the interval (it is bounded by
		// the timeout, at most the interval) is followed at once.
		delay += time.Duration((rand.Float64()*0.2 - 0.1) * float64(delay))
		delay -= time.Since(start)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// ErrNothingNewer is what a Source's Poll returns when it has no snapshot
// newer than its last one to give: a standby whose owner has not polled
// since (collectors/standby). The collector then publishes nothing and
// counts no failure, so history and status windows get no repeated point.
var ErrNothingNewer = errors.New("no snapshot newer than the last")

// Mirror is a source that may serve another replica's polls rather than
// poll the broker (collectors/standby). While PolledBy names that replica
// the source is a standby: its series are the other replica's to export,
// and its reads of the shared store are not polls of the broker.
type Mirror interface {
	PolledBy() string
}

// polledBy is the replica whose polls src serves, "" when it polls itself.
func polledBy(src Source) string {
	if m, ok := src.(Mirror); ok {
		return m.PolledBy()
	}
	return ""
}

// Finisher is a source whose snapshots may leave parts pending, such as
// Kafka lag seconds after a start: publishing what is known must not wait
// for them. Finish does the pending work and reports whether a poll would
// now fill them.
type Finisher interface {
	Finish(ctx context.Context) bool
}

// finish runs s's pending work after its snapshot was published, within the
// poll timeout and never alongside a poll of s, and reports whether to poll
// again at once.
func (c *Collector) finish(ctx context.Context, s *sourceState) bool {
	f, ok := s.src.(Finisher)
	if !ok {
		return false
	}
	s.polling.Lock()
	defer s.polling.Unlock()
	fctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	if !f.Finish(fctx) || ctx.Err() != nil {
		return false
	}
	s.markCompleting()
	return true
}

// Rereader is a source that reads its cluster less often than it is
// polled (an SQS account: AWS bills every request) and can read a few of
// its queues again at once, after a DLQ job changed them. Reread reads
// the named queues (names it does not watch are left out) and reports
// whether its next Poll serves anything new.
type Rereader interface {
	Reread(ctx context.Context, names []string, job string) (bool, error)
}

// Reread has the source of broker and cluster read the named queues again
// after job ended, when it is a Rereader, and publishes what it read at
// once, as a poll of its own, rather than at its next read: a drained DLQ
// then shows 0 on the pages and in /metrics right after the job. Another
// source does nothing: it reads everything at every poll anyway.
func (c *Collector) Reread(ctx context.Context, broker queue.Broker, cluster string, names []string, job string) error {
	for _, s := range c.sources {
		if s.src.Broker() != broker || s.src.Cluster() != cluster {
			continue
		}
		r, ok := s.src.(Rereader)
		if !ok {
			return nil
		}
		rctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
		read, err := r.Reread(rctx, names, job)
		cancel()
		if read {
			c.poll(ctx, s)
		}
		return err
	}
	return nil
}

// backoff doubles the interval for each consecutive failure after the first.
func backoff(interval time.Duration, failures int) time.Duration {
	d := interval
	for i := 1; i < failures && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, max(maxBackoff, interval))
}

// poll runs one poll of s. Polls of one source never overlap: the loop is
// sequential, and PollOnce callers are serialized by s.polling.
func (c *Collector) poll(ctx context.Context, s *sourceState) bool {
	s.polling.Lock()
	defer s.polling.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	start := time.Now()
	snap, err := safePoll(ctx, s.src)
	took := time.Since(start)
	if errors.Is(err, ErrNothingNewer) {
		return true // nothing to publish, and not a failure
	}
	defer c.published()        // after the state below changed
	if polledBy(s.src) == "" { // a standby's read of the store is no poll
		c.metrics.observe(s.src, took, err)
	}
	if err != nil {
		if ctx.Err() != nil && ctx.Err() != context.DeadlineExceeded {
			return true // shutting down, not a failure
		}
		s.log.Warn("poll failed", "err", err, "took", took)
		s.fail(err, start)
		return false
	}
	if len(snap.Partial) > 0 {
		s.log.Warn("poll partially failed", "problems", len(snap.Partial), "first", snap.Partial[0])
	}
	if ev := c.opts.Evaluator; ev != nil {
		if s.takeCompleting() {
			ev.Complete(snap)
		} else {
			ev.Evaluate(snap)
		}
	}
	s.publish(snap, took)
	s.log.Debug("polled", "took", took, "groups", len(snap.Groups), "queues", len(snap.Queues), "dlqs", len(snap.DLQs))
	return true
}

// published refreshes the exposition after a poll changed the state, and
// closes WhenReady once every source has been polled.
func (c *Collector) published() {
	c.refreshExposition()
	if c.Ready() {
		c.readyOnce.Do(func() { close(c.ready) })
	}
}

// WhenReady is closed once every source has been polled at least once and
// /metrics shows it.
func (c *Collector) WhenReady() <-chan struct{} { return c.ready }

// refreshExposition marks the cached /metrics output stale and rebuilds it
// now, on the poller's goroutine, so that scrapes only ever copy bytes.
func (c *Collector) refreshExposition() {
	gen := c.generation.Add(1)
	if _, err := c.exposition.rebuild(gen); err != nil {
		c.opts.Logger.Error("encode metrics", "err", err)
	}
}

// safePoll turns a panicking source into a failed poll: one broken source
// must never take the process and every other source down with it.
func safePoll(ctx context.Context, s Source) (snap *queue.Snapshot, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("poll panicked: %v", r)
		}
	}()
	snap, err = s.Poll(ctx)
	if err == nil && snap == nil {
		err = fmt.Errorf("poll returned no snapshot")
	}
	return snap, err
}

// Ready reports whether every source has been polled at least once.
func (c *Collector) Ready() bool {
	for _, s := range c.sources {
		if !s.attempted() {
			return false
		}
	}
	return true
}

// Snapshots returns the latest good snapshot of every source that has one.
func (c *Collector) Snapshots() []*queue.Snapshot {
	var out []*queue.Snapshot
	for _, s := range c.sources {
		if snap := s.latestSnapshot(); snap != nil {
			out = append(out, snap)
		}
	}
	return out
}

// Statuses returns the health of every source, in configuration order.
func (c *Collector) Statuses() []queue.SourceStatus {
	out := make([]queue.SourceStatus, len(c.sources))
	for i, s := range c.sources {
		out[i] = s.status()
	}
	return out
}

// ReaderHistory returns the kept history of one reader (see
// queue.Snapshot.Readers), oldest first: what the overview and a group's
// chart draw for every broker.
func (c *Collector) ReaderHistory(k queue.ReaderKey) []queue.ReaderPoint {
	for _, s := range c.sources {
		if s.src.Broker() != k.Broker || s.src.Cluster() != k.Cluster {
			continue
		}
		if h := s.readerHistory(k); len(h) > 0 {
			return h
		}
	}
	return nil
}

// history is the first non-empty history that get finds in the sources of
// cluster. Only a source that reads a kind of reader keeps its history, so
// the lookup needs no broker's name: a Kafka cluster and a NATS cluster of
// the same name keep their groups and consumers apart by themselves.
func history[P any](c *Collector, cluster string, get func(*sourceState) []P) []P {
	for _, s := range c.sources {
		if s.src.Cluster() != cluster {
			continue
		}
		if h := get(s); len(h) > 0 {
			return h
		}
	}
	return nil
}

// DLQHistory returns the kept depth history of one DLQ, oldest first.
func (c *Collector) DLQHistory(id string) []queue.DLQPoint {
	for _, s := range c.sources {
		if h := s.dlqHistory(id); h != nil {
			return h
		}
	}
	return nil
}

// OutboxHistory returns the kept backlog history of one outbox table,
// oldest first.
func (c *Collector) OutboxHistory(source, table string) []queue.OutboxPoint {
	return history(c, source, func(s *sourceState) []queue.OutboxPoint { return s.outboxHistory(table) })
}

// SlotHistory returns the kept lag history of one replication slot of an
// outbox source, oldest first.
func (c *Collector) SlotHistory(source, slot string) []queue.SlotPoint {
	return history(c, source, func(s *sourceState) []queue.SlotPoint { return s.slotHistory(slot) })
}
