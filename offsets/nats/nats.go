// Package nats resets and pauses JetStream consumers for package offsets,
// through brokers/nats.Client, the one raw JetStream API client:
// CONSUMER.INFO and STREAM.INFO for the plan, STREAM.MSG.GET for a time's
// sequence and the target message's time, CONSUMER.RESET for the commit
// and CONSUMER.PAUSE for pause and resume.
//
// A consumer is an offsets "group" named <stream>/<consumer>, with one
// "partition": the stream, partition 0. Its offset is the next stream
// sequence it delivers (delivered stream sequence + 1), which is also what
// CONSUMER.RESET takes and where a reset consumer stands. The ack floor is
// the position's Mark: apply refuses as stale when it moved.
//
// A consumer is Empty (safe to reset) when no push subscriber is bound and
// no pull request waits, Paused when it is paused (it delivers nothing
// until resumed, so a reset lands before anyone reads), and Active
// otherwise: apply is refused then, as for a Kafka group with members.
//
// It decides nothing; what a spec means and when to refuse are package
// offsets'.
package nats

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
)

// Resets is the offsets.Broker of one NATS cluster. Close it when done.
type Resets struct {
	c  *brokernats.Cluster
	mu sync.Mutex
	cl *brokernats.Client
}

var (
	_ offsets.Broker          = (*Resets)(nil)
	_ offsets.PendingCounter  = (*Resets)(nil)
	_ offsets.GroupTimestamps = (*Resets)(nil)
	_ offsets.Pauser          = (*Resets)(nil)
)

// New is the reset access of cluster c; it connects on first use.
func New(c *brokernats.Cluster) *Resets { return &Resets{c: c} }

// Close closes the connection, if one was made.
func (r *Resets) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cl != nil {
		r.cl.Close()
		r.cl = nil
	}
}

// Broker is "nats".
func (r *Resets) Broker() string { return string(queue.NATS) }

// Cluster is the configured cluster name.
func (r *Resets) Cluster() string { return r.c.Name() }

// client returns the cluster's JetStream client, connecting when there
// is none or it was lost (brokers/nats connections do not reconnect by
// themselves).
func (r *Resets) client(ctx context.Context) (*brokernats.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cl != nil && r.cl.IsConnected() {
		return r.cl, nil
	}
	if r.cl != nil {
		r.cl.Close()
	}
	cl, err := r.c.NewClient(ctx, "offsets", nil)
	if err != nil {
		return nil, err
	}
	r.cl = cl
	return cl, nil
}

// unsupported names a server that has no responder for a JetStream API
// request (one older than the request) with its version.
func unsupported(cl *brokernats.Client, subject string, err error) error {
	if errors.Is(err, natsgo.ErrNoResponders) {
		return fmt.Errorf("%w: nats-server %s does not answer $JS.API.%s", offsets.ErrUnsupported, cl.ServerVersion(), subject)
	}
	return err
}

// ParseGroup splits a consumer's group name, <stream>/<consumer>. Neither
// name can hold a '/' (nats-server refuses path separators in them).
func ParseGroup(group string) (stream, consumer string, err error) {
	stream, consumer, ok := strings.Cut(group, "/")
	if !ok || stream == "" || consumer == "" || strings.Contains(consumer, "/") {
		return "", "", fmt.Errorf("%w: %q: a JetStream consumer is named <stream>/<consumer>, like ORDERS/billing", offsets.ErrScope, group)
	}
	for _, n := range []string{stream, consumer} {
		if !validName(n) {
			return "", "", fmt.Errorf("%w: %q is not a JetStream name (no spaces, control characters, '.', '*', '>' or '\\')", offsets.ErrScope, n)
		}
	}
	return stream, consumer, nil
}

// validName reports whether n can be a stream or consumer name: both go
// into an API subject, which such characters would break or widen.
func validName(n string) bool {
	return utf8.ValidString(n) && !strings.ContainsFunc(n, func(r rune) bool {
		return !unicode.IsPrint(r) || unicode.IsSpace(r) || strings.ContainsRune(".*>\\", r)
	})
}

// consumer reads the consumer's info; an unknown stream or consumer is
// an offsets.ErrScope.
func (r *Resets) consumer(ctx context.Context, group string) (*jetstream.ConsumerInfo, error) {
	stream, name, err := ParseGroup(group)
	if err != nil {
		return nil, err
	}
	cl, err := r.client(ctx)
	if err != nil {
		return nil, err
	}
	c, err := cl.JetStream().Consumer(ctx, stream, name)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return nil, fmt.Errorf("%w: nats %s has no stream %s", offsets.ErrScope, r.c.Name(), stream)
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		return nil, fmt.Errorf("%w: stream %s has no consumer %s", offsets.ErrScope, stream, name)
	case err != nil:
		return nil, fmt.Errorf("consumer info %s: %w", group, err)
	}
	return c.CachedInfo(), nil
}

// Describe says whether the consumer is Empty, Paused or Active, and names
// what makes it active: a bound push subscriber, waiting pull requests.
// It refuses a server without CONSUMER.RESET, naming its version.
func (r *Resets) Describe(ctx context.Context, group string) (offsets.GroupInfo, error) {
	cl, err := r.client(ctx)
	if err != nil {
		return offsets.GroupInfo{}, err
	}
	if err := Supports(cl.ServerVersion(), Reset); err != nil {
		return offsets.GroupInfo{}, fmt.Errorf("nats %s: %w", r.c.Name(), err)
	}
	info, err := r.consumer(ctx, group)
	if err != nil {
		return offsets.GroupInfo{}, err
	}
	return describe(info), nil
}

// describe is the offsets view of a consumer's state.
func describe(info *jetstream.ConsumerInfo) offsets.GroupInfo {
	g := offsets.GroupInfo{State: "Empty", Members: []offsets.Member{}}
	if info.PushBound {
		g.Members = append(g.Members, offsets.Member{ID: "push subscriber", Host: info.Config.DeliverSubject})
	}
	if info.NumWaiting > 0 {
		g.Members = append(g.Members, offsets.Member{ID: strconv.Itoa(info.NumWaiting) + " waiting pull request(s)"})
	}
	switch {
	case info.Paused:
		g.State = "Paused"
	case len(g.Members) > 0:
		g.State = "Active"
	}
	return g
}

// Positions reads the consumer and its stream: where it stands, the
// stream's first and next sequence (raised to where the consumer's deliver
// policy lets a reset go), and the spec's time or other consumer.
func (r *Resets) Positions(ctx context.Context, req offsets.Request) ([]offsets.Position, error) {
	stream, _, err := ParseGroup(req.Group)
	if err != nil {
		return nil, err
	}
	if err := scope(stream, req.Topics); err != nil {
		return nil, err
	}
	info, err := r.consumer(ctx, req.Group)
	if err != nil {
		return nil, err
	}
	first, next, err := r.bounds(ctx, stream)
	if err != nil {
		return nil, err
	}
	least, err := r.leastReset(ctx, info, next)
	if err != nil {
		return nil, err
	}
	current := int64(info.Delivered.Stream) + 1
	pending := int64(info.NumPending)
	pos := offsets.Position{
		Topic: stream, Current: &current, LogStart: max(first, least), LogEnd: max(next, least),
		Mark: "ack_floor=" + strconv.FormatUint(info.AckFloor.Stream, 10), Pending: &pending,
	}
	switch req.To.Kind {
	case offsets.Timestamp:
		seq, err := r.seqAt(ctx, stream, req.To.Time)
		if err == nil {
			pos.AfterTime = &seq
		} else if !errors.Is(err, brokernats.ErrNoMessage) {
			return nil, err
		}
	case offsets.Group:
		other, err := r.other(ctx, stream, req.To.Group)
		if err != nil {
			return nil, err
		}
		o := int64(other.Delivered.Stream) + 1
		pos.Other = &o
	}
	return []offsets.Position{pos}, nil
}

// scope checks a request's topics name the consumer's stream only: a
// consumer reads one stream, its one "partition".
func scope(stream string, topics []offsets.TopicScope) error {
	for _, t := range topics {
		if t.Topic != stream || len(t.Partitions) > 1 || (len(t.Partitions) == 1 && t.Partitions[0] != 0) {
			return fmt.Errorf("%w: %s: a JetStream consumer reads one stream, %s (partition 0); leave the scope out or name %s", offsets.ErrScope, t, stream, stream)
		}
	}
	return nil
}

// bounds reads the stream's first sequence and the one its next message
// will get.
func (r *Resets) bounds(ctx context.Context, stream string) (first, next int64, err error) {
	cl, err := r.client(ctx)
	if err != nil {
		return 0, 0, err
	}
	s, err := cl.JetStream().Stream(ctx, stream)
	if err != nil {
		return 0, 0, fmt.Errorf("stream info %s: %w", stream, err)
	}
	st := s.CachedInfo().State
	return int64(st.FirstSeq), int64(st.LastSeq) + 1, nil
}

// leastReset is the lowest sequence nats-server lets the consumer be reset
// to: its deliver policy's start (it answers "below start seq" or "below
// start time" under it). Policies it refuses outright (new, last,
// last_per_subject: "not allowed") are refused here, before a plan is
// made that apply could never commit.
func (r *Resets) leastReset(ctx context.Context, info *jetstream.ConsumerInfo, next int64) (int64, error) {
	cfg := info.Config
	switch cfg.DeliverPolicy {
	case jetstream.DeliverAllPolicy:
		return 1, nil
	case jetstream.DeliverByStartSequencePolicy:
		return int64(cfg.OptStartSeq), nil
	case jetstream.DeliverByStartTimePolicy:
		if cfg.OptStartTime == nil {
			return 1, nil
		}
		seq, err := r.seqAt(ctx, info.Stream, *cfg.OptStartTime)
		if errors.Is(err, brokernats.ErrNoMessage) {
			return next, nil
		}
		return seq, err
	}
	return 0, fmt.Errorf("%w: consumer %s/%s has deliver policy %s: nats-server resets only consumers that deliver all, by_start_sequence or by_start_time",
		offsets.ErrUnsupported, info.Stream, info.Name, cfg.DeliverPolicy)
}

// other is the consumer a group: spec copies: another consumer of the same
// stream, named C or <stream>/C.
func (r *Resets) other(ctx context.Context, stream, name string) (*jetstream.ConsumerInfo, error) {
	if s, c, ok := strings.Cut(name, "/"); ok {
		if s != stream {
			return nil, fmt.Errorf("%w: group:%s: a consumer can copy only another consumer of its stream, %s", offsets.ErrSpec, name, stream)
		}
		name = c
	}
	return r.consumer(ctx, stream+"/"+name)
}

// Timestamps reads the time of the first stream message at or after each
// sequence, whatever its subject. MakePlan uses GroupTimestamps, which
// knows the consumer's filter.
func (r *Resets) Timestamps(ctx context.Context, at map[offsets.TP]int64) map[offsets.TP]time.Time {
	out := map[offsets.TP]time.Time{}
	for tp, seq := range at {
		if t, ok := r.firstTime(ctx, tp.Topic, seq, []string{">"}); ok {
			out[tp] = t
		}
	}
	return out
}

// GroupTimestamps reads the time of the first message the consumer would
// deliver from each sequence: the first at or after it that matches its
// filter subjects.
func (r *Resets) GroupTimestamps(ctx context.Context, group string, at map[offsets.TP]int64) map[offsets.TP]time.Time {
	out := map[offsets.TP]time.Time{}
	info, err := r.consumer(ctx, group)
	if err != nil {
		return out
	}
	for tp, seq := range at {
		if t, ok := r.firstTime(ctx, tp.Topic, seq, filters(info.Config)); ok {
			out[tp] = t
		}
	}
	return out
}

// filters are a consumer's filter subjects, ">" for none.
func filters(cfg jetstream.ConsumerConfig) []string {
	switch {
	case len(cfg.FilterSubjects) > 0:
		return cfg.FilterSubjects
	case cfg.FilterSubject != "":
		return []string{cfg.FilterSubject}
	}
	return []string{">"}
}

// firstTime is the time of the first message at or after seq matching any
// of filters.
func (r *Resets) firstTime(ctx context.Context, stream string, seq int64, filters []string) (time.Time, bool) {
	cl, err := r.client(ctx)
	if err != nil {
		return time.Time{}, false
	}
	var best time.Time
	var bestSeq uint64
	for _, f := range filters {
		s, t, err := cl.NextMsg(ctx, stream, uint64(max(seq, 1)), f)
		if err != nil {
			continue
		}
		if bestSeq == 0 || s < bestSeq {
			best, bestSeq = t, s
		}
	}
	return best.UTC(), bestSeq != 0
}

// seqAt is the sequence of the first message of stream stored at or after
// at, or brokers/nats.ErrNoMessage.
func (r *Resets) seqAt(ctx context.Context, stream string, at time.Time) (int64, error) {
	cl, err := r.client(ctx)
	if err != nil {
		return 0, err
	}
	seq, _, err := cl.MsgAt(ctx, stream, at, ">")
	if err != nil {
		return 0, unsupported(cl, "STREAM.MSG.GET."+stream, err)
	}
	return int64(seq), nil
}

// Committed is where the consumer stands: its delivered stream sequence
// + 1.
func (r *Resets) Committed(ctx context.Context, group string, parts []offsets.TP) (map[offsets.TP]int64, error) {
	info, err := r.consumer(ctx, group)
	if err != nil {
		return nil, err
	}
	out := map[offsets.TP]int64{}
	for _, tp := range parts {
		if tp.Topic == info.Stream && tp.Partition == 0 {
			out[tp] = int64(info.Delivered.Stream) + 1
		}
	}
	return out, nil
}

// Commit resets the consumer to the target sequence with CONSUMER.RESET;
// the server's refusal ("below start seq") is the partition's error.
func (r *Resets) Commit(ctx context.Context, group string, to map[offsets.TP]int64) (map[offsets.TP]error, error) {
	stream, name, err := ParseGroup(group)
	if err != nil {
		return nil, err
	}
	cl, err := r.client(ctx)
	if err != nil {
		return nil, err
	}
	out := map[offsets.TP]error{}
	for tp, seq := range to {
		if tp.Topic != stream || tp.Partition != 0 || seq < 1 {
			out[tp] = fmt.Errorf("not a sequence of stream %s: %s[%d] %d", stream, tp.Topic, tp.Partition, seq)
			continue
		}
		reset, err := cl.ResetConsumer(ctx, stream, name, uint64(seq))
		var refused *brokernats.APIError
		switch {
		case errors.As(err, &refused):
			out[tp] = refused
		case err != nil:
			return nil, fmt.Errorf("reset consumer %s: %w", group, unsupported(cl, "CONSUMER.RESET."+stream+"."+name, err))
		case int64(reset) != seq:
			out[tp] = fmt.Errorf("the server reset to sequence %d, not %d", reset, seq)
		}
	}
	return out, nil
}
