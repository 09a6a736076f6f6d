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

// DeadLetterQueues lists one DLQ per (stream, consumer) that has captured
// dead letters not yet replayed or removed. Depths come from the
// dead-letter stream's per-subject counts (one request, however many
// messages); each DLQ's oldest age from its first copy (one request per
// DLQ). A missing dead-letter stream (capture never ran) is no DLQ and no
// error.
//
// The DLQ is named after the consumer, so the dlq label and the page name
// what dead-lettered; its source is the stream. When consumers of the
// same name in two streams both have dead letters, each is named
// "<stream>.<consumer>" instead (names hold no '.', so this never
// collides), and the replay backend reads either form.
func (c *Cluster) DeadLetterQueues(ctx context.Context, js jetstream.JetStream) ([]queue.DLQ, error) {
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
	streams := map[string]int{} // streams per consumer name
	for subj, n := range info.State.Subjects {
		stream, consumer, ok := SplitDeadLetterSubject(dl, subj)
		if !ok || n == 0 {
			continue
		}
		k := key{stream, consumer}
		if counts[k] == 0 {
			streams[consumer]++
		}
		counts[k] += n
	}
	out := make([]queue.DLQ, 0, len(counts))
	now := time.Now()
	for k, n := range counts {
		d := queue.DLQ{
			Broker: queue.NATS, Cluster: c.cfg.Name, Name: k.consumer,
			Sources: []string{k.stream}, Detection: queue.DetectedConfig, Messages: int64(n),
		}
		if streams[k.consumer] > 1 {
			d.Name = k.stream + "." + k.consumer
		}
		first, err := s.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(DeadLetterSubject(dl, k.stream, k.consumer)))
		switch {
		case err == nil:
			d.OldestAge, d.HasOldestAge = max(now.Sub(DecodeDeadLetter(first).Message.Timestamp), 0), true
		case !errors.Is(err, jetstream.ErrMsgNotFound):
			d.Err = fmt.Sprintf("oldest dead letter: %v", err)
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Sources[0] != out[j].Sources[0] {
			return out[i].Sources[0] < out[j].Sources[0]
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}
