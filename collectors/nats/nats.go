package nats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/queue"
)

// parallel bounds the API requests one poll has in flight at once: enough to
// hide round trips to a distant server, few enough not to crowd its API.
const parallel = 8

// Options configure one cluster's source.
type Options struct {
	// Cluster is the access to the cluster (URLs, credentials, TLS), shared
	// with its dead-letter capture and replay backend; its name is the
	// cluster label on every metric.
	Cluster *brokernats.Cluster
	// IncludeStream decides which streams are watched; nil watches all.
	IncludeStream func(stream string) bool
	Logger        *slog.Logger
}

// Source polls one NATS JetStream account. It is safe for one poll at a
// time; the scheduler never runs two polls of one source concurrently.
type Source struct {
	opts Options
	name string
	log  *slog.Logger

	mu sync.Mutex // guards cl against Close during a poll
	cl *brokernats.Client

	requests atomic.Int64
	next     nextCache
	now      func() time.Time
	// warm is set after the first poll; until then a poll reads at most
	// coldLookups next messages and leaves the rest to Finish.
	warm     bool
	deferred []nextKey
	// firsts and reads are the trends of each stream's first sequence and
	// each consumer's next one, which project max_msgs and max_bytes
	// (headroom.go).
	firsts map[string]*queue.Trend
	reads  map[[2]string]*queue.Trend
}

// New creates a source; it does not connect until the first poll.
func New(opts Options) (*Source, error) {
	if opts.Cluster == nil {
		return nil, errors.New("nats source: no cluster")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Source{
		opts: opts,
		name: opts.Cluster.Name(),
		log:  opts.Logger.With("broker", "nats", "cluster", opts.Cluster.Name()),
		next: nextCache{},
		now:  time.Now,
	}, nil
}

// Broker returns queue.NATS.
func (s *Source) Broker() queue.Broker { return queue.NATS }

// Cluster returns the configured cluster name.
func (s *Source) Cluster() string { return s.name }

// Requests returns how many JetStream API requests this source has made.
func (s *Source) Requests() int64 { return s.requests.Load() }

// Close closes the source's connection.
func (s *Source) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cl != nil {
		s.cl.Close()
		s.cl = nil
	}
}

// conn returns the source's client, connecting when there is none or the
// last one was lost (brokers/nats connections do not reconnect by
// themselves).
func (s *Source) conn(ctx context.Context) (*brokernats.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cl != nil && s.cl.IsConnected() {
		return s.cl, nil
	}
	if s.cl != nil {
		s.cl.Close()
		s.cl = nil
	}
	cl, err := s.opts.Cluster.NewClient(ctx, "collector", &s.requests)
	if err != nil {
		return nil, err
	}
	s.cl = cl
	return cl, nil
}

// Poll reads every watched stream and its durable consumers. It returns an
// error when nothing could be read. A stream whose consumers could not be
// listed marks them (or itself) in Snapshot.Partial; so does dead-letter
// capture that is on and cannot do its work
// (brokers/nats.Cluster.CaptureError, recognised by
// brokers/nats.IsCaptureDown), first.
func (s *Source) Poll(ctx context.Context) (*queue.Snapshot, error) {
	start := s.now()
	snap := &queue.Snapshot{Broker: queue.NATS, Cluster: s.name, Time: start}
	cl, err := s.conn(ctx)
	if err != nil {
		return nil, err
	}
	infos, missing, err := cl.Streams(ctx)
	if err != nil {
		return nil, fmt.Errorf("list streams of %s: %w", s.name, err)
	}
	// Dead letters lost unseen must not pass for health, but neither may
	// they blank the lag of every consumer: a partial failure is shown on
	// the source, exported and alerted (QueuewatchCollectorPartial), and
	// check fails for it.
	if err := s.opts.Cluster.CaptureError(infos); err != nil {
		snap.Partial = append(snap.Partial, err.Error())
	}
	for _, name := range missing {
		if s.included(name) {
			snap.Partial = append(snap.Partial, "stream "+name+": its leader did not answer the stream listing")
		}
	}
	var watched []*jetstream.StreamInfo
	for _, si := range infos {
		if s.included(si.Config.Name) {
			watched = append(watched, si)
		}
	}
	slices.SortFunc(watched, func(a, b *jetstream.StreamInfo) int { return strings.Compare(a.Config.Name, b.Config.Name) })
	for _, si := range watched {
		snap.Streams = append(snap.Streams, buildStream(s.name, si))
	}
	lists := s.listConsumers(ctx, cl, watched)
	for i, si := range watched {
		l := lists[i]
		if l.err != nil {
			snap.Partial = append(snap.Partial, "stream "+si.Config.Name+": list consumers: "+l.err.Error())
		}
		for _, name := range l.missing {
			snap.Partial = append(snap.Partial, "consumer "+si.Config.Name+"/"+name+": its leader did not answer the consumer listing")
			snap.Consumers = append(snap.Consumers, queue.StreamConsumer{
				Cluster: s.name, Stream: si.Config.Name, Name: name,
				Err: "its leader did not answer the consumer listing",
			})
		}
		for _, ci := range l.consumers {
			if ci.Config.Durable == "" {
				continue // ephemeral: comes and goes with one client
			}
			if s.opts.Cluster.Internal(si.Config.Name, ci.Name) {
				continue
			}
			snap.Consumers = append(snap.Consumers, buildConsumer(s.name, ci))
		}
	}
	slices.SortFunc(snap.Consumers, func(a, b queue.StreamConsumer) int {
		if c := strings.Compare(a.Stream, b.Stream); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	s.fillLagSeconds(ctx, cl, snap, start)
	s.fillHeadroom(snap, start)
	s.addDeadLetters(ctx, cl, snap)
	snap.Duration = s.now().Sub(start)
	return snap, nil
}

// addDeadLetters adds the DLQs: one per durable consumer of the snapshot
// (at 0 while it has no dead letters), and one per consumer, of any
// stream, whose captured copies remain. Without capture there are none:
// JetStream keeps no dead letters of its own.
func (s *Source) addDeadLetters(ctx context.Context, cl *brokernats.Client, snap *queue.Snapshot) {
	if !s.opts.Cluster.Config().DeadLetters.Capture {
		return
	}
	var err error
	snap.DLQs, err = s.opts.Cluster.DeadLetterQueues(ctx, cl.JetStream(), snap.Consumers)
	if err != nil {
		snap.Partial = append(snap.Partial, "dead letters: "+err.Error())
	}
}

// Advise names what in the cluster's existing capture streams differs
// from what dead-letter capture relies on (check prints it as warnings).
func (s *Source) Advise(ctx context.Context) ([]string, error) {
	if !s.opts.Cluster.Config().DeadLetters.Capture {
		return nil, nil
	}
	cl, err := s.conn(ctx)
	if err != nil {
		return nil, err
	}
	return s.opts.Cluster.CaptureAdvice(ctx, cl.JetStream())
}

// included reports whether stream is watched: selected by the
// configuration and none of queuewatch's own bookkeeping.
func (s *Source) included(stream string) bool {
	if s.opts.Cluster.Internal(stream, "") {
		return false
	}
	return s.opts.IncludeStream == nil || s.opts.IncludeStream(stream)
}

// consumerList is one stream's consumer listing.
type consumerList struct {
	consumers []*jetstream.ConsumerInfo
	missing   []string
	err       error
}

// listConsumers lists the consumers of every stream that has any, a few
// streams at a time; the result is in the order of streams.
func (s *Source) listConsumers(ctx context.Context, cl *brokernats.Client, streams []*jetstream.StreamInfo) []consumerList {
	out := make([]consumerList, len(streams))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, si := range streams {
		if si.State.Consumers == 0 {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			cs, missing, err := cl.Consumers(ctx, si.Config.Name)
			out[i] = consumerList{consumers: cs, missing: missing, err: err}
		})
	}
	wg.Wait()
	return out
}

func buildStream(cluster string, si *jetstream.StreamInfo) queue.Stream {
	return queue.Stream{
		Cluster:   cluster,
		Name:      si.Config.Name,
		Subjects:  si.Config.Subjects,
		Retention: retention(si.Config.Retention),
		Messages:  si.State.Msgs,
		Bytes:     si.State.Bytes,
		FirstSeq:  si.State.FirstSeq,
		LastSeq:   si.State.LastSeq,
		Consumers: si.State.Consumers,
		LastTime:  si.State.LastTime,
		MaxAge:    si.Config.MaxAge,
		// JetStream writes -1 for no limit; queue keeps 0 for none.
		MaxMsgs:    max(si.Config.MaxMsgs, 0),
		MaxBytes:   max(si.Config.MaxBytes, 0),
		DiscardOld: si.Config.Discard == jetstream.DiscardOld,
	}
}

func retention(r jetstream.RetentionPolicy) string {
	switch r {
	case jetstream.InterestPolicy:
		return "interest"
	case jetstream.WorkQueuePolicy:
		return "workqueue"
	}
	return "limits"
}

func buildConsumer(cluster string, ci *jetstream.ConsumerInfo) queue.StreamConsumer {
	filters := ci.Config.FilterSubjects
	if ci.Config.FilterSubject != "" {
		filters = []string{ci.Config.FilterSubject}
	}
	c := queue.StreamConsumer{
		Cluster:       cluster,
		Stream:        ci.Stream,
		Name:          ci.Name,
		Pull:          ci.Config.DeliverSubject == "",
		FilterSubject: filters,
		Pending:       ci.NumPending,
		AckPending:    ci.NumAckPending,
		MaxAckPending: ci.Config.MaxAckPending,
		Redelivered:   ci.NumRedelivered,
		Waiting:       ci.NumWaiting,
		PushBound:     ci.PushBound,
		DeliveredSeq:  ci.Delivered.Stream,
		AckFloorSeq:   ci.AckFloor.Stream,
		MaxDeliver:    ci.Config.MaxDeliver,
		Paused:        ci.Paused,
	}
	if ci.Paused && ci.Config.PauseUntil != nil {
		c.PauseUntil = ci.Config.PauseUntil.UTC()
	}
	return c
}
