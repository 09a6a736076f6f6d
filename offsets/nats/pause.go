package nats

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/offsets"
)

// Feature is a JetStream API call and the first nats-server release that
// has it.
type Feature struct {
	Name  string
	Since [3]int
}

// The calls this package needs beyond the basics.
var (
	// Reset is $JS.API.CONSUMER.RESET (nats-server 2.14).
	Reset = Feature{Name: "$JS.API.CONSUMER.RESET", Since: [3]int{2, 14, 0}}
	// Pause is $JS.API.CONSUMER.PAUSE (nats-server 2.11).
	Pause = Feature{Name: "$JS.API.CONSUMER.PAUSE", Since: [3]int{2, 11, 0}}
)

// Supports returns nil when a server of version (as its INFO says,
// "2.15.3" or "v2.15.3-beta") has f, and an error wrapping
// offsets.ErrUnsupported that names the version otherwise. A version it
// cannot read is given the benefit of the doubt: the call itself then
// fails, naming the version, when nobody answers it.
func Supports(version string, f Feature) error {
	v, ok := parseVersion(version)
	if !ok {
		return nil
	}
	for i := range v {
		if v[i] != f.Since[i] {
			if v[i] > f.Since[i] {
				return nil
			}
			return fmt.Errorf("%w: nats-server %s has no %s (it came in %d.%d.%d)", offsets.ErrUnsupported,
				version, f.Name, f.Since[0], f.Since[1], f.Since[2])
		}
	}
	return nil
}

// parseVersion reads major.minor.patch, ignoring a leading v and any
// suffix after the patch.
func parseVersion(s string) ([3]int, bool) {
	var out [3]int
	parts := strings.SplitN(strings.TrimPrefix(s, "v"), ".", 3)
	if len(parts) != 3 {
		return out, false
	}
	parts[2], _, _ = strings.Cut(parts[2], "-")
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

// PendingFrom counts, for each sequence, the messages the consumer would
// have pending were it reset there, as the server counts num_pending
// (honouring the filter subjects). It asks the server itself: an
// ephemeral consumer with the same filters, starting at the sequence,
// in memory and acking nothing, is created, read and deleted (and expires
// by itself within a minute if the delete is lost). A stream that refuses
// it (a work-queue stream with overlapping filters) gives no count.
func (r *Resets) PendingFrom(ctx context.Context, group string, at map[offsets.TP]int64) map[offsets.TP]int64 {
	out := map[offsets.TP]int64{}
	info, err := r.consumer(ctx, group)
	if err != nil {
		return out
	}
	cl, err := r.client(ctx)
	if err != nil {
		return out
	}
	for tp, seq := range at {
		if n, err := r.pendingFrom(ctx, cl.JetStream(), info, seq); err == nil {
			out[tp] = n
		}
	}
	return out
}

func (r *Resets) pendingFrom(ctx context.Context, js jetstream.JetStream, info *jetstream.ConsumerInfo, seq int64) (int64, error) {
	cfg := jetstream.ConsumerConfig{
		Description:       "queuewatch offsets plan: counts pending of " + info.Name + " (deleted at once)",
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       uint64(max(seq, 1)),
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: time.Minute,
		MemoryStorage:     true,
		Replicas:          1,
	}
	if f := filters(info.Config); f[0] != ">" {
		cfg.FilterSubjects = f
	}
	c, err := js.CreateConsumer(ctx, info.Stream, cfg)
	if err != nil {
		return 0, err
	}
	n := int64(c.CachedInfo().NumPending)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = js.DeleteConsumer(dctx, info.Stream, c.CachedInfo().Name)
	return n, nil
}

// Pause pauses the consumer until until (the server resumes it then by
// itself); a server older than 2.11 is refused, named.
func (r *Resets) Pause(ctx context.Context, group string, until time.Time) (offsets.PauseState, error) {
	if !until.After(time.Now()) {
		return offsets.PauseState{}, fmt.Errorf("%w: %s", offsets.ErrPauseInPast, until.Format(time.RFC3339))
	}
	return r.pause(ctx, group, &until)
}

// Resume resumes a paused consumer at once.
func (r *Resets) Resume(ctx context.Context, group string) (offsets.PauseState, error) {
	return r.pause(ctx, group, nil)
}

func (r *Resets) pause(ctx context.Context, group string, until *time.Time) (offsets.PauseState, error) {
	stream, name, err := ParseGroup(group)
	if err != nil {
		return offsets.PauseState{}, err
	}
	cl, err := r.client(ctx)
	if err != nil {
		return offsets.PauseState{}, err
	}
	if err := Supports(cl.ServerVersion(), Pause); err != nil {
		return offsets.PauseState{}, fmt.Errorf("nats %s: %w", r.c.Name(), err)
	}
	paused, pausedUntil, err := cl.PauseConsumer(ctx, stream, name, until)
	var refused *brokernats.APIError
	switch {
	case errors.As(err, &refused) && refused.ErrCode == 10014: // consumer not found
		return offsets.PauseState{}, fmt.Errorf("%w: stream %s has no consumer %s", offsets.ErrScope, stream, name)
	case errors.As(err, &refused) && refused.ErrCode == 10059: // stream not found
		return offsets.PauseState{}, fmt.Errorf("%w: nats %s has no stream %s", offsets.ErrScope, r.c.Name(), stream)
	case err != nil:
		return offsets.PauseState{}, fmt.Errorf("pause consumer %s: %w", group, unsupported(cl, "CONSUMER.PAUSE."+stream+"."+name, err))
	}
	st := offsets.PauseState{Paused: paused}
	if paused {
		st.Until = pausedUntil.UTC()
	}
	return st, nil
}

// PauseOf reads whether the consumer is paused, and until when.
func (r *Resets) PauseOf(ctx context.Context, group string) (offsets.PauseState, error) {
	info, err := r.consumer(ctx, group)
	if err != nil {
		return offsets.PauseState{}, err
	}
	st := offsets.PauseState{Paused: info.Paused}
	if info.Paused && info.Config.PauseUntil != nil {
		st.Until = info.Config.PauseUntil.UTC()
	}
	return st, nil
}
