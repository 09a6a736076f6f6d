package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/offsets"
)

// ShareResets is the offsets.Broker of one Kafka cluster's share groups
// (KIP-932): a share group's "committed offset" is its share-partition
// start offset (SPSO), read with DescribeShareGroupOffsets and moved with
// AlterShareGroupOffsets, which the broker accepts only while the group
// has no members. Log bounds, a time's offsets and the target records'
// timestamps are read as for consumer groups. Close it when done.
type ShareResets struct {
	*Resets
}

var (
	_ offsets.Broker = (*ShareResets)(nil)
	_ offsets.Kinded = (*ShareResets)(nil)
)

// NewShare creates the admin client of cluster kc; it connects on first use.
func NewShare(kc *brokerkafka.Cluster) (*ShareResets, error) {
	r, err := New(kc)
	if err != nil {
		return nil, err
	}
	return &ShareResets{Resets: r}, nil
}

// Kind is offsets.KindShare.
func (s *ShareResets) Kind() string { return offsets.KindShare }

// Describe returns the share group's state and members, after checking
// the cluster offers share-group resets at all. A group the cluster does
// not know is Dead, as kafka-share-groups treats it (it may be reset: the
// broker creates it).
func (s *ShareResets) Describe(ctx context.Context, group string) (offsets.GroupInfo, error) {
	if err := s.supported(ctx); err != nil {
		return offsets.GroupInfo{}, err
	}
	ds, err := s.adm.DescribeShareGroups(ctx, group)
	if err != nil {
		return offsets.GroupInfo{}, fmt.Errorf("describe share group %s: %w", group, err)
	}
	d, ok := ds[group]
	switch {
	case !ok:
		return offsets.GroupInfo{}, fmt.Errorf("describe share group %s: not in the answer", group)
	case errors.Is(d.Err, kerr.GroupIDNotFound):
		return offsets.GroupInfo{State: "Dead"}, s.notOtherGroup(ctx, group)
	case d.Err != nil:
		return offsets.GroupInfo{}, fmt.Errorf("describe share group %s: %w", group, d.Err)
	}
	g := offsets.GroupInfo{State: titled(d.GroupState)}
	for _, m := range d.Members {
		g.Members = append(g.Members, offsets.Member{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost})
	}
	return g, nil
}

// notOtherGroup fails when group, unknown as a share group, is a group
// of another type (a consumer group): the broker would refuse its reset
// at apply, and the plan would call it Dead.
func (s *ShareResets) notOtherGroup(ctx context.Context, group string) error {
	listed, err := s.adm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	if g, ok := listed[group]; ok && g.GroupType != "share" {
		return fmt.Errorf("%w: %s is a %s group, not a share group (reset it with --group, or on its group page)", offsets.ErrScope, group, cmp.Or(g.GroupType, "classic"))
	}
	return nil
}

// supported fails, naming the release, unless every broker offers
// AlterShareGroupOffsets: Kafka 4.0 has share groups only as early
// access, off by default, and answers none of their requests.
func (s *ShareResets) supported(ctx context.Context) error {
	vs, err := s.adm.ApiVersions(ctx)
	if err != nil {
		return fmt.Errorf("api versions: %w", err)
	}
	for _, v := range vs.Sorted() {
		if v.Err != nil {
			return fmt.Errorf("api versions of broker %d: %w", v.NodeID, v.Err)
		}
		if _, ok := v.KeyMaxVersion(kmsg.AlterShareGroupOffsets.Int16()); !ok {
			return fmt.Errorf("%w: broker %d (Kafka %s, by its API versions) does not offer AlterShareGroupOffsets: share groups and their resets need Kafka 4.1 or later (production-ready since 4.2)",
				offsets.ErrUnsupported, v.NodeID, v.VersionGuess())
		}
	}
	return nil
}

// Positions reads the group's start offsets and the log bounds and, for a
// timestamp, the time's offsets, on every partition of req's scope: the
// partitions named, or every partition of the topics the group has a start
// offset on. Only the specs kafka-share-groups --reset-offsets offers are
// read: earliest, latest, timestamp and offset; shift and group are
// refused, since a share group acknowledges records one by one and has no
// committed position to shift or copy.
func (s *ShareResets) Positions(ctx context.Context, req offsets.Request) ([]offsets.Position, error) {
	switch req.To.Kind {
	case offsets.Shift, offsets.Group:
		return nil, fmt.Errorf("%w %q: a share group can be reset to earliest, latest, timestamp:<RFC 3339> or offset:<N> (as kafka-share-groups --reset-offsets offers), not %s",
			offsets.ErrSpec, req.To, req.To.Kind)
	}
	starts, err := s.startOffsets(ctx, req.Group)
	if err != nil {
		return nil, err
	}
	scope, err := s.scope(ctx, req.Topics, starts)
	if err != nil {
		return nil, err
	}
	topics := slices.Sorted(maps.Keys(scope))
	if len(topics) == 0 {
		return nil, fmt.Errorf("%w: share group %s has no start offsets: name the topics with --topic", offsets.ErrScope, req.Group)
	}
	logStarts, err := s.list("log start", scope, func() (kadm.ListedOffsets, error) { return s.adm.ListStartOffsets(ctx, topics...) })
	if err != nil {
		return nil, err
	}
	ends, err := s.list("log end", scope, func() (kadm.ListedOffsets, error) { return s.adm.ListEndOffsets(ctx, topics...) })
	if err != nil {
		return nil, err
	}
	var afterTime map[offsets.TP]int64
	if req.To.Kind == offsets.Timestamp {
		afterTime, err = s.list("offset after "+req.To.Time.String(), scope, func() (kadm.ListedOffsets, error) {
			return s.adm.ListOffsetsAfterMilli(ctx, max(req.To.Time.UnixMilli(), 0), topics...) // < 0 is a special offset
		})
		if err != nil {
			return nil, err
		}
	}
	var out []offsets.Position
	for _, t := range topics {
		for _, p := range scope[t] {
			tp := offsets.TP{Topic: t, Partition: p}
			pos := offsets.Position{Topic: t, Partition: p, LogStart: logStarts[tp], LogEnd: ends[tp], Current: lookup(starts, tp)}
			if at, ok := afterTime[tp]; ok && at >= 0 && at < pos.LogEnd {
				pos.AfterTime = &at
			}
			out = append(out, pos)
		}
	}
	return out, nil
}

// startOffsets returns the share group's start offsets; a partition no
// member has fetched yet (start offset -1) is missing, like a partition
// without a commit.
func (s *ShareResets) startOffsets(ctx context.Context, group string) (map[offsets.TP]int64, error) {
	resp, err := s.adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("describe start offsets of share group %s: %w", group, err)
	}
	d, ok := resp[group]
	switch {
	case !ok:
		return nil, fmt.Errorf("describe start offsets of share group %s: not in the answer", group)
	case errors.Is(d.Err, kerr.GroupIDNotFound):
		return map[offsets.TP]int64{}, nil
	case d.Err != nil:
		return nil, fmt.Errorf("describe start offsets of share group %s: %w", group, d.Err)
	}
	out := map[offsets.TP]int64{}
	for _, o := range d.Offsets.Sorted() {
		if o.Err != nil {
			return nil, fmt.Errorf("describe start offsets of share group %s: %s[%d]: %w", group, o.Topic, o.Partition, o.Err)
		}
		if o.StartOffset >= 0 {
			out[offsets.TP{Topic: o.Topic, Partition: o.Partition}] = o.StartOffset
		}
	}
	return out, nil
}

// Committed returns the share group's start offsets on parts.
func (s *ShareResets) Committed(ctx context.Context, group string, parts []offsets.TP) (map[offsets.TP]int64, error) {
	all, err := s.startOffsets(ctx, group)
	if err != nil {
		return nil, err
	}
	return only(all, parts), nil
}

// Commit moves the start offsets with AlterShareGroupOffsets and returns
// each partition's refusal. The broker also forgets the records in flight
// on those partitions: what was acknowledged past the old start offset is
// delivered again when the new one is below it.
func (s *ShareResets) Commit(ctx context.Context, group string, to map[offsets.TP]int64) (map[offsets.TP]error, error) {
	if len(to) == 0 {
		return nil, nil
	}
	resp, err := s.adm.AlterShareGroupOffsets(ctx, group, asKadm(to))
	if err != nil {
		return nil, fmt.Errorf("alter start offsets of share group %s: %w", group, err)
	}
	out := map[offsets.TP]error{}
	for tp := range to {
		perr, ok := resp.Lookup(tp.Topic, tp.Partition)
		switch {
		case !ok:
			out[tp] = errors.New("no answer from the broker")
		case perr != nil:
			out[tp] = perr
		}
	}
	return out, nil
}
