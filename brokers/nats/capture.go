package nats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Names of what capture creates on the server.
const (
	// advisorySuffix names the stream over both advisory subjects:
	// "<dead-letter stream>_ADVISORIES".
	advisorySuffix = "_ADVISORIES"
	// CaptureConsumer is the durable consumer on the advisory stream that
	// every queuewatch instance of the cluster shares, so each advisory is
	// captured by one of them.
	CaptureConsumer = "queuewatch-capture"
	// captureDuplicates is the dead-letter stream's duplicate window. An
	// advisory whose copy was stored but not yet acknowledged when
	// queuewatch stopped is captured again on restart; within this window
	// the second copy is dropped.
	captureDuplicates = time.Hour
	// captureAckWait is how long an advisory handed to a worker that
	// stopped waits before another worker gets it.
	captureAckWait = 30 * time.Second
)

// DeadLetterStream is the stream that keeps captured copies.
func (c *Cluster) DeadLetterStream() string { return c.cfg.DeadLetters.Stream }

// AdvisoryStream is the stream that keeps dead-letter advisories until
// they are captured.
func (c *Cluster) AdvisoryStream() string { return c.cfg.DeadLetters.Stream + advisorySuffix }

// LostDeadLetters is how many dead letters this process captured without
// their payload (the original was gone): queuewatch_nats_dead_letters_lost_total.
func (c *Cluster) LostDeadLetters() uint64 { return c.lost.Load() }

// CapturedDeadLetters is how many copies this process stored.
func (c *Cluster) CapturedDeadLetters() uint64 { return c.captured.Load() }

// captured and lost are kept outside Cluster's config so the zero Cluster
// from New counts from 0.
type counters struct {
	captured, lost atomic.Uint64
}

// EnsureCapture creates, when missing, the advisory stream (a work queue
// over both advisory subjects, file storage: advisories wait there while
// queuewatch is down), the dead-letter stream (limits retention, file
// storage, a one-hour duplicate window) and the capture consumer. Existing
// streams are left as they are, so an operator may raise their replicas.
func (c *Cluster) EnsureCapture(ctx context.Context, js jetstream.JetStream) (jetstream.Consumer, error) {
	dl := c.DeadLetterStream()
	if err := ensureStream(ctx, js, jetstream.StreamConfig{
		Name:        dl,
		Description: "queuewatch: copies of dead-lettered messages",
		Subjects:    []string{dl + ".>"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Duplicates:  captureDuplicates,
	}); err != nil {
		return nil, err
	}
	adv := c.AdvisoryStream()
	if err := ensureStream(ctx, js, jetstream.StreamConfig{
		Name:        adv,
		Description: "queuewatch: dead-letter advisories waiting to be captured",
		Subjects:    []string{AdvisoryMaxDeliveries + ".>", AdvisoryTerminated + ".>"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
	}); err != nil {
		return nil, err
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, adv, jetstream.ConsumerConfig{
		Durable:     CaptureConsumer,
		Description: "queuewatch: copies each dead letter into " + dl,
		AckPolicy:   jetstream.AckExplicitPolicy,
		AckWait:     captureAckWait,
		MaxDeliver:  -1,
	})
	if err != nil {
		return nil, fmt.Errorf("nats %s: capture consumer on %s: %w", c.cfg.Name, adv, err)
	}
	return cons, nil
}

func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	_, err := js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, cfg)
	}
	if err != nil {
		return fmt.Errorf("stream %s: %w", cfg.Name, err)
	}
	return nil
}

// RunCapture captures dead letters until ctx ends: it connects, ensures
// the streams and consumer, and copies each advisory's original. A lost
// connection or a failed step is logged and retried after a pause that
// grows to a minute; nothing is acknowledged that was not copied, so a
// restart loses nothing.
func (c *Cluster) RunCapture(ctx context.Context, log *slog.Logger) {
	log = log.With("cluster", c.cfg.Name)
	for wait := time.Second; ; wait = min(2*wait, time.Minute) {
		start := time.Now()
		err := c.captureOnce(ctx, log)
		if ctx.Err() != nil {
			return
		}
		log.Warn("dead-letter capture stopped; retrying", "err", err, "in", wait)
		if time.Since(start) > time.Minute {
			wait = time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// captureOnce runs one connection's capture loop.
func (c *Cluster) captureOnce(ctx context.Context, log *slog.Logger) error {
	cctx, cancel := context.WithTimeout(ctx, c.DialTimeout)
	nc, js, err := c.Connect(cctx, "dead-letter capture")
	cancel()
	if err != nil {
		return err
	}
	defer nc.Close()
	cctx, cancel = context.WithTimeout(ctx, 30*time.Second)
	cons, err := c.EnsureCapture(cctx, js)
	cancel()
	if err != nil {
		return err
	}
	w := &captureWorker{c: c, js: js, log: log, streams: map[string]jetstream.Stream{}}
	for ctx.Err() == nil {
		batch, err := cons.Fetch(100, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return fmt.Errorf("fetch advisories: %w", err)
		}
		for msg := range batch.Messages() {
			w.handle(ctx, msg)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("fetch advisories: %w", err)
		}
		if nc.IsClosed() {
			return errors.New("connection closed")
		}
	}
	return ctx.Err()
}

// captureWorker copies advisories' originals over one connection.
type captureWorker struct {
	c       *Cluster
	js      jetstream.JetStream
	log     *slog.Logger
	streams map[string]jetstream.Stream
}

// handle captures one advisory. The advisory is acknowledged only after
// the dead-letter stream acknowledged the copy; on any failure it is
// handed back (nak with a delay) and captured again later.
func (w *captureWorker) handle(ctx context.Context, msg jetstream.Msg) {
	a, reason, err := ParseAdvisory(msg.Subject(), msg.Data())
	if err != nil {
		// Nothing can ever be made of it: drop it rather than retry forever.
		w.log.Warn("dropping an unreadable advisory", "err", err)
		_ = msg.Term()
		return
	}
	// Every stream's dead letters are captured, whatever streams selects:
	// the advisory stream is a work queue shared by every instance, so an
	// advisory one instance dropped would be gone for all of them.
	if a.Stream == w.c.DeadLetterStream() || a.Stream == w.c.AdvisoryStream() {
		_ = msg.Ack()
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.capture(ctx, a, reason); err != nil {
		w.log.Warn("capture dead letter", "stream", a.Stream, "seq", a.StreamSeq, "consumer", a.Consumer, "err", err)
		_ = msg.NakWithDelay(5 * time.Second)
		return
	}
	if err := msg.DoubleAck(ctx); err != nil {
		// The copy is stored; the advisory comes back and its second copy
		// is dropped as a duplicate.
		w.log.Warn("ack advisory", "stream", a.Stream, "seq", a.StreamSeq, "err", err)
	}
}

func (w *captureWorker) capture(ctx context.Context, a Advisory, reason string) error {
	orig, err := w.original(ctx, a)
	if err != nil {
		return err
	}
	ack, err := w.js.PublishMsg(ctx, copyMsg(w.c.DeadLetterStream(), a, reason, orig),
		jetstream.WithExpectStream(w.c.DeadLetterStream()))
	if err != nil {
		return fmt.Errorf("store copy in %s: %w", w.c.DeadLetterStream(), err)
	}
	if !ack.Duplicate {
		w.c.captured.Add(1)
		if orig == nil {
			w.c.lost.Add(1)
			w.log.Warn("dead letter captured without payload: the original was already gone",
				"stream", a.Stream, "seq", a.StreamSeq, "consumer", a.Consumer)
		}
	}
	return nil
}

// original reads the advisory's message from its stream; nil when the
// stream or the message is gone.
func (w *captureWorker) original(ctx context.Context, a Advisory) (*jetstream.RawStreamMsg, error) {
	s, ok := w.streams[a.Stream]
	if !ok {
		var err error
		s, err = w.js.Stream(ctx, a.Stream)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", a.Stream, err)
		}
		w.streams[a.Stream] = s
	}
	m, err := s.GetMsg(ctx, a.StreamSeq)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return nil, nil
	case errors.Is(err, jetstream.ErrStreamNotFound):
		delete(w.streams, a.Stream)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get %s #%d: %w", a.Stream, a.StreamSeq, err)
	}
	return m, nil
}
