package pubsub

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/queuewatch/queuewatch/dlqreplay"
)

// StartNative replays by seek, Pub/Sub's own way back: the source
// subscription is sought to the earliest CloudPubSubDeadLetterSourceTopicPublishTime
// of its dead letters in the DLQ, so Pub/Sub delivers again, to that one
// subscription only, every message it retained from then on — the dead
// letters' originals among them (a dead-lettered message is acknowledged
// in its source) — and the DLQ's copies of them are acknowledged.
//
// It is refused when the subscription does not retain acknowledged
// messages (retainAckedMessages), or not as long ago as that publish
// time: the seek would then redeliver less than the DLQ holds. Before
// seeking it takes a snapshot of the subscription (undoSnapshot): seeking
// to it undoes the replay. The seek is done when StartNative returns;
// rate is not used (Pub/Sub redelivers at the subscribers' pace).
//
// A seek redelivers every retained message since that time, also those
// the subscriber had processed: its consumers must be idempotent.
func (b *Backend) StartNative(ctx context.Context, ref dlqreplay.Ref, target dlqreplay.Target, _ float64) (dlqreplay.NativeTask, error) {
	d, err := b.lookup(ctx, ref)
	if err != nil {
		return nil, err
	}
	source, err := b.seekSource(d, target)
	if err != nil {
		return nil, err
	}
	sub, err := b.c.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: source})
	if err != nil {
		return nil, fmt.Errorf("get subscription %s: %w", b.shortName(source), err)
	}
	l, err := b.acquire(ctx, ref, "seek")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := l.release(context.WithoutCancel(ctx)); err != nil {
			b.opts.Logger.Warn("lease not released; it runs out by itself", "cluster", b.Cluster(), "dlq", ref.ID(), "err", err)
		}
	}()
	// Pulled and held like a job's snapshot; those not acknowledged below
	// are given back.
	s := &session{b: b, q: d, lease: l, job: dlqreplay.JobSpec{DLQ: ref, ID: "seek"}}
	defer s.giveBack(context.WithoutCancel(ctx))
	if err := s.drain(ctx); err != nil {
		return nil, err
	}
	mine, from := s.deadIn(b.shortName(source))
	if len(mine) == 0 {
		return nil, fmt.Errorf("the dlq holds no dead letter of %s with its %s: nothing to seek to: %w", b.shortName(source), AttrSourcePublishTime, dlqreplay.ErrInvalidRequest)
	}
	if err := retains(sub, from, time.Now()); err != nil {
		return nil, err
	}
	snap, err := b.undoSnapshot(ctx, sub)
	if err != nil {
		return nil, err
	}
	if _, err := b.c.SubscriptionAdminClient.Seek(ctx, &pubsubpb.SeekRequest{
		Subscription: source, Target: &pubsubpb.SeekRequest_Time{Time: timestamppb.New(from)},
	}); err != nil {
		return nil, fmt.Errorf("seek %s to %s: %w", b.shortName(source), from.Format(time.RFC3339Nano), err)
	}
	b.opts.Logger.Info("sought a source subscription back; seek it to the snapshot to undo", "cluster", b.Cluster(),
		"dlq", ref.ID(), "subscription", b.shortName(source), "time", from, "snapshot", b.shortName(snap))
	// The seek redelivers the originals: the copies in the DLQ go. An
	// acknowledge that fails leaves them there (a duplicate, no loss).
	s.pending = append(s.pending, mine...)
	s.flush(ctx)
	acked := 0
	for _, e := range mine {
		if e.acked {
			acked++
		}
	}
	return &seekTask{target: b.shortName(source), moved: int64(acked), toMove: int64(len(mine)), err: s.stop}, nil
}

// seekSource is the subscription a seek rewinds: the DLQ's single source,
// or the source target names.
func (b *Backend) seekSource(d *dlq, target dlqreplay.Target) (string, error) {
	if target.Kind == dlqreplay.TargetNamed {
		if _, ok := d.sources[b.subPath(target.Name)]; !ok {
			return "", fmt.Errorf("a seek rewinds a subscription that dead-letters to this dlq; %s does not: %w", target.Name, dlqreplay.ErrInvalidRequest)
		}
		return b.subPath(target.Name), nil
	}
	if len(d.sources) != 1 {
		return "", fmt.Errorf("%d subscriptions dead-letter to this dlq: name the one to seek back: %w", len(d.sources), dlqreplay.ErrInvalidRequest)
	}
	for s := range d.sources {
		return s, nil
	}
	return "", nil
}

// deadIn are the held dead letters of subscription src (a short id) and
// the earliest of their source publish times.
func (s *session) deadIn(src string) ([]*entry, time.Time) {
	var out []*entry
	var from time.Time
	for _, e := range s.held {
		attrs := e.rm.GetMessage().GetAttributes()
		t, err := time.Parse(time.RFC3339Nano, attrs[AttrSourcePublishTime])
		if err != nil || e.d.Message.Death.Source() != src {
			continue
		}
		out = append(out, e)
		if from.IsZero() || t.Before(from) {
			from = t
		}
	}
	return out, from
}

// retains refuses a seek of sub back to from when sub does not keep
// acknowledged messages that long.
func retains(sub *pubsubpb.Subscription, from, now time.Time) error {
	if !sub.GetRetainAckedMessages() {
		return fmt.Errorf("subscription %s does not retain acknowledged messages (retainAckedMessages is off): a seek back would not deliver its dead letters again; replay through queuewatch: %w",
			sub.GetName(), dlqreplay.ErrInvalidRequest)
	}
	keep := sub.GetMessageRetentionDuration().AsDuration()
	if age := now.Sub(from); age > keep {
		return fmt.Errorf("subscription %s retains messages for %s, its earliest dead letter was published %s ago: a seek back would miss some; replay through queuewatch: %w",
			sub.GetName(), keep, age.Round(time.Second), dlqreplay.ErrInvalidRequest)
	}
	return nil
}

// undoSnapshot snapshots sub as it is, named
// queuewatch-undo-<subscription>-<unix ms> (a hash for a long name).
func (b *Backend) undoSnapshot(ctx context.Context, sub *pubsubpb.Subscription) (string, error) {
	id := "queuewatch-undo-" + shortened(b.shortName(sub.GetName()), 200) + "-" + strconv.FormatInt(time.Now().UnixMilli(), 10)
	name := "projects/" + b.opts.Project + "/snapshots/" + id
	if _, err := b.c.SubscriptionAdminClient.CreateSnapshot(ctx, &pubsubpb.CreateSnapshotRequest{Name: name, Subscription: sub.GetName()}); err != nil {
		return "", fmt.Errorf("snapshot %s before seeking it (the undo): %w", b.shortName(sub.GetName()), err)
	}
	return name, nil
}

// giveBack gives back what the session holds and did not acknowledge.
func (s *session) giveBack(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	if err := s.b.modifyDeadline(ctx, s.q.sub.GetName(), s.unacked(), 0); err != nil {
		s.b.opts.Logger.Warn("messages not given back; they are back after the ack deadline", "cluster", s.b.Cluster(),
			"dlq", s.job.DLQ.ID(), "err", err)
	}
}

// seekTask is a seek that is done: Pub/Sub seeks at once.
type seekTask struct {
	target        string
	moved, toMove int64
	err           error
}

func (t *seekTask) Target() string { return t.target }

// Progress is the seek's end: succeeded when every copy in the DLQ was
// acknowledged, failed (with why) when some stay there.
func (t *seekTask) Progress(context.Context) (dlqreplay.NativeProgress, error) {
	p := dlqreplay.NativeProgress{State: dlqreplay.StateSucceeded, Moved: t.moved, ToMove: t.toMove}
	if t.err != nil {
		p.State, p.Reason = dlqreplay.StateFailed, "sought back, but the copies in the dlq were not all acknowledged (they are duplicates now): "+t.err.Error()
	}
	return p, nil
}

// Cancel does nothing: the seek is done.
func (t *seekTask) Cancel(context.Context) error { return nil }
