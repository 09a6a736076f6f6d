// Package kafka reads and commits consumer-group offsets for offset resets
// (package offsets) on one Kafka cluster, through brokers/kafka.Cluster and
// kadm: DescribeGroups for the state and members, FetchOffsets for the
// commits, ListStartOffsets/ListEndOffsets/ListOffsetsAfterMilli for the
// log's bounds and a time's offset, a short consume for the target records'
// timestamps, and CommitOffsets.
//
// It decides nothing: what a spec means, when to refuse and what to report
// are package offsets'. Every read that fails names the partition, and
// fails the plan: a plan built on a partial read would be one the operator
// cannot trust.
package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
)

// Resets is the offsets.Broker of one Kafka cluster. Close it when done.
type Resets struct {
	kc            *brokerkafka.Cluster
	cl            *kgo.Client
	adm           *kadm.Client
	readCommitted bool
}

var _ offsets.Broker = (*Resets)(nil)

// Option configures Resets.
type Option func(*Resets)

// ReadCommitted reads the target records' timestamps as a read_committed
// consumer would (the cluster's isolation: read_committed): records of
// aborted transactions are passed over, as the group's consumers will
// pass them over. Targets are the same either way: like
// kafka-consumer-groups, they come from ListOffsets read_uncommitted.
func ReadCommitted() Option { return func(r *Resets) { r.readCommitted = true } }

// New creates the admin client of cluster kc; it connects on first use.
func New(kc *brokerkafka.Cluster, opts ...Option) (*Resets, error) {
	cl, err := kc.NewClient()
	if err != nil {
		return nil, err
	}
	r := &Resets{kc: kc, cl: cl, adm: kadm.NewClient(cl)}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// Close closes the admin client.
func (r *Resets) Close() { r.cl.Close() }

// Broker is "kafka".
func (r *Resets) Broker() string { return string(queue.Kafka) }

// Cluster is the configured cluster name.
func (r *Resets) Cluster() string { return r.kc.Name() }

// Describe returns the group's state and members. A group the cluster
// does not know is Dead, as Kafka describes it.
func (r *Resets) Describe(ctx context.Context, group string) (offsets.GroupInfo, error) {
	ds, err := r.adm.DescribeGroups(ctx, group)
	if err != nil {
		return offsets.GroupInfo{}, fmt.Errorf("describe group %s: %w", group, err)
	}
	d, ok := ds[group]
	switch {
	case !ok:
		return offsets.GroupInfo{}, fmt.Errorf("describe group %s: not in the answer", group)
	case errors.Is(d.Err, kerr.GroupIDNotFound):
		// A broker with the KIP-848 coordinator answers a classic describe
		// of a consumer-protocol group so ("not a classic group"), live
		// members and all, as well as of a group it does not know: only
		// ConsumerGroupDescribe tells them apart.
		return r.describeConsumer(ctx, group)
	case d.Err != nil:
		return offsets.GroupInfo{}, fmt.Errorf("describe group %s: %w", group, d.Err)
	}
	g := offsets.GroupInfo{State: d.State}
	for _, m := range d.Members {
		g.Members = append(g.Members, offsets.Member{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost})
	}
	if len(g.Members) == 0 && !g.Resettable() {
		// Other brokers describe a consumer-protocol group as a classic
		// one with its state but no members: name them from
		// ConsumerGroupDescribe, keeping the classic answer if that fails
		// (the state alone already refuses the apply).
		if c, err := r.describeConsumer(ctx, group); err == nil && c.State != "Dead" {
			return c, nil
		}
	}
	return g, nil
}

// describeConsumer describes a consumer-protocol (KIP-848) group; a group
// unknown to this protocol too is Dead.
func (r *Resets) describeConsumer(ctx context.Context, group string) (offsets.GroupInfo, error) {
	cs, err := r.adm.DescribeConsumerGroups(ctx, group)
	if err != nil {
		return offsets.GroupInfo{}, fmt.Errorf("describe consumer group %s: %w", group, err)
	}
	c, ok := cs[group]
	switch {
	case !ok:
		return offsets.GroupInfo{}, fmt.Errorf("describe consumer group %s: not in the answer", group)
	case errors.Is(c.Err, kerr.GroupIDNotFound):
		return offsets.GroupInfo{State: "Dead"}, r.notStreamsGroup(ctx, group)
	case c.Err != nil:
		return offsets.GroupInfo{}, fmt.Errorf("describe consumer group %s: %w", group, c.Err)
	}
	// ConsumerGroupDescribe spells states in lower case ("empty").
	g := offsets.GroupInfo{State: titled(c.State)}
	for _, m := range c.Members {
		g.Members = append(g.Members, offsets.Member{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost})
	}
	return g, nil
}

// notStreamsGroup fails when group, unknown to both consumer-group
// describes, is a Kafka Streams application's streams group (KIP-1071):
// planned as Dead, its reset would go ahead while the application runs,
// and a commit alone leaves its state stores and repartition topics where
// they were (kafka-streams-groups --reset-offsets --execute deletes them).
func (r *Resets) notStreamsGroup(ctx context.Context, group string) error {
	listed, err := r.adm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	if g, ok := listed[group]; ok && g.GroupType == "streams" {
		return fmt.Errorf("%w: %s is a streams group (a Kafka Streams application, KIP-1071): queuewatch does not reset it; stop the application and use kafka-streams-groups --reset-offsets, which also deletes its internal topics", offsets.ErrScope, group)
	}
	return nil
}

// titled is s with its first letter in upper case, as classic states read.
func titled(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Positions reads the group's commits, the log bounds and, for the spec's
// kind, the time's offsets or the other group's commits, on every
// partition of req's scope.
func (r *Resets) Positions(ctx context.Context, req offsets.Request) ([]offsets.Position, error) {
	commits, err := r.fetch(ctx, req.Group)
	if err != nil {
		return nil, err
	}
	scope, err := r.scope(ctx, req.Topics, commits)
	if err != nil {
		return nil, err
	}
	topics := slices.Sorted(maps.Keys(scope))
	if len(topics) == 0 {
		return nil, fmt.Errorf("%w: group %s has no committed offsets: name the topics with --topic", offsets.ErrScope, req.Group)
	}
	starts, err := r.list("log start", scope, func() (kadm.ListedOffsets, error) { return r.adm.ListStartOffsets(ctx, topics...) })
	if err != nil {
		return nil, err
	}
	ends, err := r.list("log end", scope, func() (kadm.ListedOffsets, error) { return r.adm.ListEndOffsets(ctx, topics...) })
	if err != nil {
		return nil, err
	}
	var afterTime map[offsets.TP]int64
	var other map[offsets.TP]int64
	switch req.To.Kind {
	case offsets.Timestamp:
		afterTime, err = r.list("offset after "+req.To.Time.String(), scope, func() (kadm.ListedOffsets, error) {
			return r.adm.ListOffsetsAfterMilli(ctx, max(req.To.Time.UnixMilli(), 0), topics...) // < 0 is a special offset
		})
		if err != nil {
			return nil, err
		}
	case offsets.Group:
		if other, err = r.fetch(ctx, req.To.Group); err != nil {
			return nil, err
		}
	}
	var out []offsets.Position
	for _, t := range topics {
		for _, p := range scope[t] {
			tp := offsets.TP{Topic: t, Partition: p}
			pos := offsets.Position{
				Topic: t, Partition: p, LogStart: starts[tp], LogEnd: ends[tp],
				Current: lookup(commits, tp), Other: lookup(other, tp),
			}
			// Kafka answers -1, or the end offset, when no record is at or
			// after the time; either way there is none to start from.
			if at, ok := afterTime[tp]; ok && at >= 0 && at < pos.LogEnd {
				pos.AfterTime = &at
			}
			out = append(out, pos)
		}
	}
	return out, nil
}

func lookup(m map[offsets.TP]int64, tp offsets.TP) *int64 {
	if o, ok := m[tp]; ok {
		return &o
	}
	return nil
}

// scope is every partition a plan covers, by topic: the partitions named,
// or every partition of the topics named, or every partition of the topics
// the group has commits on.
func (r *Resets) scope(ctx context.Context, named []offsets.TopicScope, commits map[offsets.TP]int64) (map[string][]int32, error) {
	var topics []string
	if len(named) == 0 {
		for tp := range commits {
			topics = append(topics, tp.Topic)
		}
	} else {
		for _, ts := range named {
			topics = append(topics, ts.Topic)
		}
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	if len(topics) == 0 {
		return nil, nil
	}
	details, err := r.adm.ListTopics(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	exists := func(t string) (kadm.TopicDetail, error) {
		d, ok := details[t]
		switch {
		case !ok:
			return d, fmt.Errorf("%w: topic %s: %w", offsets.ErrScope, t, kerr.UnknownTopicOrPartition)
		case errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			return d, fmt.Errorf("%w: topic %s: %w", offsets.ErrScope, t, d.Err)
		case d.Err != nil:
			return d, fmt.Errorf("topic %s: %w", t, d.Err)
		}
		return d, nil
	}
	out := map[string][]int32{}
	for _, t := range topics {
		d, err := exists(t)
		if err != nil {
			return nil, err
		}
		if len(named) == 0 {
			out[t] = d.Partitions.Numbers()
		}
	}
	for _, ts := range named {
		d, _ := exists(ts.Topic)
		if len(ts.Partitions) == 0 {
			out[ts.Topic] = append(out[ts.Topic], d.Partitions.Numbers()...)
			continue
		}
		for _, p := range ts.Partitions {
			if _, ok := d.Partitions[p]; !ok {
				return nil, fmt.Errorf("%w: topic %s has no partition %d (it has %d)", offsets.ErrScope, ts.Topic, p, len(d.Partitions))
			}
		}
		out[ts.Topic] = append(out[ts.Topic], ts.Partitions...)
	}
	for t, ps := range out {
		slices.Sort(ps)
		out[t] = slices.Compact(ps)
	}
	return out, nil
}

// fetch returns a group's committed offsets; a partition without a commit
// is missing.
func (r *Resets) fetch(ctx context.Context, group string) (map[offsets.TP]int64, error) {
	resp, err := r.adm.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		// A group the broker does not know has no commits.
		return map[offsets.TP]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fetch offsets of group %s: %w", group, err)
	}
	out := map[offsets.TP]int64{}
	for _, o := range resp.Sorted() {
		if o.Err != nil {
			return nil, fmt.Errorf("fetch offsets of group %s: %s[%d]: %w", group, o.Topic, o.Partition, o.Err)
		}
		if o.At >= 0 {
			out[offsets.TP{Topic: o.Topic, Partition: o.Partition}] = o.At
		}
	}
	return out, nil
}

// list runs one ListOffsets and returns the offset of every partition in
// scope, failing on the first partition it could not read.
func (r *Resets) list(what string, scope map[string][]int32, call func() (kadm.ListedOffsets, error)) (map[offsets.TP]int64, error) {
	listed, err := call()
	// Shard errors leave the partitions of the brokers that failed out of
	// the answer; the loop below names them.
	if se := (*kadm.ShardErrors)(nil); err != nil && !errors.As(err, &se) {
		return nil, fmt.Errorf("list %s offsets: %w", what, err)
	}
	out := map[offsets.TP]int64{}
	for t, ps := range scope {
		for _, p := range ps {
			o, ok := listed.Lookup(t, p)
			switch {
			case !ok && err != nil:
				return nil, fmt.Errorf("list %s offsets: %s[%d]: %w", what, t, p, err)
			case !ok:
				return nil, fmt.Errorf("list %s offsets: %s[%d]: no answer", what, t, p)
			case o.Err != nil:
				return nil, fmt.Errorf("list %s offsets: %s[%d]: %w", what, t, p, o.Err)
			}
			out[offsets.TP{Topic: t, Partition: p}] = o.Offset
		}
	}
	return out, nil
}

// Timestamps consumes the first record at or after each offset and returns
// its timestamp. It stops when every partition gave one or ctx ends.
//
// Transaction markers (control records) are kept in the fetch, not used:
// a target at or after the last data record of a transactional topic is
// followed only by markers, and the marker at the high watermark says so at
// once (a zero time) instead of the wait running to ctx's end.
func (r *Resets) Timestamps(ctx context.Context, at map[offsets.TP]int64) map[offsets.TP]time.Time {
	out := map[offsets.TP]time.Time{}
	if len(at) == 0 {
		return out
	}
	consume := map[string]map[int32]kgo.Offset{}
	for tp, o := range at {
		if consume[tp.Topic] == nil {
			consume[tp.Topic] = map[int32]kgo.Offset{}
		}
		consume[tp.Topic][tp.Partition] = kgo.NewOffset().At(o)
	}
	opts := []kgo.Opt{kgo.ConsumePartitions(consume), kgo.FetchMaxPartitionBytes(1 << 20), kgo.KeepControlRecords()}
	if r.readCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := r.kc.NewClient(opts...)
	if err != nil {
		return out
	}
	defer cl.Close()
	// A partition whose fetch fails (denied, deleted) gives no timestamp:
	// stop waiting for it rather than spin until ctx ends.
	failed := map[offsets.TP]bool{}
	for len(out)+len(failed) < len(at) && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				failed[offsets.TP{Topic: t, Partition: p}] = true
			}
		})
		fs.EachPartition(func(fp kgo.FetchTopicPartition) {
			tp := offsets.TP{Topic: fp.Topic, Partition: fp.Partition}
			if ts, ok := firstRecord(fp, at[tp]); ok {
				if _, done := out[tp]; !done {
					out[tp] = ts
					cl.PauseFetchPartitions(map[string][]int32{fp.Topic: {fp.Partition}})
				}
			}
		})
	}
	return out
}

// firstRecord is the timestamp of fp's first data record at or after
// offset, or a zero time when fp ends with a transaction marker at the
// high watermark with no data record before it: nothing is left to read.
// It is false when fp does not tell yet.
func firstRecord(fp kgo.FetchTopicPartition, offset int64) (time.Time, bool) {
	for _, rec := range fp.Records {
		switch {
		case rec.Offset < offset:
		case !rec.Attrs.IsControl():
			return rec.Timestamp.UTC(), true
		case rec.Offset+1 >= fp.HighWatermark:
			return time.Time{}, true
		}
	}
	return time.Time{}, false
}

// Committed returns the group's committed offsets on parts.
func (r *Resets) Committed(ctx context.Context, group string, parts []offsets.TP) (map[offsets.TP]int64, error) {
	all, err := r.fetch(ctx, group)
	if err != nil {
		return nil, err
	}
	return only(all, parts), nil
}

// only is the offsets of all on parts (those it has).
func only(all map[offsets.TP]int64, parts []offsets.TP) map[offsets.TP]int64 {
	out := map[offsets.TP]int64{}
	for _, tp := range parts {
		if o, ok := all[tp]; ok {
			out[tp] = o
		}
	}
	return out
}

// asKadm is to as kadm.Offsets, with no leader epoch.
func asKadm(to map[offsets.TP]int64) kadm.Offsets {
	os := make(kadm.Offsets)
	for tp, o := range to {
		os.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: o, LeaderEpoch: -1})
	}
	return os
}

// Commit commits the offsets with kadm CommitOffsets and returns each
// partition's refusal.
func (r *Resets) Commit(ctx context.Context, group string, to map[offsets.TP]int64) (map[offsets.TP]error, error) {
	if len(to) == 0 {
		return nil, nil
	}
	resp, err := r.adm.CommitOffsets(ctx, group, asKadm(to))
	if err != nil {
		return nil, fmt.Errorf("commit offsets of group %s: %w", group, err)
	}
	out := map[offsets.TP]error{}
	for tp := range to {
		o, ok := resp.Lookup(tp.Topic, tp.Partition)
		switch {
		case !ok:
			out[tp] = errors.New("no answer from the broker")
		case o.Err != nil:
			out[tp] = o.Err
		}
	}
	return out, nil
}
