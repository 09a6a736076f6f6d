package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/queue"
)

// Options configure one cluster's source.
type Options struct {
	// Cluster is the access to the cluster (connection, cursor group),
	// shared with its replay backend; its name is the cluster label on
	// every metric. DLQ depth counts from the cursor group's commits, and
	// the cursor group is never reported as a consumer group.
	Cluster *brokerkafka.Cluster
	// IncludeGroup decides which groups are watched; nil watches all.
	IncludeGroup func(group string) bool
	// ReadCommitted measures lag against the last stable offset.
	ReadCommitted bool
	// DLQTopic decides whether a topic is a dead-letter topic and how that
	// was decided (config or name); nil watches no DLQs. app passes
	// Cluster.DLQTopic.
	DLQTopic func(topic string) (queue.DLQDetection, bool)
	Logger   *slog.Logger
}

// Source polls one Kafka cluster. It is safe for one poll at a time; the
// scheduler never runs two polls of one source concurrently.
type Source struct {
	opts Options
	cl   *kgo.Client
	adm  *kadm.Client
	log  *slog.Logger

	// name is the cluster's name and cursor its replay cursor group.
	name, cursor string

	requests requestCounter

	records recordCache
	gen     uint64 // polls so far, to mark the records each one used
	// unread are the records whose timestamps the first poll left for
	// Finish, with the metadata to find their leaders. warm is set once
	// Finish read them: from then on polls read the few new timestamps
	// themselves.
	unread     map[offsetKey]bool
	unreadMeta map[tp]partitionMeta
	warm       bool

	ends endHistory
	// listed is the last poll's group listing, by name.
	listed kadm.ListedGroups
	// connectors are the last good read of each Connect cluster, by name,
	// kept for a read that fails (connect.go).
	connectors map[string][]queue.Connector
	// dlqSources remembers each DLQ topic's source once a record named it,
	// so the label stays when the DLQ is empty.
	dlqSources map[string]string
	now        func() time.Time

	// retention caches each consumed topic's retention settings, read at
	// retentionRead (retention.go); starts and commits are the log-start
	// and committed-offset trends that project retention.bytes.
	retention     map[string]topicRetention
	retentionRead time.Time
	starts        map[tp]*queue.Trend
	commits       map[groupTP]*queue.Trend
}

// New creates a source; it does not connect until the first poll.
func New(opts Options) (*Source, error) {
	if opts.Cluster == nil {
		return nil, errors.New("kafka source: no cluster")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Source{
		opts:       opts,
		name:       opts.Cluster.Name(),
		cursor:     opts.Cluster.CursorGroup(),
		log:        opts.Logger.With("broker", "kafka", "cluster", opts.Cluster.Name()),
		records:    recordCache{},
		ends:       endHistory{},
		dlqSources: map[string]string{},
		now:        time.Now,
		retention:  map[string]topicRetention{},
	}
	cl, err := opts.Cluster.NewClient(
		kgo.WithHooks(&s.requests),
		// A poll has its own deadline; retrying past it only delays the
		// error that marks the source down.
		kgo.RetryTimeout(5*time.Second),
		kgo.DialTimeout(5*time.Second),
		kgo.MetadataMinAge(time.Second),
	)
	if err != nil {
		return nil, err
	}
	s.cl = cl
	s.adm = kadm.NewClient(cl)
	return s, nil
}

// Broker returns queue.Kafka.
func (s *Source) Broker() queue.Broker { return queue.Kafka }

// Cluster returns the configured cluster name.
func (s *Source) Cluster() string { return s.name }

// Requests returns how many requests of the given kind (a kmsg.Key) this
// source has written to brokers; a negative key counts every kind.
func (s *Source) Requests(key int16) int64 { return s.requests.count(key) }

// Client returns the source's own franz-go client. It is not shared with
// the replay backend: its request counters and short retry timeout are the
// poll's alone.
func (s *Source) Client() *kgo.Client { return s.cl }

// Close releases the client's connections.
func (s *Source) Close() { s.cl.Close() }

// Check verifies that the cluster answers and lists its brokers.
func (s *Source) Check(ctx context.Context) ([]string, error) {
	bs, err := s.adm.ListBrokers(ctx)
	if err != nil {
		return nil, fmt.Errorf("list brokers of %s: %w", s.name, s.opts.Cluster.AuthError(err))
	}
	var out []string
	for _, b := range bs {
		out = append(out, net.JoinHostPort(b.Host, fmt.Sprint(b.Port)))
	}
	return out, nil
}

// Poll reads every watched group and its lag. It returns an error only when
// nothing could be read; per-group failures are set on the group and listed
// in Snapshot.Partial.
func (s *Source) Poll(ctx context.Context) (*queue.Snapshot, error) {
	start := s.now()
	snap := &queue.Snapshot{Broker: queue.Kafka, Cluster: s.name, Time: start}

	groups, shares, streams, err := s.listGroups(ctx)
	if err != nil {
		return nil, s.opts.Cluster.AuthError(err)
	}
	// Describe and offset fetches go to each group's coordinator. A slow
	// coordinator must cost only its own groups, not the whole poll, so
	// these calls get a share of the deadline and what does not answer in
	// time is marked on the groups it concerns. They go out together.
	groupCtx, cancel := shareOf(ctx, 3)
	names := append(groupNames(groups), streams...)
	if s.opts.DLQTopic != nil {
		names = append(names, s.cursor)
	}
	var committed kadm.FetchOffsetsResponses
	fetched := make(chan struct{})
	go func() {
		defer close(fetched)
		committed = s.adm.FetchManyOffsets(groupCtx, names...)
	}()
	var shared shareRead
	sharesRead := make(chan struct{})
	go func() {
		defer close(sharesRead)
		shared = s.describeShare(groupCtx, shares)
	}()
	var streamed streamsRead
	streamsDone := make(chan struct{})
	go func() {
		defer close(streamsDone)
		streamed = s.describeStreams(groupCtx, streams)
	}()
	var connectors []queue.Connector
	var connectPartial []string
	connectsRead := make(chan struct{})
	go func() {
		defer close(connectsRead)
		connectors, connectPartial = s.readConnects(groupCtx)
	}()
	described := s.describe(groupCtx, groups)
	<-fetched
	<-sharesRead
	<-streamsDone
	<-connectsRead
	cancel()

	// Metadata stays last, just before the offsets are listed. Read
	// alongside the groups, it made listings fail as a whole when one
	// broker was down (TestOneBrokerDown): franz-go routes ListOffsets by
	// its cached metadata, and an older cache sends it asking again.
	meta, err := s.metadata(ctx)
	if err != nil {
		return nil, err
	}
	resolveTopicIDs(described, meta)
	dlqs := s.dlqTopics(meta)
	topics := append(append(consumedTopics(described, committed), shared.topics()...), streamed.topics()...)
	offsets, err := s.listOffsets(ctx, meta, append(topics, topicNames(dlqs)...))
	if err != nil {
		return nil, err
	}
	s.ends.observe(start, offsets)

	for _, g := range groups {
		cg := buildGroup(s.opts, g, described[g.Group], committed[g.Group], offsets)
		if cg.Err != "" {
			snap.Partial = append(snap.Partial, "group "+cg.Name+": "+cg.Err)
		}
		snap.Groups = append(snap.Groups, cg)
	}
	pollShares(s.name, snap, shares, shared, offsets)
	pollStreams(s.opts, snap, streams, streamed, committed, offsets)
	snap.Connectors, snap.Partial = connectors, append(snap.Partial, connectPartial...)
	linkConnectorGroups(snap)
	cursor := committed[s.cursor]
	// A cursor group that does not exist yet just means nothing was
	// replayed: depth counts from the log start.
	if cursor.Err != nil && !errors.Is(cursor.Err, kerr.GroupIDNotFound) {
		snap.Partial = append(snap.Partial, "dlq cursor group "+s.cursor+": "+errString(cursor.Err))
	}
	// The retention settings headroom needs are read while the lag seconds
	// are: a poll that must read both (the first, or one after
	// retentionRefresh) waits for the slower, not for the two in a row.
	retained, lagging := make(chan map[string]topicRetention, 1), laggingTopics(snap.Groups)
	go func() { retained <- s.retentions(ctx, lagging, start) }()
	heads := s.fillLagSeconds(ctx, snap, meta, dlqHeads(dlqs, cursor, offsets), start)
	s.fillHeadroom(snap, offsets, <-retained, start)
	snap.DLQs = s.buildDLQs(dlqs, cursor, offsets, heads, start)

	snap.Partitions = offsets.sorted()
	snap.Duration = s.now().Sub(start)
	return snap, nil
}

// listGroups lists consumer groups and the names of share and streams
// groups, keeping those the filter includes. Connect groups have no consumer offsets to
// measure. One listing serves both kinds: ListGroups without a type filter
// answers every type, with its type, so share and streams groups cost no
// request of their own. When some brokers do not answer, the groups they coordinated
// at the last poll are kept (and will show the error), so an unreachable
// coordinator never makes its groups silently vanish.
func (s *Source) listGroups(ctx context.Context) (groups []kadm.ListedGroup, shares, streams []string, err error) {
	listed, err := s.adm.ListGroups(ctx)
	if err != nil {
		var se *kadm.ShardErrors
		if !errors.As(err, &se) || len(listed) == 0 && se.AllFailed {
			return nil, nil, nil, fmt.Errorf("list groups: %w", err)
		}
		s.log.Warn("some brokers did not list groups", "err", err)
		for _, e := range se.Errs {
			for name, g := range s.listed {
				if _, ok := listed[name]; !ok && g.Coordinator == e.Broker.NodeID {
					listed[name] = g
				}
			}
		}
	}
	s.listed = listed
	for _, g := range listed.Sorted() {
		if g.ProtocolType == "connect" || g.Group == s.cursor {
			continue
		}
		if s.opts.IncludeGroup != nil && !s.opts.IncludeGroup(g.Group) {
			continue
		}
		if g.GroupType == shareType {
			shares = append(shares, g.Group)
			continue
		}
		if g.GroupType == streamsType {
			streams = append(streams, g.Group)
			continue
		}
		groups = append(groups, g)
	}
	return groups, shares, streams, nil
}

// shareOf returns a context with 1/n of ctx's remaining time (all of it when
// ctx has no deadline).
func shareOf(ctx context.Context, n int) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, time.Until(deadline)/time.Duration(n))
}

func groupNames(gs []kadm.ListedGroup) []string {
	names := make([]string, len(gs))
	for i, g := range gs {
		names[i] = g.Group
	}
	return names
}

// described is what describing one group learned, for either protocol.
type described struct {
	state    string
	protocol string
	typ      queue.GroupType
	members  int
	// assigned maps topic → partition → member.
	assigned map[string]map[int32]member
	// assignedIDs holds KIP-848 assignments whose topic came only as an ID.
	assignedIDs map[[16]byte]map[int32]member
	// subscribed topics, whose partitions all count even before a commit.
	subscribed []string
	err        error
}

type member struct{ id, host string }

// clientHost is a member's host as the broker describes it, without the
// leading slash of Java's address format ("/10.0.0.5"), which Apache Kafka
// sends and emulators do not.
func clientHost(h string) string { return strings.TrimPrefix(h, "/") }

// describe describes classic groups with DescribeGroups and KIP-848 groups
// with ConsumerGroupDescribe: the classic call shows no members for the latter.
func (s *Source) describe(ctx context.Context, groups []kadm.ListedGroup) map[string]described {
	var classic, consumer []string
	for _, g := range groups {
		if g.GroupType == string(queue.GroupConsumer) {
			consumer = append(consumer, g.Group)
		} else {
			classic = append(classic, g.Group)
		}
	}
	out := make(map[string]described, len(groups))
	if len(classic) > 0 {
		ds, err := s.adm.DescribeGroups(ctx, classic...)
		for _, name := range classic {
			d, ok := ds[name]
			if !ok {
				out[name] = described{typ: queue.GroupClassic, err: describeErr(err)}
				continue
			}
			out[name] = fromClassic(d)
		}
	}
	if len(consumer) > 0 {
		s.describeConsumerGroups(ctx, consumer, out)
	}
	return out
}

func describeErr(err error) error {
	if err == nil {
		return errors.New("group missing from describe response")
	}
	return err
}

func fromClassic(d kadm.DescribedGroup) described {
	out := described{
		state: d.State, protocol: d.Protocol, typ: queue.GroupClassic,
		members: len(d.Members), assigned: map[string]map[int32]member{}, err: d.Err,
	}
	for _, m := range d.Members {
		if c, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range c.Topics {
				for _, p := range t.Partitions {
					out.assign(t.Topic, p, member{m.ClientID, clientHost(m.ClientHost)})
				}
			}
		}
		if c, ok := m.Join.AsConsumer(); ok {
			out.subscribed = append(out.subscribed, c.Topics...)
		}
	}
	return out
}

// describeConsumerGroups describes KIP-848 groups with a raw
// ConsumerGroupDescribe: assignments may name topics only by ID, which are
// resolved once metadata is known (see resolveTopicIDs).
func (s *Source) describeConsumerGroups(ctx context.Context, groups []string, out map[string]described) {
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = groups
	for _, shard := range s.cl.RequestSharded(ctx, req) {
		if shard.Err != nil {
			for _, g := range shard.Req.(*kmsg.ConsumerGroupDescribeRequest).Groups {
				out[g] = described{typ: queue.GroupConsumer, err: shard.Err}
			}
			continue
		}
		for _, rg := range shard.Resp.(*kmsg.ConsumerGroupDescribeResponse).Groups {
			out[rg.Group] = fromConsumer(rg)
		}
	}
	for _, g := range groups {
		if _, ok := out[g]; !ok {
			out[g] = described{typ: queue.GroupConsumer, err: describeErr(nil)}
		}
	}
}

func fromConsumer(rg kmsg.ConsumerGroupDescribeResponseGroup) described {
	out := described{
		state: rg.State, protocol: rg.AssignorName, typ: queue.GroupConsumer,
		members: len(rg.Members), assigned: map[string]map[int32]member{},
		err: kerr.ErrorForCode(rg.ErrorCode),
	}
	for _, m := range rg.Members {
		mb := member{m.ClientID, clientHost(m.ClientHost)}
		for _, t := range m.Assignment.TopicPartitions {
			for _, p := range t.Partitions {
				if t.Topic != "" {
					out.assign(t.Topic, p, mb)
					continue
				}
				if out.assignedIDs == nil {
					out.assignedIDs = map[[16]byte]map[int32]member{}
				}
				if out.assignedIDs[t.TopicID] == nil {
					out.assignedIDs[t.TopicID] = map[int32]member{}
				}
				out.assignedIDs[t.TopicID][p] = mb
			}
		}
		out.subscribed = append(out.subscribed, m.SubscribedTopics...)
	}
	return out
}

// resolveTopicIDs names the topics that KIP-848 assignments gave only by ID.
func resolveTopicIDs(ds map[string]described, meta map[tp]partitionMeta) {
	names := map[[16]byte]string{}
	for k, m := range meta {
		names[m.topicID] = k.topic
	}
	for g, d := range ds {
		for id, ps := range d.assignedIDs {
			name, ok := names[id]
			if !ok {
				continue
			}
			for p, m := range ps {
				d.assign(name, p, m)
			}
		}
		d.assignedIDs = nil
		ds[g] = d
	}
}

func (d *described) assign(topic string, p int32, m member) {
	if d.assigned[topic] == nil {
		d.assigned[topic] = map[int32]member{}
	}
	d.assigned[topic][p] = m
}

// consumedTopics is the union, over all groups, of topics with a commit, an
// assignment or a subscription: the only topics whose offsets are listed.
func consumedTopics(ds map[string]described, committed kadm.FetchOffsetsResponses) []string {
	set := map[string]struct{}{}
	for _, d := range ds {
		for t := range d.assigned {
			set[t] = struct{}{}
		}
		for _, t := range d.subscribed {
			set[t] = struct{}{}
		}
	}
	for _, r := range committed {
		for t := range r.Fetched {
			set[t] = struct{}{}
		}
	}
	topics := make([]string, 0, len(set))
	for t := range set {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	return topics
}

// requestCounter counts requests written per request key, for the poll-cost
// benchmark and tests.
type requestCounter struct{ byKey [128]atomic.Int64 }

func (r *requestCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err == nil && key >= 0 && int(key) < len(r.byKey) {
		r.byKey[key].Add(1)
	}
}

func (r *requestCounter) count(key int16) int64 {
	if key >= 0 {
		return r.byKey[key].Load()
	}
	var n int64
	for i := range r.byKey {
		n += r.byKey[i].Load()
	}
	return n
}

var _ kgo.HookBrokerWrite = (*requestCounter)(nil)

// errString is an error's text, or "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimSpace(err.Error())
}
