package kinesis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/queuewatch/queuewatch/brokers/awsaccess"
	brokerkinesis "github.com/queuewatch/queuewatch/brokers/kinesis"
	"github.com/queuewatch/queuewatch/queue"
)

// parallel bounds the reads at checkpoints one poll has in flight: each
// is on another shard, whose own budget is what counts.
const parallel = 8

// Options configure one account's source.
type Options struct {
	// Cluster is the access to the account; its name is the cluster
	// label on every metric.
	Cluster *brokerkinesis.Cluster
	// Interval is how often the account is read; zero reads it on every
	// poll.
	Interval time.Duration
	// Tick is the scheduler's poll interval: a poll less than Tick/2
	// before a read is due reads (as for SQS).
	Tick   time.Duration
	Logger *slog.Logger
}

// Source polls one Kinesis account. The scheduler never runs two polls of
// one source at once; mu guards the last read.
type Source struct {
	opts Options
	name string
	log  *slog.Logger
	now  func() time.Time

	mu       sync.Mutex
	last     *queue.Snapshot
	lastRead time.Time
}

// New creates a source; it sends nothing until the first poll.
func New(opts Options) (*Source, error) {
	if opts.Cluster == nil {
		return nil, errors.New("kinesis source: no cluster")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Source{
		opts: opts, name: opts.Cluster.Name(), now: time.Now,
		log: opts.Logger.With("broker", "kinesis", "cluster", opts.Cluster.Name()),
	}, nil
}

// Broker returns queue.Kinesis.
func (s *Source) Broker() queue.Broker { return queue.Kinesis }

// Cluster returns the configured account name.
func (s *Source) Cluster() string { return s.name }

// Close releases nothing: the SDK clients hold only idle HTTP connections.
func (s *Source) Close() {}

// Poll reads the account, or returns the last read when the next one is
// not yet due.
func (s *Source) Poll(ctx context.Context) (*queue.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.last == nil || now.Sub(s.lastRead) >= s.opts.Interval-s.opts.Tick/2 {
		snap, err := s.read(ctx, now)
		if err != nil {
			return nil, err
		}
		s.last, s.lastRead = snap, now
	}
	// A copy with applications of its own: evaluation writes their status.
	c := *s.last
	c.KinesisApps = slices.Clone(s.last.KinesisApps)
	return &c, nil
}

// read lists and describes the streams, then reads every application.
func (s *Source) read(ctx context.Context, now time.Time) (*queue.Snapshot, error) {
	cfg := s.opts.Cluster.Config()
	names, err := s.opts.Cluster.ListStreams(ctx)
	if err != nil {
		return nil, fmt.Errorf("kinesis %s: %w", s.name, err)
	}
	snap := &queue.Snapshot{
		Broker: queue.Kinesis, Cluster: s.name, Time: now,
		Kinesis: &queue.KinesisAccount{ReadAt: now, ReadEvery: max(s.opts.Interval, s.opts.Tick)},
	}
	described := map[string]*brokerkinesis.Stream{}
	describe := func(name string) (*brokerkinesis.Stream, error) {
		if d, ok := described[name]; ok {
			return d, nil
		}
		d, err := s.opts.Cluster.DescribeStream(ctx, name)
		if err != nil {
			s.log.Warn("describe stream", "stream", name, "err", err)
			snap.Partial = append(snap.Partial, "stream "+name+": "+err.Error())
			return nil, err
		}
		described[name] = &d
		return &d, nil
	}
	for _, name := range names {
		if !cfg.Streams.Match(name) {
			continue
		}
		st := queue.KinesisStream{Cluster: s.name, Name: name}
		if d, err := describe(name); err != nil {
			st.Err = err.Error()
		} else {
			st = streamOf(s.name, d)
		}
		snap.KinesisStreams = append(snap.KinesisStreams, st)
	}
	for _, app := range cfg.Applications {
		a := queue.KinesisApplication{
			Cluster: s.name, Name: app.Name, Stream: app.Stream, LeaseTable: app.LeaseTable, FailoverTime: app.Failover(),
		}
		if d, err := describe(app.Stream); err != nil {
			a.Err = err.Error()
		} else {
			s.readApplication(ctx, &a, d, now)
		}
		snap.KinesisApps = append(snap.KinesisApps, a)
	}
	snap.Kinesis.Requests = s.requests()
	snap.Duration = s.now().Sub(now)
	return snap, nil
}

func streamOf(cluster string, d *brokerkinesis.Stream) queue.KinesisStream {
	st := queue.KinesisStream{Cluster: cluster, Name: d.Name, Status: d.Status, Retention: d.Retention}
	for _, sh := range d.Shards {
		var parents []string
		for _, p := range []string{sh.Parent, sh.AdjacentParent} {
			if p != "" {
				parents = append(parents, p)
			}
		}
		st.Shards = append(st.Shards, queue.KinesisShard{ID: sh.ID, Parents: parents, Open: sh.Open})
	}
	for _, c := range d.Consumers {
		st.Consumers = append(st.Consumers, c.Name)
	}
	return st
}

// readApplication reads a's lease table and each unfinished leased shard
// at its checkpoint, and finds the open shards no lease covers.
func (s *Source) readApplication(ctx context.Context, a *queue.KinesisApplication, d *brokerkinesis.Stream, now time.Time) {
	a.Retention = d.Retention
	leases, err := s.opts.Cluster.Leases(ctx, a.LeaseTable, a.Stream)
	if err != nil {
		s.log.Warn("read lease table", "application", a.Name, "err", err)
		a.Err = err.Error()
		return
	}
	open := map[string]bool{}
	for _, sh := range d.Shards {
		open[sh.ID] = sh.Open
	}
	a.Leases = make([]queue.KinesisLease, len(leases))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, l := range leases {
		a.Leases[i] = queue.KinesisLease{
			Shard: l.ShardID, Owner: l.Owner, Counter: l.Counter, Checkpoint: l.Checkpoint,
			OwnerSwitches: l.OwnerSwitches, Parents: l.Parents, Children: l.Children, Open: open[l.ShardID],
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			s.readLag(ctx, a.Stream, &a.Leases[i])
		})
	}
	wg.Wait()
	a.Unleased = unleased(d.Shards, a.Leases)
	a.Headroom = a.RetentionHeadroom(now)
}

// readLag reads l's shard at its checkpoint. A shard read to its end is
// 0 behind; one whose checkpoint is LATEST or AT_TIMESTAMP (nothing
// processed yet, from a position the lease does not hold) is not read.
func (s *Source) readLag(ctx context.Context, stream string, l *queue.KinesisLease) {
	switch l.Checkpoint {
	case brokerkinesis.CheckpointShardEnd:
		l.HasLag = true
		return
	case brokerkinesis.CheckpointLatest, brokerkinesis.CheckpointAtTimestamp, "":
		return
	}
	p, err := s.opts.Cluster.ReadAt(ctx, stream, l.Shard, l.Checkpoint)
	if err != nil {
		s.log.Warn("read at checkpoint", "stream", stream, "shard", l.Shard, "err", err)
		l.LagErr = err.Error()
		return
	}
	l.Behind, l.Arrival, l.HasLag = p.Behind, p.Arrival, true
}

// unleased are the open shards with no lease whose parents have no
// unfinished lease: the KCL leases a child only once its parents are
// read to their end, so a child of a parent still being read is waiting,
// not forgotten.
func unleased(shards []brokerkinesis.Shard, leases []queue.KinesisLease) []string {
	byShard := map[string]*queue.KinesisLease{}
	for i := range leases {
		byShard[leases[i].Shard] = &leases[i]
	}
	var out []string
	for _, sh := range shards {
		if !sh.Open || byShard[sh.ID] != nil {
			continue
		}
		waiting := false
		for _, p := range []string{sh.Parent, sh.AdjacentParent} {
			if l := byShard[p]; p != "" && l != nil && !l.Finished() {
				waiting = true
			}
		}
		if !waiting {
			out = append(out, sh.ID)
		}
	}
	return out
}

// requests are the requests sent to the account so far, per action.
func (s *Source) requests() []queue.SQSRequests {
	counts := s.opts.Cluster.Requests()
	var out []queue.SQSRequests
	for _, a := range awsaccess.Actions(counts) {
		out = append(out, queue.SQSRequests{Action: a, Count: counts[a]})
	}
	return out
}
