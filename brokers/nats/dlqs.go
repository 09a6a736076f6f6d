package nats

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/queuewatch/queuewatch/queue"
)

// ErrUnknownDLQ is the answer for a DLQ name that is no DLQ's: malformed,
// or naming a consumer that neither exists nor has captured dead letters.
var ErrUnknownDLQ = errors.New("unknown dlq")

// DeadLetterQueues lists the DLQs of the cluster: one per (stream,
// consumer) that has captured dead letters not yet replayed or removed,
// and one at 0 for each of consumers (the durable consumers a poll found)
// that has none, so that a DLQ a replay drained stays listed, and its
// series drops to 0, for as long as its consumer exists. Depths come from
// the dead-letter stream's per-subject counts (one request, however many
// messages); each non-empty DLQ's oldest age from its first copy (one
// request per DLQ). A missing dead-letter stream (capture never ran) has
// no copies.
//
// A DLQ is named DLQName(stream, consumer) and its source is the stream.
// queuewatch's own consumers are no one's DLQ.
func (c *Cluster) DeadLetterQueues(ctx context.Context, js jetstream.JetStream, consumers []queue.StreamConsumer) ([]queue.DLQ, error) {
	out, err := c.capturedDLQs(ctx, js)
	if err != nil {
		return nil, err
	}
	listed := make(map[string]bool, len(out))
	for _, d := range out {
		listed[d.Name] = true
	}
	for _, sc := range consumers {
		name := DLQName(sc.Stream, sc.Name)
		if listed[name] || c.IsOwnStream(sc.Stream) {
			continue
		}
		listed[name] = true
		// An empty DLQ's oldest message is 0 s old, as for RabbitMQ.
		out = append(out, c.dlq(sc.Stream, sc.Name, 0))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Sources[0] != out[j].Sources[0] {
			return out[i].Sources[0] < out[j].Sources[0]
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func (c *Cluster) dlq(stream, consumer string, n uint64) queue.DLQ {
	return queue.DLQ{
		Broker: queue.NATS, Cluster: c.cfg.Name, Name: DLQName(stream, consumer),
		Sources: []string{stream}, Detection: queue.DetectedConfig, Messages: int64(n),
		HasOldestAge: n == 0,
	}
}

// capturedDLQs lists the DLQs that hold copies.
func (c *Cluster) capturedDLQs(ctx context.Context, js jetstream.JetStream) ([]queue.DLQ, error) {
	dl := c.DeadLetterStream()
	s, err := js.Stream(ctx, dl)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("nats %s: dead-letter stream %s: %w", c.cfg.Name, dl, err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(dl+".>"))
	if err != nil {
		return nil, fmt.Errorf("nats %s: dead-letter stream %s: %w", c.cfg.Name, dl, err)
	}
	type key struct{ stream, consumer string }
	counts := map[key]uint64{}
	for subj, n := range info.State.Subjects {
		stream, consumer, ok := SplitDeadLetterSubject(dl, subj)
		if ok && n > 0 {
			counts[key{stream, consumer}] += n
		}
	}
	out := make([]queue.DLQ, 0, len(counts))
	now := time.Now()
	for k, n := range counts {
		d := c.dlq(k.stream, k.consumer, n)
		first, err := s.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(DeadLetterSubject(dl, k.stream, k.consumer)))
		switch {
		case err == nil:
			d.OldestAge, d.HasOldestAge = max(now.Sub(DecodeDeadLetter(first).Message.Timestamp), 0), true
		case !errors.Is(err, jetstream.ErrMsgNotFound):
			d.Err = fmt.Sprintf("oldest dead letter: %v", err)
		}
		out = append(out, d)
	}
	return out, nil
}

// DLQSubject is the dead-letter stream's subject of the DLQ named name,
// which must be listed: its consumer exists, or it holds copies (the
// consumer was deleted after dead-lettering). Otherwise, or for a name
// that is no DLQ's, it answers ErrUnknownDLQ: a name that lists nothing
// (such as a consumer name without its stream, as DLQs were once named) is
// unknown rather than an empty DLQ. dl is the dead-letter stream.
func (c *Cluster) DLQSubject(ctx context.Context, js jetstream.JetStream, dl jetstream.Stream, name string) (string, error) {
	stream, consumer, ok := SplitDLQName(name)
	if !ok || c.IsOwnStream(stream) {
		return "", fmt.Errorf("nats dlq %q: not a stream.consumer name: %w", name, ErrUnknownDLQ)
	}
	subject := DeadLetterSubject(c.DeadLetterStream(), stream, consumer)
	// A consumer of a stream the configuration does not watch is not
	// listed at 0, so it is known only by its copies.
	if c.cfg.Streams.Match(stream) {
		// Consumer answers ErrNotPullConsumer for a push consumer, after
		// reading its info: it exists all the same.
		_, err := js.Consumer(ctx, stream, consumer)
		if err == nil || errors.Is(err, jetstream.ErrNotPullConsumer) {
			return subject, nil
		}
		if !errors.Is(err, jetstream.ErrConsumerNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return "", fmt.Errorf("nats dlq %q: consumer %s of %s: %w", name, consumer, stream, err)
		}
	}
	_, err := dl.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(subject))
	switch {
	case err == nil:
		return subject, nil
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return "", fmt.Errorf("nats dlq %q: no consumer %s in stream %s and no dead letters of it: %w", name, consumer, stream, ErrUnknownDLQ)
	}
	return "", fmt.Errorf("nats dlq %q: dead letters: %w", name, err)
}
