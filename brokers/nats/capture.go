package nats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
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

// LeaseBucket is the key-value bucket of the replay jobs' leases (one job
// per DLQ across instances).
func (c *Cluster) LeaseBucket() string { return c.cfg.DeadLetters.Stream + "_LEASES" }

// IsOwnStream reports whether queuewatch made the stream for itself: the
// dead-letter and advisory streams and the lease bucket's. Their
// consumers have no DLQ (capture skips their advisories).
func (c *Cluster) IsOwnStream(name string) bool {
	return name == c.DeadLetterStream() || name == c.AdvisoryStream() || name == "KV_"+c.LeaseBucket()
}

// Internal reports whether a stream, or with consumer non-empty one of
// its consumers, is queuewatch's own bookkeeping rather than a user's:
// the lease bucket and the capture consumer. Listings leave them out. The
// dead-letter and advisory streams stay listed: they hold what operators
// need to see (their size, and advisories waiting to be captured).
func (c *Cluster) Internal(stream, consumer string) bool {
	if stream == "KV_"+c.LeaseBucket() {
		return true
	}
	return stream == c.AdvisoryStream() && consumer == CaptureConsumer
}

// LostDeadLetters is how many dead letters this process captured without
// their payload (the original was gone): queuewatch_nats_dead_letters_lost_total.
func (c *Cluster) LostDeadLetters() uint64 { return c.lost.Load() }

// CapturedDeadLetters is how many copies this process stored.
func (c *Cluster) CapturedDeadLetters() uint64 { return c.captured.Load() }

// CaptureFailures is, per stream, how many times this process failed to
// capture one of the stream's dead letters (the advisory is retried, and
// kept without payload after captureTuning.maxDeliveries):
// queuewatch_nats_capture_failures_total.
func (c *Cluster) CaptureFailures() map[string]uint64 {
	c.failuresMu.Lock()
	defer c.failuresMu.Unlock()
	return maps.Clone(c.failures)
}

func (c *Cluster) captureFailed(stream string) {
	c.failuresMu.Lock()
	defer c.failuresMu.Unlock()
	if c.failures == nil {
		c.failures = map[string]uint64{}
	}
	c.failures[stream]++
}

// captured, lost and failures are kept outside Cluster's config so the
// zero Cluster from New counts from 0.
type counters struct {
	captured, lost atomic.Uint64
	failuresMu     sync.Mutex
	failures       map[string]uint64
}

// captureTuning is how capture waits and retries; a zero field is its
// default.
type captureTuning struct {
	// timeout bounds capturing one advisory (default 10s).
	timeout time.Duration
	// retryDelay is the delay before an advisory that failed is delivered
	// again; it doubles with each delivery up to a minute (default 5s).
	retryDelay time.Duration
	// maxDeliveries is the delivery of an advisory at which, if its
	// original still cannot be read, its dead letter is kept without
	// payload (default 10: about six minutes of retries).
	maxDeliveries uint64
}

func (c *Cluster) tuning() captureTuning {
	t := c.tune
	if t.timeout <= 0 {
		t.timeout = 10 * time.Second
	}
	if t.retryDelay <= 0 {
		t.retryDelay = 5 * time.Second
	}
	if t.maxDeliveries == 0 {
		t.maxDeliveries = 10
	}
	return t
}

// EnsureCapture creates, when missing, the advisory stream (a work queue
// over both advisory subjects, file storage: advisories wait there while
// queuewatch is down), then the dead-letter stream (limits retention, file
// storage, a one-hour duplicate window) and the capture consumer. Existing
// streams are left as they are, so an operator may raise their replicas.
func (c *Cluster) EnsureCapture(ctx context.Context, js jetstream.JetStream) (jetstream.Consumer, error) {
	// The advisory stream first: when its subjects are taken (another
	// queuewatch's capture, say) nothing is left behind, and once it
	// exists advisories wait in it whatever else fails.
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
	// MaxDeliver stays unlimited: capture itself gives up on an advisory
	// (captureTuning.maxDeliveries) by keeping its dead letter without
	// payload. A server-side limit would leave the advisory in its work
	// queue, seen by nobody.
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

// CaptureAdvice names what in the capture streams, when they already
// exist, differs from what capture relies on: EnsureCapture leaves an
// existing stream as it is (made by hand or by an older version), so
// nothing else would tell. Nil when capture is off.
func (c *Cluster) CaptureAdvice(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	if !c.cfg.DeadLetters.Capture {
		return nil, nil
	}
	var advice []string
	for _, name := range []string{c.DeadLetterStream(), c.AdvisoryStream()} {
		s, err := js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue // capture creates it as it needs it
		}
		if err != nil {
			return advice, fmt.Errorf("stream %s: %w", name, err)
		}
		cfg := s.CachedInfo().Config
		for _, a := range captureStreamAdvice(c.DeadLetterStream(), name == c.AdvisoryStream(), cfg) {
			advice = append(advice, "stream "+name+": "+a)
		}
	}
	return advice, nil
}

// captureStreamAdvice compares an existing capture stream's configuration
// with what capture relies on: the dead-letter stream keeps every copy
// (limits retention) on deadLetters.> with a duplicate window of at least
// captureDuplicates (a copy stored again after a restart is dropped); the
// advisory stream keeps both advisory subjects on disk until they are
// captured (work queue; interest does too).
func captureStreamAdvice(deadLetters string, advisories bool, cfg jetstream.StreamConfig) []string {
	var out []string
	// Both subjects end in "<stream>.<consumer>".
	want := []string{deadLetters + ".*.*"}
	if advisories {
		want = []string{AdvisoryMaxDeliveries + ".*.*", AdvisoryTerminated + ".*.*"}
	}
	for _, w := range want {
		if !slices.ContainsFunc(cfg.Subjects, func(p string) bool { return subjectCovers(p, w) }) {
			out = append(out, "subjects do not include "+w+": those dead letters are not captured")
		}
	}
	if cfg.Storage == jetstream.MemoryStorage {
		out = append(out, "memory storage: its messages are lost when the server restarts")
	}
	if advisories {
		if cfg.Retention == jetstream.LimitsPolicy {
			out = append(out, "limits retention, not workqueue: captured advisories stay until its limits remove them")
		}
		return out
	}
	if cfg.Retention != jetstream.LimitsPolicy {
		out = append(out, fmt.Sprintf("%s retention, not limits: copies may be removed before they are replayed", strings.ToLower(cfg.Retention.String())))
	}
	if cfg.Duplicates < captureDuplicates {
		out = append(out, fmt.Sprintf("duplicate window %s is shorter than %s: an advisory captured again later than that after a restart is stored twice", cfg.Duplicates, captureDuplicates))
	}
	return out
}

// subjectCovers reports whether the subject filter pattern matches every
// subject that want matches ('*' one token, '>' the rest).
func subjectCovers(pattern, want string) bool {
	p, w := strings.Split(pattern, "."), strings.Split(want, ".")
	for i, tok := range p {
		switch {
		case tok == ">":
			return true
		case i >= len(w), w[i] == ">":
			return false
		case tok != "*" && tok != w[i]:
			return false
		}
	}
	return len(p) == len(w)
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

// errCaptureConnect marks capture's failure to connect, which RunCapture
// does not record as the capture error.
var errCaptureConnect = errors.New("connect")

// RunCapture captures dead letters until ctx ends: it connects, ensures
// the streams and consumer, and copies each advisory's original. A lost
// connection or a failed step is logged and retried after a pause that
// grows to a minute; nothing is acknowledged that was not copied, so a
// restart loses nothing.
func (c *Cluster) RunCapture(ctx context.Context, log *slog.Logger) {
	log = log.With("cluster", c.cfg.Name)
	for wait := time.Second; ; wait = min(2*wait, time.Minute) {
		start := time.Now()
		started, err := c.captureOnce(ctx, log)
		if ctx.Err() != nil {
			return
		}
		if !started && !errors.Is(err, errCaptureConnect) {
			// It cannot get going: the source reports it (a drop after
			// running is retried at once and is no outage yet). A server
			// it cannot reach is no capture failure: the poll reports the
			// server down, and recording it would call capture dead after
			// the server is back, until the next try up to a minute later.
			c.setCaptureErr(err)
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

// captureOnce runs one connection's capture loop. started tells whether
// it got as far as fetching advisories.
func (c *Cluster) captureOnce(ctx context.Context, log *slog.Logger) (started bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, c.DialTimeout)
	nc, js, err := c.Connect(cctx, "dead-letter capture")
	cancel()
	if err != nil {
		return false, fmt.Errorf("%w: %w", errCaptureConnect, err)
	}
	defer nc.Close()
	cctx, cancel = context.WithTimeout(ctx, 30*time.Second)
	cons, err := c.EnsureCapture(cctx, js)
	if err == nil {
		advice, aerr := c.CaptureAdvice(cctx, js)
		for _, a := range advice {
			log.Warn("a capture stream differs from what capture relies on; edit it, or delete it to have it made again", "advice", a)
		}
		if aerr != nil {
			log.Warn("dead-letter capture: check the capture streams", "err", aerr)
		}
	}
	cancel()
	if err != nil {
		return false, err
	}
	// The lanes' context: when the loop ends, what they hold is handed
	// back untried.
	laneCtx, cancel := context.WithCancel(ctx)
	w := &captureWorker{c: c, js: js, log: log, streams: map[string]jetstream.Stream{}, cancel: cancel}
	defer w.stop()
	for ctx.Err() == nil {
		batch, err := cons.Fetch(100, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return started, fmt.Errorf("fetch advisories: %w", err)
		}
		for msg := range batch.Messages() {
			w.dispatch(laneCtx, msg)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return started, fmt.Errorf("fetch advisories: %w", err)
		}
		if nc.IsClosed() {
			return started, errors.New("connection closed")
		}
		if !started {
			started = true
			c.setCaptureErr(nil)
		}
	}
	return started, ctx.Err()
}

// captureWorker copies advisories' originals over one connection. Each
// stream's advisories go through a lane of their own, in order, so a
// stream that fails or answers slowly holds back no other stream's dead
// letters, and the fetch loop never waits for any of them.
type captureWorker struct {
	c   *Cluster
	js  jetstream.JetStream
	log *slog.Logger

	mu      sync.Mutex
	streams map[string]jetstream.Stream

	cancel context.CancelFunc          // ends the lanes
	lanes  map[string]chan advisoryMsg // by stream; only the fetch loop touches it
	wg     sync.WaitGroup
}

// advisoryMsg is a parsed advisory and the message to acknowledge.
type advisoryMsg struct {
	msg    jetstream.Msg
	a      Advisory
	reason string
}

// laneBuffer is how many advisories of one stream may wait for their lane:
// the capture consumer's default max_ack_pending, so the fetch loop never
// blocks on a slow stream and never has to hand one back (a smaller buffer
// made every fetch of 100 past it wait out the retry delay). An advisory
// that waits past the consumer's AckWait is sent again; its second copy is
// dropped by the dead-letter stream as a duplicate.
const laneBuffer = 1000

// dispatch hands an advisory to its stream's lane.
func (w *captureWorker) dispatch(ctx context.Context, msg jetstream.Msg) {
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
	lane, ok := w.lanes[a.Stream]
	if !ok {
		if w.lanes == nil {
			w.lanes = map[string]chan advisoryMsg{}
		}
		lane = make(chan advisoryMsg, laneBuffer)
		w.lanes[a.Stream] = lane
		w.wg.Go(func() { w.runLane(ctx, lane) })
	}
	select {
	case lane <- advisoryMsg{msg: msg, a: a, reason: reason}:
	default:
		// More in flight than the consumer should hand out: later.
		_ = msg.NakWithDelay(w.c.tuning().retryDelay)
	}
}

// stop ends the lanes and waits for them.
func (w *captureWorker) stop() {
	if w.cancel != nil {
		w.cancel()
	}
	for _, lane := range w.lanes {
		close(lane)
	}
	w.wg.Wait()
}

// runLane captures one stream's advisories in order. After a failure the
// stream's next advisories are not tried until the retry delay has passed
// (they would most likely wait out the same timeout); they are handed
// back as failed.
func (w *captureWorker) runLane(ctx context.Context, lane <-chan advisoryMsg) {
	var failed error
	var retryAt time.Time
	for m := range lane {
		if ctx.Err() != nil {
			// Stopping: handed back at once for another instance (or
			// AckWait brings it back).
			_ = m.msg.Nak()
			continue
		}
		err := failed
		tried := err == nil || time.Now().After(retryAt) || w.lastDelivery(m)
		if tried {
			_ = m.msg.InProgress() // it may have waited in the lane
			err = w.captureOne(ctx, m)
			failed, retryAt = err, time.Now().Add(w.c.tuning().retryDelay)
		}
		switch {
		case err == nil:
		case ctx.Err() != nil:
			_ = m.msg.Nak() // stopped mid-capture: not the stream's failure
		default:
			w.failed(ctx, m, err, tried)
		}
	}
}

// captureOne captures one advisory and acknowledges it once the
// dead-letter stream acknowledged the copy.
func (w *captureWorker) captureOne(ctx context.Context, m advisoryMsg) error {
	ctx, cancel := context.WithTimeout(ctx, w.c.tuning().timeout)
	defer cancel()
	if err := w.capture(ctx, m.a, m.reason); err != nil {
		return err
	}
	w.ack(ctx, m)
	return nil
}

func (w *captureWorker) ack(ctx context.Context, m advisoryMsg) {
	if err := m.msg.DoubleAck(ctx); err != nil {
		// The copy is stored; the advisory comes back and its second copy
		// is dropped as a duplicate.
		w.log.Warn("ack advisory", "stream", m.a.Stream, "seq", m.a.StreamSeq, "err", err)
	}
}

// deliveries is how many times the advisory was delivered.
func deliveries(m advisoryMsg) uint64 {
	if md, err := m.msg.Metadata(); err == nil {
		return md.NumDelivered
	}
	return 1
}

// lastDelivery reports whether the advisory is due to be given up on if
// this attempt fails: it is always tried then, never failed unseen.
func (w *captureWorker) lastDelivery(m advisoryMsg) bool {
	return deliveries(m) >= w.c.tuning().maxDeliveries
}

// errUnreadable marks a failure to read an advisory's original, as opposed
// to one to store its copy.
var errUnreadable = errors.New("original unreadable")

// failed counts a failed attempt (tried: not one skipped after its
// stream's last failure) and hands the advisory back with a delay that
// doubles per delivery. At its last delivery, when the original is what
// could not be read, the dead letter is kept without payload, with the
// error as the reason, so it is never dropped; a copy that could not be
// stored is retried for as long as it takes.
func (w *captureWorker) failed(ctx context.Context, m advisoryMsg, cause error, tried bool) {
	if tried {
		w.c.captureFailed(m.a.Stream)
	}
	t := w.c.tuning()
	n := deliveries(m)
	log := w.log.With("stream", m.a.Stream, "seq", m.a.StreamSeq, "consumer", m.a.Consumer, "delivery", n)
	if n >= t.maxDeliveries && tried && errors.Is(cause, errUnreadable) {
		ctx, cancel := context.WithTimeout(ctx, t.timeout)
		defer cancel()
		err := w.keepLost(ctx, m.a, m.reason, fmt.Errorf("gave up after %d attempts: %w", n, cause))
		if err == nil {
			log.Warn("dead letter kept without payload: its original could not be read", "err", cause)
			w.ack(ctx, m)
			return
		}
		cause = err
	}
	log.Warn("capture dead letter; retrying", "err", cause)
	_ = m.msg.NakWithDelay(retryDelay(t.retryDelay, n))
}

// retryDelay is base doubled per delivery after the first, at most a
// minute: 5s, 10s, 20s, 40s, 1m, 1m, …
func retryDelay(base time.Duration, delivery uint64) time.Duration {
	d := base
	for i := uint64(1); i < delivery && d < time.Minute; i++ {
		d *= 2
	}
	return min(d, time.Minute)
}

func (w *captureWorker) capture(ctx context.Context, a Advisory, reason string) error {
	orig, err := w.original(ctx, a)
	if err != nil {
		return fmt.Errorf("%w: %w", errUnreadable, err)
	}
	return w.store(ctx, copyMsg(w.c.DeadLetterStream(), a, reason, orig), a, orig == nil)
}

// keepLost stores the advisory's dead letter without payload, saying why.
func (w *captureWorker) keepLost(ctx context.Context, a Advisory, reason string, cause error) error {
	m := copyMsg(w.c.DeadLetterStream(), a, reason, nil)
	m.Header.Set(HeaderCaptureError, cause.Error())
	return w.store(ctx, m, a, true)
}

// store publishes a copy and counts it unless the dead-letter stream had
// it already.
func (w *captureWorker) store(ctx context.Context, m *nats.Msg, a Advisory, lost bool) error {
	ack, err := w.js.PublishMsg(ctx, m, jetstream.WithExpectStream(w.c.DeadLetterStream()))
	if err != nil {
		return fmt.Errorf("store copy in %s: %w", w.c.DeadLetterStream(), err)
	}
	if !ack.Duplicate {
		w.c.captured.Add(1)
		if lost {
			w.c.lost.Add(1)
			w.log.Warn("dead letter captured without payload",
				"stream", a.Stream, "seq", a.StreamSeq, "consumer", a.Consumer)
		}
	}
	return nil
}

// original reads the advisory's message from its stream; nil when the
// stream or the message is gone.
func (w *captureWorker) original(ctx context.Context, a Advisory) (*jetstream.RawStreamMsg, error) {
	s, err := w.stream(ctx, a.Stream)
	if err != nil || s == nil {
		return nil, err
	}
	m, err := s.GetMsg(ctx, a.StreamSeq)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return nil, nil
	case errors.Is(err, jetstream.ErrStreamNotFound):
		w.mu.Lock()
		delete(w.streams, a.Stream)
		w.mu.Unlock()
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get %s #%d: %w", a.Stream, a.StreamSeq, err)
	}
	return m, nil
}

// stream is the named stream, cached; nil when it is gone.
func (w *captureWorker) stream(ctx context.Context, name string) (jetstream.Stream, error) {
	w.mu.Lock()
	s, ok := w.streams[name]
	w.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := w.js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", name, err)
	}
	w.mu.Lock()
	w.streams[name] = s
	w.mu.Unlock()
	return s, nil
}
