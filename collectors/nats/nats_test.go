package nats_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/queuewatch/queuewatch/alerts"
	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	collectnats "github.com/queuewatch/queuewatch/collectors/nats"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// world is an embedded JetStream server with a client connection.
type world struct {
	url string
	nc  *nats.Conn
	js  jetstream.JetStream
}

func newWorld(t testing.TB) *world {
	t.Helper()
	srv := testenv.NATSEmbedded(t)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return &world{url: srv.ClientURL(), nc: nc, js: js}
}

func (w *world) source(t testing.TB, include func(string) bool) *collectnats.Source {
	t.Helper()
	cl, err := brokernats.New(config.NATS{Name: "local", URL: w.url})
	if err != nil {
		t.Fatal(err)
	}
	s, err := collectnats.New(collectnats.Options{Cluster: cl, IncludeStream: include})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func (w *world) stream(t testing.TB, name string, subjects ...string) {
	t.Helper()
	if _, err := w.js.CreateStream(t.Context(), jetstream.StreamConfig{Name: name, Subjects: subjects}); err != nil {
		t.Fatal(err)
	}
}

func (w *world) publish(t testing.TB, subject string, n int) {
	t.Helper()
	for i := range n {
		if _, err := w.js.Publish(t.Context(), subject, fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
}

func (w *world) consumer(t testing.TB, stream string, cfg jetstream.ConsumerConfig) jetstream.Consumer {
	t.Helper()
	if cfg.AckPolicy == jetstream.AckNonePolicy {
		cfg.AckPolicy = jetstream.AckExplicitPolicy
	}
	c, err := w.js.CreateOrUpdateConsumer(t.Context(), stream, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fetch takes n messages from c and acks the first ack of them.
func fetch(t testing.TB, c jetstream.Consumer, n, ack int) []jetstream.Msg {
	t.Helper()
	batch, err := c.Fetch(n, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []jetstream.Msg
	for m := range batch.Messages() {
		got = append(got, m)
	}
	if len(got) != n {
		t.Fatalf("fetched %d messages, want %d (err %v)", len(got), n, batch.Error())
	}
	for _, m := range got[:ack] {
		if err := m.DoubleAck(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// storedAt is when the stream stored message seq.
func (w *world) storedAt(t testing.TB, stream string, seq uint64) time.Time {
	t.Helper()
	s, err := w.js.Stream(t.Context(), stream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMsg(t.Context(), seq)
	if err != nil {
		t.Fatal(err)
	}
	return m.Time
}

func poll(t testing.TB, s *collectnats.Source) *queue.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	snap, err := s.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func consumerOf(t testing.TB, snap *queue.Snapshot, stream, name string) queue.StreamConsumer {
	t.Helper()
	for _, c := range snap.Consumers {
		if c.Stream == stream && c.Name == name {
			return c
		}
	}
	t.Fatalf("consumer %s/%s not in snapshot (%d consumers)", stream, name, len(snap.Consumers))
	return queue.StreamConsumer{}
}

func TestPollNumbers(t *testing.T) {
	w := newWorld(t)
	w.stream(t, "ORDERS", "orders.>")
	w.publish(t, "orders.eu", 6)
	w.publish(t, "orders.us", 4) // seqs 7..10

	healthy := w.consumer(t, "ORDERS", jetstream.ConsumerConfig{Durable: "healthy"})
	fetch(t, healthy, 10, 10)
	slow := w.consumer(t, "ORDERS", jetstream.ConsumerConfig{Durable: "slow"})
	fetch(t, slow, 4, 4)
	stalled := w.consumer(t, "ORDERS", jetstream.ConsumerConfig{Durable: "stalled", MaxAckPending: 3})
	fetch(t, stalled, 3, 0)
	us := w.consumer(t, "ORDERS", jetstream.ConsumerConfig{Durable: "us", FilterSubject: "orders.us"})
	fetch(t, us, 1, 1) // seq 7
	// RETRY holds two messages, so the fetch after the naks can only
	// return the same two again.
	w.stream(t, "RETRY", "retry.>")
	w.publish(t, "retry.x", 2)
	redeliver := w.consumer(t, "RETRY", jetstream.ConsumerConfig{Durable: "redeliver", MaxDeliver: 5})
	for _, m := range fetch(t, redeliver, 2, 0) {
		if err := m.Nak(); err != nil {
			t.Fatal(err)
		}
	}
	fetch(t, redeliver, 2, 0)
	w.consumer(t, "ORDERS", jetstream.ConsumerConfig{Durable: "push", DeliverSubject: "push.orders"})
	if _, err := w.js.CreateOrUpdateConsumer(t.Context(), "ORDERS", jetstream.ConsumerConfig{
		Name: "ephemeral", InactiveThreshold: time.Minute,
	}); err != nil {
		t.Fatal(err)
	}

	s := w.source(t, nil)
	snap := poll(t, s)
	now := snap.Time

	if len(snap.Streams) != 2 {
		t.Fatalf("streams = %d, want 2", len(snap.Streams))
	}
	st := snap.Streams[0]
	if st.Name != "ORDERS" || st.Messages != 10 || st.FirstSeq != 1 || st.LastSeq != 10 || st.Bytes == 0 || st.Retention != "limits" || st.Consumers != 6 {
		t.Errorf("stream = %+v", st)
	}
	if len(snap.Consumers) != 6 {
		t.Errorf("consumers = %d, want 6 durable ones (the ephemeral is left out)", len(snap.Consumers))
	}
	lagOf := func(seq uint64) float64 { return now.Sub(w.storedAt(t, "ORDERS", seq)).Seconds() }
	for _, tc := range []struct {
		name                         string
		pending                      uint64
		ackPending, waiting, redeliv int
		delivered, ackFloor          uint64
		pull, hasLag                 bool
		lagSeq                       uint64 // 0: lag seconds must be 0
	}{
		{name: "healthy", pending: 0, delivered: 10, ackFloor: 10, pull: true, hasLag: true},
		{name: "slow", pending: 6, delivered: 4, ackFloor: 4, pull: true, hasLag: true, lagSeq: 5},
		{name: "stalled", pending: 7, ackPending: 3, delivered: 3, pull: true, hasLag: true, lagSeq: 4},
		{name: "us", pending: 3, delivered: 7, ackFloor: 7, pull: true, hasLag: true, lagSeq: 8},
		{name: "push", pending: 10, pull: false, hasLag: true, lagSeq: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := consumerOf(t, snap, "ORDERS", tc.name)
			if c.Pending != tc.pending || c.AckPending != tc.ackPending || c.Waiting != tc.waiting ||
				c.Redelivered != tc.redeliv || c.DeliveredSeq != tc.delivered || c.AckFloorSeq != tc.ackFloor || c.Pull != tc.pull {
				t.Errorf("got pending %d ack_pending %d waiting %d redelivered %d delivered %d ack_floor %d pull %v; want %+v",
					c.Pending, c.AckPending, c.Waiting, c.Redelivered, c.DeliveredSeq, c.AckFloorSeq, c.Pull, tc)
			}
			if c.HasLagSeconds != tc.hasLag || c.Err != "" {
				t.Fatalf("has lag seconds %v, err %q", c.HasLagSeconds, c.Err)
			}
			want := 0.0
			if tc.lagSeq > 0 {
				want = lagOf(tc.lagSeq)
			}
			if c.LagSeconds != want {
				t.Errorf("lag seconds = %v, want %v (age of seq %d)", c.LagSeconds, want, tc.lagSeq)
			}
		})
	}
	if c := consumerOf(t, snap, "RETRY", "redeliver"); c.Pending != 0 || c.AckPending != 2 || c.Redelivered != 2 || c.DeliveredSeq != 2 || c.MaxDeliver != 5 || c.LagSeconds != 0 {
		t.Errorf("redeliver = %+v, want pending 0, ack pending 2, redelivered 2, delivered 2, max deliver 5, lag 0", c)
	}
	if c := consumerOf(t, snap, "ORDERS", "stalled"); c.MaxAckPending != 3 {
		t.Errorf("stalled max_ack_pending = %d, want 3", c.MaxAckPending)
	}
	if c := consumerOf(t, snap, "ORDERS", "push"); c.PushBound {
		t.Error("push consumer without a subscriber reported bound")
	}
	if len(snap.Partial) != 0 {
		t.Errorf("partial: %v", snap.Partial)
	}
}

// TestWaitingAndBound: a pull request in flight shows as num_waiting, a
// subscriber on a push consumer's deliver subject as bound.
func TestWaitingAndBound(t *testing.T) {
	w := newWorld(t)
	w.stream(t, "IDLE", "idle.>")
	pull := w.consumer(t, "IDLE", jetstream.ConsumerConfig{Durable: "puller"})
	w.consumer(t, "IDLE", jetstream.ConsumerConfig{Durable: "pusher", DeliverSubject: "deliver.idle"})
	sub, err := w.nc.SubscribeSync("deliver.idle")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	done := make(chan struct{})
	go func() {
		defer close(done)
		b, err := pull.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
		if err == nil {
			for range b.Messages() {
			}
		}
	}()
	s := w.source(t, nil)
	deadline := time.Now().Add(5 * time.Second)
	for {
		snap := poll(t, s)
		p, q := consumerOf(t, snap, "IDLE", "puller"), consumerOf(t, snap, "IDLE", "pusher")
		if p.Waiting == 1 && q.PushBound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting = %d, push bound = %v; want 1 and true", p.Waiting, q.PushBound)
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.publish(t, "idle.x", 1)
	<-done
}

// TestLagSecondsCached: a consumer that does not move costs no request on
// the next poll; one that moves costs one.
func TestLagSecondsCached(t *testing.T) {
	w := newWorld(t)
	w.stream(t, "S", "s.>")
	w.publish(t, "s.a", 5)
	c := w.consumer(t, "S", jetstream.ConsumerConfig{Durable: "c"})
	s := w.source(t, nil)
	poll(t, s)
	before := s.Requests()
	poll(t, s)
	// One STREAM.LIST and one CONSUMER.LIST: the next message is cached.
	if got := s.Requests() - before; got != 2 {
		t.Errorf("second poll made %d requests, want 2", got)
	}
	fetch(t, c, 1, 1)
	before = s.Requests()
	snap := poll(t, s)
	if got := s.Requests() - before; got != 3 {
		t.Errorf("poll after the consumer moved made %d requests, want 3", got)
	}
	if got, want := consumerOf(t, snap, "S", "c").LagSeconds, snap.Time.Sub(w.storedAt(t, "S", 2)).Seconds(); got != want {
		t.Errorf("lag seconds = %v, want %v", got, want)
	}
}

// TestStreamFilter: excluded streams and their consumers are not read.
func TestStreamFilter(t *testing.T) {
	w := newWorld(t)
	w.stream(t, "KEEP", "keep.>")
	w.stream(t, "SKIP", "skip.>")
	w.consumer(t, "KEEP", jetstream.ConsumerConfig{Durable: "a"})
	w.consumer(t, "SKIP", jetstream.ConsumerConfig{Durable: "b"})
	s := w.source(t, func(name string) bool { return name != "SKIP" })
	snap := poll(t, s)
	if len(snap.Streams) != 1 || snap.Streams[0].Name != "KEEP" || len(snap.Consumers) != 1 || snap.Consumers[0].Name != "a" {
		t.Errorf("streams %+v consumers %+v", snap.Streams, snap.Consumers)
	}
}

// TestServerDown: with the server gone, the poll fails as a whole.
func TestServerDown(t *testing.T) {
	srv := testenv.NATSEmbedded(t)
	url := srv.ClientURL()
	srv.Shutdown()
	cl, err := brokernats.New(config.NATS{Name: "gone", URL: url})
	if err != nil {
		t.Fatal(err)
	}
	s, err := collectnats.New(collectnats.Options{Cluster: cl})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	if _, err := s.Poll(ctx); err == nil {
		t.Fatal("poll of a stopped server succeeded")
	}
}

// TestStatusSignatures evaluates real polls the way the scheduler does and
// checks each stall signature against a real server.
func TestStatusSignatures(t *testing.T) {
	w := newWorld(t)
	w.stream(t, "ORDERS", "orders.>")
	w.publish(t, "orders.eu", 10)
	fetch(t, w.consumer(t, "ORDERS", jetstream.ConsumerConfig{Durable: "healthy"}), 10, 10)
	fetch(t, w.consumer(t, "ORDERS", jetstream.ConsumerConfig{Durable: "stalled", MaxAckPending: 3}), 3, 0)
	w.consumer(t, "ORDERS", jetstream.ConsumerConfig{Durable: "push", DeliverSubject: "push.orders"})
	fetch(t, w.consumer(t, "ORDERS", jetstream.ConsumerConfig{Durable: "idle"}), 2, 2)
	w.consumer(t, "ORDERS", jetstream.ConsumerConfig{
		Durable: "ahead", DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: 100,
	})
	w.stream(t, "LIMITED", "limited.>")
	if _, err := w.js.UpdateStream(t.Context(), jetstream.StreamConfig{Name: "LIMITED", Subjects: []string{"limited.>"}, MaxMsgs: 5}); err != nil {
		t.Fatal(err)
	}
	w.publish(t, "limited.x", 2)
	fetch(t, w.consumer(t, "LIMITED", jetstream.ConsumerConfig{Durable: "behind"}), 2, 2)
	w.publish(t, "limited.x", 10) // seqs 3..12; 8..12 are kept

	s := w.source(t, nil)
	ev := alerts.NewEvaluator(alerts.StatusOptions{Window: 3})
	var snap *queue.Snapshot
	// A full window, then one poll more: a trend (idle's stall) is judged
	// over a full window and shown once two polls in a row judge it.
	for range 4 {
		snap = poll(t, s)
		ev.Evaluate(snap)
		time.Sleep(10 * time.Millisecond)
	}
	for _, tc := range []struct {
		stream, name string
		want         queue.Status
		reason       string
	}{
		{"ORDERS", "healthy", queue.StatusOK, ""},
		{"ORDERS", "stalled", queue.StatusStall, "max_ack_pending reached: 3 delivered messages unacknowledged, so nothing more is delivered while 7 are pending"},
		{"ORDERS", "ahead", queue.StatusStall, "delivered sequence 99 is past the stream's last sequence 10 (purged or re-created): new messages up to it are skipped"},
		{"LIMITED", "behind", queue.StatusStall, "delivered sequence 2 is below the stream's first sequence 8: 5 messages were removed by the stream's limits before delivery"},
	} {
		c := consumerOf(t, snap, tc.stream, tc.name)
		if c.EffectiveStatus() != tc.want || c.EffectiveReason() != tc.reason {
			t.Errorf("%s/%s: %s %q, want %s %q", tc.stream, tc.name, c.EffectiveStatus(), c.EffectiveReason(), tc.want, tc.reason)
		}
	}
	// The spans depend on the polls' timing; the rest of the sentence must match.
	push := consumerOf(t, snap, "ORDERS", "push")
	if push.EffectiveStatus() != queue.StatusStop || !strings.HasPrefix(push.StatusReason, "no subscriber bound to its deliver subject since ") ||
		!strings.HasSuffix(push.StatusReason, ", 10 pending") {
		t.Errorf("push: %s %q, want stop: no subscriber bound", push.EffectiveStatus(), push.StatusReason)
	}
	idle := consumerOf(t, snap, "ORDERS", "idle")
	if idle.EffectiveStatus() != queue.StatusStall || !strings.HasPrefix(idle.StatusReason, "no pull request waiting and nothing delivered since ") ||
		!strings.HasSuffix(idle.StatusReason, " while 8 are pending") {
		t.Errorf("idle: %s %q, want stall: no pull request waiting", idle.EffectiveStatus(), idle.StatusReason)
	}
}

// TestCapturedDeadLettersAreDLQs checks that, with capture on, the poll
// lists each consumer's captured dead letters as a DLQ of its stream.
func TestCapturedDeadLettersAreDLQs(t *testing.T) {
	w := newWorld(t)
	w.stream(t, "ORDERS", "orders.>")
	w.publish(t, "orders.new", 6)
	c := w.consumer(t, "ORDERS", jetstream.ConsumerConfig{Durable: "billing"})
	for _, m := range fetch(t, c, 4, 0) {
		if err := m.TermWithReason("bad payload"); err != nil {
			t.Fatal(err)
		}
	}
	// A term is not acknowledged by the server: wait until it has processed
	// the four (nothing left pending), so their advisories are gone before
	// the capture stream exists (CI saw all six captured otherwise).
	waitNoAckPending(t, c)
	cl, err := brokernats.New(config.NATS{Name: "local", URL: w.url, DeadLetters: config.NATSDeadLetters{Capture: true, Stream: "QW_DL"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.EnsureCapture(t.Context(), w.js); err != nil {
		t.Fatal(err)
	}
	// The advisories were published before the capture stream existed:
	// terminate two more so that some are captured for certain.
	for _, m := range fetch(t, c, 2, 0) {
		if err := m.TermWithReason("bad payload"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { cl.RunCapture(ctx, slog.New(slog.DiscardHandler)); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	s, err := collectnats.New(collectnats.Options{Cluster: cl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	deadline := time.Now().Add(10 * time.Second)
	for {
		snap := poll(t, s)
		if len(snap.DLQs) == 1 && snap.DLQs[0].Messages == 2 {
			d := snap.DLQs[0]
			if d.Name != "ORDERS.billing" || d.Broker != queue.NATS || d.Source() != "ORDERS" {
				t.Errorf("dlq %+v, want billing of ORDERS", d)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("dlqs %+v (partial %v), want billing with 2", snap.DLQs, snap.Partial)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestFirstPollDefersLagSeconds checks that the first poll after a start
// publishes every consumer's backlog without reading each next message, and
// that Finish reads them so the next poll carries every lag second.
func TestFirstPollDefersLagSeconds(t *testing.T) {
	w := newWorld(t)
	w.stream(t, "ORDERS", "orders.>")
	w.publish(t, "orders.new", 50)
	const consumers = 40 // more than one poll reads when cold
	for i := range consumers {
		w.consumer(t, "ORDERS", jetstream.ConsumerConfig{
			Durable: fmt.Sprintf("c%02d", i), DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: uint64(i + 1),
		})
	}
	s := w.source(t, nil)
	before := s.Requests()
	snap := poll(t, s)
	known := 0
	for _, c := range snap.Consumers {
		if want := uint64(50 - consumerIndex(t, c.Name)); c.Pending != want {
			t.Errorf("%s: pending %d, want %d", c.Name, c.Pending, want)
		}
		if c.HasLagSeconds {
			known++
		}
	}
	if len(snap.Consumers) != consumers || known != 0 {
		t.Fatalf("first poll: %d consumers, %d with lag seconds; want %d and none", len(snap.Consumers), known, consumers)
	}
	if n := s.Requests() - before; n > 5 {
		t.Errorf("first poll made %d requests, want the listings only", n)
	}
	if !s.Finish(t.Context()) {
		t.Fatal("Finish had nothing to read")
	}
	for _, c := range poll(t, s).Consumers {
		want := time.Since(w.storedAt(t, "ORDERS", uint64(consumerIndex(t, c.Name)+1))).Seconds()
		if !c.HasLagSeconds || c.LagSeconds > want+1 || c.LagSeconds < want-2 {
			t.Errorf("%s: lag seconds %.1f (known %v), want ≈%.1f", c.Name, c.LagSeconds, c.HasLagSeconds, want)
		}
	}
	if s.Finish(t.Context()) {
		t.Error("Finish found work again after a warm poll")
	}
}

func consumerIndex(t *testing.T, name string) int {
	t.Helper()
	var i int
	if _, err := fmt.Sscanf(name, "c%02d", &i); err != nil {
		t.Fatal(err)
	}
	return i
}

// TestDeadCaptureIsPartial checks that dead-letter capture that cannot do
// its work (another stream takes the advisory subjects) is the poll's
// first partial failure, recognised by brokers/nats.IsCaptureDown, and
// blanks no consumer: their lag is still read.
func TestDeadCaptureIsPartial(t *testing.T) {
	w := newWorld(t)
	w.stream(t, "ORDERS", "orders.>")
	w.stream(t, "OTHER_ADVISORIES", brokernats.AdvisoryTerminated+".>")
	w.publish(t, "orders.new", 3)
	w.consumer(t, "ORDERS", jetstream.ConsumerConfig{Durable: "billing"})
	cl, err := brokernats.New(config.NATS{Name: "local", URL: w.url, DeadLetters: config.NATSDeadLetters{Capture: true, Stream: "QW_DL"}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := collectnats.New(collectnats.Options{Cluster: cl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)

	snap := poll(t, s)
	if c := consumerOf(t, snap, "ORDERS", "billing"); c.Pending != 3 || c.Err != "" {
		t.Errorf("billing pending %d, err %q; want 3 and none", c.Pending, c.Err)
	}
	if len(snap.Partial) == 0 || !brokernats.IsCaptureDown(snap.Partial[0]) || !strings.Contains(snap.Partial[0], "stream OTHER_ADVISORIES takes subject") {
		t.Fatalf("partial %q, want first the capture error naming OTHER_ADVISORIES", snap.Partial)
	}
	for _, p := range snap.Partial[1:] {
		if brokernats.IsCaptureDown(p) {
			t.Errorf("partial %q taken for the capture error", p)
		}
	}
}

// TestOwnObjectsNotListed checks that queuewatch's own capture consumer
// and lease bucket are not listed as a user's stream, consumer or DLQ,
// while every user consumer is a DLQ, at 0 until it dead-letters.
func TestOwnObjectsNotListed(t *testing.T) {
	w := newWorld(t)
	w.stream(t, "ORDERS", "orders.>")
	w.consumer(t, "ORDERS", jetstream.ConsumerConfig{Durable: "billing"})
	cl, err := brokernats.New(config.NATS{Name: "local", URL: w.url, DeadLetters: config.NATSDeadLetters{Capture: true, Stream: "QW_DL"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.EnsureCapture(t.Context(), w.js); err != nil {
		t.Fatal(err)
	}
	if _, err := w.js.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: cl.LeaseBucket(), TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	s, err := collectnats.New(collectnats.Options{Cluster: cl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	snap := poll(t, s)
	var streams, consumers, dlqs []string
	for _, st := range snap.Streams {
		streams = append(streams, st.Name)
	}
	for _, c := range snap.Consumers {
		consumers = append(consumers, c.Stream+"/"+c.Name)
	}
	for _, d := range snap.DLQs {
		dlqs = append(dlqs, fmt.Sprintf("%s=%d", d.Name, d.Messages))
	}
	got := fmt.Sprint(streams, consumers, dlqs)
	if want := "[ORDERS QW_DL QW_DL_ADVISORIES] [ORDERS/billing] [ORDERS.billing=0]"; got != want {
		t.Errorf("listed %s, want %s", got, want)
	}
}

// waitNoAckPending waits until the server has processed every ack of c's
// delivered messages.
func waitNoAckPending(t *testing.T, c jetstream.Consumer) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ci, err := c.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if ci.NumAckPending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer %s still has %d acks pending", ci.Name, ci.NumAckPending)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
