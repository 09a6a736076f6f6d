package nats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// captureFixture is an embedded server with stream ORDERS (subject
// orders.>) and a client.
type captureFixture struct {
	s  *server.Server
	c  *Cluster
	nc *nats.Conn
	js jetstream.JetStream
}

func newCaptureFixture(t *testing.T, retention jetstream.RetentionPolicy) *captureFixture {
	t.Helper()
	s := startServer(t, &server.Options{})
	c, err := New(config.NATS{Name: "n", URL: s.ClientURL(), DeadLetters: config.NATSDeadLetters{Capture: true, Stream: "QW_DL"}})
	if err != nil {
		t.Fatal(err)
	}
	nc, js, err := c.Connect(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: "ORDERS", Subjects: []string{"orders.>"}, Retention: retention,
	}); err != nil {
		t.Fatal(err)
	}
	// As on queuewatch's first start: from now on advisories are kept.
	if _, err := c.EnsureCapture(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	return &captureFixture{s: s, c: c, nc: nc, js: js}
}

// deadLetter publishes n messages to subject and makes consumer give up on
// each: with term it answers AckTerm, otherwise it naks until max_deliver
// (3) is reached — fetching 3n messages.
func (f *captureFixture) deadLetter(t *testing.T, consumer, subject string, n int, term bool) {
	t.Helper()
	f.deadLetterIn(t, "ORDERS", consumer, subject, n, term)
}

// deadLetterIn is deadLetter on stream.
func (f *captureFixture) deadLetterIn(t *testing.T, stream, consumer, subject string, n int, term bool) {
	t.Helper()
	ctx := context.Background()
	cons, err := f.js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
		Durable: consumer, AckPolicy: jetstream.AckExplicitPolicy, MaxDeliver: 3, FilterSubject: subject,
		AckWait: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		m := nats.NewMsg(subject)
		m.Header.Set("tenant", "t"+strconv.Itoa(i%3))
		m.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("%s-%d", consumer, i))
		m.Data = []byte(fmt.Sprintf(`{"n":%d}`, i))
		if _, err := f.js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	want := 3 * n
	if term {
		want = n
	}
	got := 0
	for deadline := time.Now().Add(20 * time.Second); got < want && time.Now().Before(deadline); {
		batch, err := cons.Fetch(want-got, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			got++
			if term {
				err = m.TermWithReason("bad payload")
			} else {
				err = m.Nak()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if got != want {
		t.Fatalf("fetched %d, want %d", got, want)
	}
	// The server notices max_deliver when it would deliver once more, so
	// one more pull makes it publish the max-deliveries advisories.
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		t.Fatalf("delivered a %d-th time: %s", 3+1, m.Subject())
	}
}

// runCapture runs the capture worker until the test ends.
func (f *captureFixture) runCapture(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.c.RunCapture(ctx, slog.New(slog.DiscardHandler)); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// waitDLQs polls DeadLetterQueues until it reports want messages in all.
func (f *captureFixture) waitDLQs(t *testing.T, want int64) []queue.DLQ {
	t.Helper()
	var dlqs []queue.DLQ
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var err error
		dlqs, err = f.c.DeadLetterQueues(context.Background(), f.js, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, d := range dlqs {
			n += d.Messages
		}
		if n == want {
			return dlqs
		}
	}
	t.Fatalf("dlqs never held %d messages: %+v", want, dlqs)
	return nil
}

func TestCaptureMaxDeliveriesAndTerminated(t *testing.T) {
	f := newCaptureFixture(t, jetstream.LimitsPolicy)
	f.deadLetter(t, "billing", "orders.new", 10, false)
	f.deadLetter(t, "audit", "orders.paid", 4, true)
	start := time.Now()
	f.runCapture(t)
	dlqs := f.waitDLQs(t, 14)
	if len(dlqs) != 2 {
		t.Fatalf("dlqs %+v, want audit and billing", dlqs)
	}
	for i, want := range []struct {
		name string
		n    int64
	}{{"ORDERS.audit", 4}, {"ORDERS.billing", 10}} {
		d := dlqs[i]
		if d.Name != want.name || d.Messages != want.n || d.Broker != queue.NATS || d.Cluster != "n" ||
			len(d.Sources) != 1 || d.Sources[0] != "ORDERS" || !d.HasOldestAge || d.OldestAge > time.Since(start)+time.Second {
			t.Errorf("dlq %d: %+v, want %s with %d from ORDERS", i, d, want.name, want.n)
		}
	}
	if f.c.LostDeadLetters() != 0 || f.c.CapturedDeadLetters() != 14 {
		t.Errorf("lost %d captured %d, want 0 and 14", f.c.LostDeadLetters(), f.c.CapturedDeadLetters())
	}

	// The copies carry the original and the capture headers.
	dl, err := f.js.Stream(context.Background(), "QW_DL")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := dl.GetMsg(context.Background(), 1, jetstream.WithGetMsgSubject("QW_DL.ORDERS.audit"))
	if err != nil {
		t.Fatal(err)
	}
	d := DecodeDeadLetter(raw)
	m := d.Message
	if d.Stream != "ORDERS" || d.Subject != "orders.paid" || d.Consumer != "audit" || d.Lost ||
		m.Death.Source() != "ORDERS" || m.Death.Reason() != ReasonTerminated || m.Death.ExceptionMessage != "bad payload" ||
		m.ID != "ORDERS@"+strconv.FormatUint(d.StreamSeq, 10) || string(m.Body) != `{"n":0}` {
		t.Errorf("decoded %+v / %+v", d, m.Death)
	}
	if v, _ := m.Header("tenant"); string(v) != "t0" {
		t.Errorf("tenant header %q", v)
	}
	if v, _ := m.Header(HeaderMsgID); string(v) != "audit-0" {
		t.Errorf("original msg id %q", v)
	}
	if _, ok := m.Header(jetstream.MsgIDHeader); ok {
		t.Error("the capture's own Nats-Msg-Id is shown as a message header")
	}
	raw, err = dl.GetMsg(context.Background(), 1, jetstream.WithGetMsgSubject("QW_DL.ORDERS.billing"))
	if err != nil {
		t.Fatal(err)
	}
	if m := DecodeDeadLetter(raw).Message; m.Death.Reason() != ReasonMaxDeliveries || m.Death.Deaths[0].Count != 3 {
		t.Errorf("max deliveries copy: %+v", m.Death)
	}
	// The advisories were all taken from their work queue.
	adv, err := f.js.Stream(context.Background(), "QW_DL_ADVISORIES")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		info, err := adv.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d advisories left in the advisory stream", info.State.Msgs)
		}
	}
}

// A running worker captures dead letters as they happen (the other tests
// dead-letter first: advisories wait in their stream while queuewatch is
// down).
func TestCaptureLive(t *testing.T) {
	f := newCaptureFixture(t, jetstream.LimitsPolicy)
	f.runCapture(t)
	f.deadLetter(t, "billing", "orders.new", 5, false)
	f.waitDLQs(t, 5)
}

// A WorkQueue stream removes a terminated message at once: its dead
// letter is kept without payload and counted as lost.
func TestCapturePayloadLost(t *testing.T) {
	f := newCaptureFixture(t, jetstream.WorkQueuePolicy)
	f.deadLetter(t, "worker", "orders.new", 3, true)
	f.runCapture(t)
	f.waitDLQs(t, 3)
	if got := f.c.LostDeadLetters(); got != 3 {
		t.Fatalf("lost %d, want 3", got)
	}
	dl, _ := f.js.Stream(context.Background(), "QW_DL")
	raw, err := dl.GetMsg(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if d := DecodeDeadLetter(raw); !d.Lost || len(d.Message.Body) != 0 || d.StreamSeq == 0 {
		t.Fatalf("copy %+v, want a payload-lost marker naming the sequence", d)
	}
}

// A copy stored again (the worker stopped before acknowledging its
// advisory) is dropped by the dead-letter stream's duplicate window.
func TestCaptureTwiceStoresOnce(t *testing.T) {
	f := newCaptureFixture(t, jetstream.LimitsPolicy)
	if _, err := f.js.Publish(context.Background(), "orders.new", []byte("x")); err != nil {
		t.Fatal(err)
	}
	w := &captureWorker{c: f.c, js: f.js, log: slog.New(slog.DiscardHandler), streams: map[string]jetstream.Stream{}}
	a := Advisory{Stream: "ORDERS", Consumer: "c", StreamSeq: 1, Deliveries: 3, Time: time.Now()}
	for range 2 {
		if err := w.capture(context.Background(), a, ReasonMaxDeliveries); err != nil {
			t.Fatal(err)
		}
	}
	dlqs := f.waitDLQs(t, 1)
	if f.c.CapturedDeadLetters() != 1 || dlqs[0].Messages != 1 {
		t.Fatalf("captured %d, dlqs %+v: want one copy", f.c.CapturedDeadLetters(), dlqs)
	}
}

// TestDeadLetterQueueNamesStreamQualified checks that a DLQ is named
// "<stream>.<consumer>" from its first dead letter on, so a second
// stream's consumer of the same name changes no DLQ's name (it once
// renamed "worker" to "ORDERS.worker"), and that a consumer a poll found
// is listed at 0 while it has none.
func TestDeadLetterQueueNamesStreamQualified(t *testing.T) {
	f := newCaptureFixture(t, jetstream.LimitsPolicy)
	if _, err := f.js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "PAYMENTS", Subjects: []string{"payments"}}); err != nil {
		t.Fatal(err)
	}
	w := &captureWorker{c: f.c, js: f.js, log: slog.New(slog.DiscardHandler), streams: map[string]jetstream.Stream{}}
	capture := func(as ...Advisory) {
		for _, a := range as {
			if err := w.capture(context.Background(), a, ReasonTerminated); err != nil {
				t.Fatal(err)
			}
		}
	}
	names := func(dlqs []queue.DLQ) string {
		var out []string
		for _, d := range dlqs {
			out = append(out, fmt.Sprintf("%s=%d", d.Name, d.Messages))
		}
		return fmt.Sprint(out)
	}
	capture(Advisory{Stream: "ORDERS", Consumer: "worker", StreamSeq: 1}, Advisory{Stream: "PAYMENTS", Consumer: "solo", StreamSeq: 1})
	if got := names(f.waitDLQs(t, 2)); got != "[ORDERS.worker=1 PAYMENTS.solo=1]" {
		t.Fatalf("names %v", got)
	}
	capture(Advisory{Stream: "PAYMENTS", Consumer: "worker", StreamSeq: 1})
	if got := names(f.waitDLQs(t, 3)); got != "[ORDERS.worker=1 PAYMENTS.solo=1 PAYMENTS.worker=1]" {
		t.Fatalf("names %v", got)
	}
	polled := []queue.StreamConsumer{{Stream: "ORDERS", Name: "worker"}, {Stream: "ORDERS", Name: "idle"}, {Stream: "QW_DL_ADVISORIES", Name: CaptureConsumer}}
	dlqs, err := f.c.DeadLetterQueues(context.Background(), f.js, polled)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(dlqs); got != "[ORDERS.idle=0 ORDERS.worker=1 PAYMENTS.solo=1 PAYMENTS.worker=1]" {
		t.Fatalf("names with the polled consumers %v", got)
	}
	if d := dlqs[0]; !d.HasOldestAge || d.OldestAge != 0 || d.Sources[0] != "ORDERS" {
		t.Errorf("empty dlq %+v, want oldest age 0 known, source ORDERS", d)
	}
}

// A stream deleted and created again numbers its messages from 1 again:
// its new dead letters are not taken for the old ones' duplicates.
func TestCaptureAfterStreamRecreated(t *testing.T) {
	f := newCaptureFixture(t, jetstream.LimitsPolicy)
	f.runCapture(t)
	f.deadLetter(t, "worker", "orders.new", 2, true)
	f.waitDLQs(t, 2)
	ctx := context.Background()
	if err := f.js.DeleteStream(ctx, "ORDERS"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	f.deadLetter(t, "worker", "orders.new", 2, true)
	f.waitDLQs(t, 4)
}

// newSlowStreamFixture is a capture fixture whose server has a second
// stream, SLOW, that the capture worker cannot read: its user may not
// send SLOW's "get message" requests, which then go unanswered until they
// time out, as they do while a stream has no leader. The fixture's own
// client may do everything; capture is the returned cluster's.
func newSlowStreamFixture(t *testing.T) (*captureFixture, *Cluster) {
	t.Helper()
	s := startServer(t, &server.Options{Users: []*server.User{
		{Username: "admin", Password: "admin"},
		{Username: "qw", Password: "qw", Permissions: &server.Permissions{Publish: &server.SubjectPermission{
			Allow: []string{">"},
			Deny:  []string{"$JS.API.STREAM.MSG.GET.SLOW", "$JS.API.DIRECT.GET.SLOW", "$JS.API.DIRECT.GET.SLOW.>"},
		}}},
	}})
	dl := config.NATSDeadLetters{Capture: true, Stream: "QW_DL"}
	admin, err := New(config.NATS{Name: "n", URL: s.ClientURL(), User: "admin", Password: "admin", DeadLetters: dl})
	if err != nil {
		t.Fatal(err)
	}
	capture, err := New(config.NATS{Name: "n", URL: s.ClientURL(), User: "qw", Password: "qw", DeadLetters: dl})
	if err != nil {
		t.Fatal(err)
	}
	nc, js, err := admin.Connect(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	for _, name := range []string{"ORDERS", "SLOW"} {
		if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{
			Name: name, Subjects: []string{strings.ToLower(name) + ".>"},
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := capture.EnsureCapture(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	return &captureFixture{s: s, c: capture, nc: nc, js: js}, capture
}

// TestCaptureSlowStreamHoldsBackNoOther checks that the dead letters of a
// stream that answers nothing do not wait behind it: advisories are
// captured per stream, side by side.
func TestCaptureSlowStreamHoldsBackNoOther(t *testing.T) {
	f, _ := newSlowStreamFixture(t)
	// SLOW's advisories come first in the advisory stream.
	f.deadLetterIn(t, "SLOW", "stuck", "slow.new", 5, true)
	f.deadLetter(t, "billing", "orders.new", 5, true)
	f.runCapture(t)
	start := time.Now()
	for {
		dlqs, err := f.c.DeadLetterQueues(context.Background(), f.js, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(dlqs) == 1 && dlqs[0].Name == "ORDERS.billing" && dlqs[0].Messages == 5 {
			break
		}
		if time.Since(start) > 3*time.Second {
			t.Fatalf("after %v ORDERS' dead letters are not captured: %+v", time.Since(start), dlqs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCaptureGivesUpKeepingPayloadLost checks that an advisory whose
// original cannot be read is retried a bounded number of times, each
// failure counted, and then kept as a dead letter without payload that
// says why, rather than retried forever or dropped.
func TestCaptureGivesUpKeepingPayloadLost(t *testing.T) {
	f, capture := newSlowStreamFixture(t)
	capture.tune = captureTuning{timeout: 200 * time.Millisecond, retryDelay: 50 * time.Millisecond, maxDeliveries: 3}
	f.deadLetterIn(t, "SLOW", "stuck", "slow.new", 2, true)
	f.deadLetter(t, "billing", "orders.new", 1, true)
	f.runCapture(t)
	dlqs := f.waitDLQs(t, 3)
	if len(dlqs) != 2 || dlqs[1].Name != "SLOW.stuck" || dlqs[1].Messages != 2 {
		t.Fatalf("dlqs %+v, want billing 1 and stuck 2", dlqs)
	}
	// Each advisory is tried at its last delivery; earlier ones may be
	// handed back untried within the retry delay after a failure, and are
	// not attempts.
	if got := capture.CaptureFailures(); len(got) != 1 || got["SLOW"] < 2 || got["SLOW"] > 2*3 {
		t.Errorf("failures %v, want SLOW: 2 to 6 (two advisories, three deliveries each, the last always tried)", got)
	}
	if capture.LostDeadLetters() != 2 || capture.CapturedDeadLetters() != 3 {
		t.Errorf("lost %d captured %d, want 2 and 3", capture.LostDeadLetters(), capture.CapturedDeadLetters())
	}
	dl, err := f.js.Stream(context.Background(), "QW_DL")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := dl.GetMsg(context.Background(), 1, jetstream.WithGetMsgSubject("QW_DL.SLOW.stuck"))
	if err != nil {
		t.Fatal(err)
	}
	d := DecodeDeadLetter(raw)
	cause, _ := d.Message.Header(HeaderCaptureError)
	if !d.Lost || d.Stream != "SLOW" || d.StreamSeq == 0 ||
		!strings.Contains(string(cause), "gave up after 3 attempts") || !strings.Contains(string(cause), "SLOW") {
		t.Fatalf("copy %+v, cause %q: want a payload-lost dead letter saying why", d, cause)
	}
	adv, err := f.js.Stream(context.Background(), "QW_DL_ADVISORIES")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		info, err := adv.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d advisories left in the advisory stream", info.State.Msgs)
		}
	}
}

func TestCaptureStreamAdvice(t *testing.T) {
	good := jetstream.StreamConfig{Subjects: []string{"QW_DL.>"}, Retention: jetstream.LimitsPolicy, Duplicates: time.Hour}
	goodAdv := jetstream.StreamConfig{Subjects: []string{AdvisoryMaxDeliveries + ".>", AdvisoryTerminated + ".>"}, Retention: jetstream.WorkQueuePolicy}
	for _, tc := range []struct {
		name       string
		advisories bool
		cfg        jetstream.StreamConfig
		want       []string
	}{
		{"dead letters as made", false, good, nil},
		{"advisories as made", true, goodAdv, nil},
		{"dead letters on exactly their tokens", false, jetstream.StreamConfig{Subjects: []string{"QW_DL.*.*"}, Duplicates: 2 * time.Hour}, nil},
		{"advisories under one wider filter", true, jetstream.StreamConfig{Subjects: []string{"$JS.EVENT.ADVISORY.CONSUMER.*.>"}, Retention: jetstream.WorkQueuePolicy}, nil},
		{"short duplicate window, memory", false, jetstream.StreamConfig{Subjects: []string{">"}, Duplicates: 2 * time.Minute, Storage: jetstream.MemoryStorage}, []string{
			"memory storage: its messages are lost when the server restarts",
			"duplicate window 2m0s is shorter than 1h0m0s: an advisory captured again later than that after a restart is stored twice",
		}},
		{"narrower subjects, interest", false, jetstream.StreamConfig{Subjects: []string{"QW_DL.*"}, Retention: jetstream.InterestPolicy, Duplicates: 2 * time.Hour}, []string{
			"subjects do not include QW_DL.*.*: those dead letters are not captured",
			"interest retention, not limits: copies may be removed before they are replayed",
		}},
		{"advisories: one subject, limits", true, jetstream.StreamConfig{Subjects: []string{AdvisoryTerminated + ".ORDERS.*"}}, []string{
			"subjects do not include " + AdvisoryMaxDeliveries + ".*.*: those dead letters are not captured",
			"subjects do not include " + AdvisoryTerminated + ".*.*: those dead letters are not captured",
			"limits retention, not workqueue: captured advisories stay until its limits remove them",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := captureStreamAdvice("QW_DL", tc.advisories, tc.cfg); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("advice\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestCaptureBurstHandsNothingBack checks that a burst of one stream's
// advisories larger than a fetch is captured without any being handed
// back to wait out the retry delay (a lane smaller than the consumer's
// max_ack_pending did that to every fetch past it).
func TestCaptureBurstHandsNothingBack(t *testing.T) {
	f := newCaptureFixture(t, jetstream.LimitsPolicy)
	f.c.tune = captureTuning{timeout: 10 * time.Second, retryDelay: time.Hour, maxDeliveries: 10}
	f.deadLetter(t, "billing", "orders.new", 250, true)
	f.runCapture(t)
	f.waitDLQs(t, 250)
	if got := f.c.CaptureFailures(); len(got) != 0 {
		t.Errorf("failures %v during a burst, want none", got)
	}
}

func TestCaptureErrorFromListing(t *testing.T) {
	c, err := New(config.NATS{Name: "n", URL: "nats://127.0.0.1:1", DeadLetters: config.NATSDeadLetters{Capture: true, Stream: "QW_DL"}})
	if err != nil {
		t.Fatal(err)
	}
	info := func(name string, subjects ...string) *jetstream.StreamInfo {
		return &jetstream.StreamInfo{Config: jetstream.StreamConfig{Name: name, Subjects: subjects}}
	}
	ours := []*jetstream.StreamInfo{info("QW_DL", "QW_DL.>"), info("QW_DL_ADVISORIES", AdvisoryMaxDeliveries+".>", AdvisoryTerminated+".>")}
	limited := info("QW_DL_ADVISORIES", AdvisoryMaxDeliveries+".>", AdvisoryTerminated+".>")
	limited.Config.MaxMsgs, limited.Config.MaxAge = 100, time.Hour
	for _, tc := range []struct {
		name    string
		streams []*jetstream.StreamInfo
		want    string
	}{
		{"capture as made", append(ours, info("ORDERS", "orders.>", "$JS.EVENT.>")), ""},
		{"not started yet", []*jetstream.StreamInfo{info("ORDERS", "orders.>")}, ""},
		{
			"another capture's advisory stream",
			[]*jetstream.StreamInfo{info("QW_OTHER_ADVISORIES", "$JS.EVENT.ADVISORY.CONSUMER.*.>")},
			"stream QW_OTHER_ADVISORIES takes subject $JS.EVENT.ADVISORY.CONSUMER.*.>, so capture cannot create QW_DL_ADVISORIES",
		},
		{
			"dead-letter subjects taken",
			[]*jetstream.StreamInfo{info("ALL", "QW_DL.x.y")},
			"stream ALL takes subject QW_DL.x.y, so capture cannot create QW_DL",
		},
		{
			"advisory stream limited",
			[]*jetstream.StreamInfo{ours[0], limited},
			"stream QW_DL_ADVISORIES has max_msgs 100, max_age 1h0m0s: past it the server drops advisories",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CaptureError(tc.streams)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("err %v, want none", err)
				}
				return
			}
			if !errors.Is(err, ErrCaptureDown) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want ErrCaptureDown saying %q", err, tc.want)
			}
		})
	}
	off, _ := New(config.NATS{Name: "n", URL: "nats://127.0.0.1:1"})
	if err := off.CaptureError([]*jetstream.StreamInfo{info("QW_OTHER_ADVISORIES", ">")}); err != nil {
		t.Errorf("capture off: err %v", err)
	}
}

// TestCaptureThatCannotStart checks that a capture whose advisory
// subjects another stream takes reports it as the cluster's capture
// error, leaves no dead-letter stream behind, and clears the error once
// the other stream is gone and it runs.
func TestCaptureThatCannotStart(t *testing.T) {
	s := startServer(t, &server.Options{})
	c, err := New(config.NATS{Name: "n", URL: s.ClientURL(), DeadLetters: config.NATSDeadLetters{Capture: true, Stream: "QW_DL"}})
	if err != nil {
		t.Fatal(err)
	}
	nc, js, err := c.Connect(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OTHER_ADVISORIES", Subjects: []string{AdvisoryTerminated + ".>"}}); err != nil {
		t.Fatal(err)
	}
	f := &captureFixture{s: s, c: c, nc: nc, js: js}
	f.runCapture(t)
	list := func() []*jetstream.StreamInfo {
		var out []*jetstream.StreamInfo
		for si := range js.ListStreams(ctx).Info() {
			out = append(out, si)
		}
		return out
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c.health.mu.Lock()
		failed := c.health.err != nil
		c.health.mu.Unlock()
		if failed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("capture reported no error")
		}
	}
	err = c.CaptureError(list())
	if !errors.Is(err, ErrCaptureDown) || !strings.Contains(err.Error(), "its last start failed") || !strings.Contains(err.Error(), "OTHER_ADVISORIES") {
		t.Fatalf("capture error %v", err)
	}
	if _, err := js.Stream(ctx, "QW_DL"); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("dead-letter stream left behind: %v", err)
	}
	if err := js.DeleteStream(ctx, "OTHER_ADVISORIES"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); c.CaptureError(list()) != nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("capture error after the other stream is gone: %v", c.CaptureError(list()))
		}
	}
}

// TestDLQSubjectKnowsListedNamesOnly checks which DLQ names resolve: a
// consumer that exists, or one deleted whose copies remain; not a
// consumer that does not exist, a consumer name alone, a consumer of a
// stream the configuration excludes that has no copies, nor queuewatch's
// own capture consumer.
func TestDLQSubjectKnowsListedNamesOnly(t *testing.T) {
	f := newCaptureFixture(t, jetstream.LimitsPolicy)
	ctx := context.Background()
	if _, err := f.js.CreateStream(ctx, jetstream.StreamConfig{Name: "AUDIT", Subjects: []string{"audit"}}); err != nil {
		t.Fatal(err)
	}
	for _, sc := range [][2]string{{"ORDERS", "live"}, {"ORDERS", "gone"}, {"AUDIT", "reader"}} {
		if _, err := f.js.CreateOrUpdateConsumer(ctx, sc[0], jetstream.ConsumerConfig{Durable: sc[1]}); err != nil {
			t.Fatal(err)
		}
	}
	// A push consumer exists as much as a pull one (jetstream's Consumer
	// refuses to return it with ErrNotPullConsumer).
	if _, err := f.js.CreateOrUpdatePushConsumer(ctx, "ORDERS", jetstream.ConsumerConfig{Durable: "pushed", DeliverSubject: "deliver.pushed"}); err != nil {
		t.Fatal(err)
	}
	w := &captureWorker{c: f.c, js: f.js, log: slog.New(slog.DiscardHandler), streams: map[string]jetstream.Stream{}}
	if err := w.capture(ctx, Advisory{Stream: "ORDERS", Consumer: "gone", StreamSeq: 1}, ReasonTerminated); err != nil {
		t.Fatal(err)
	}
	if err := f.js.DeleteConsumer(ctx, "ORDERS", "gone"); err != nil {
		t.Fatal(err)
	}
	cfg := f.c.Config()
	cfg.Streams.Exclude = []string{"AUDIT"}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dl, err := f.js.Stream(ctx, "QW_DL")
	if err != nil {
		t.Fatal(err)
	}
	for name, known := range map[string]bool{
		"ORDERS.live": true, "ORDERS.gone": true, "ORDERS.pushed": true,
		"ORDERS.nosuch": false, "NOSUCH.live": false, "live": false, "AUDIT.reader": false,
		"QW_DL_ADVISORIES." + CaptureConsumer: false,
	} {
		subject, err := c.DLQSubject(ctx, f.js, dl, name)
		switch {
		case known && (err != nil || subject != "QW_DL."+name):
			t.Errorf("%s: %q, %v; want its subject", name, subject, err)
		case !known && !errors.Is(err, ErrUnknownDLQ):
			t.Errorf("%s: %q, %v; want ErrUnknownDLQ", name, subject, err)
		}
	}
}

// retryLog is a slog handler that sends the error of each "retrying" line
// of the capture loop.
type retryLog struct{ errs chan string }

func (h retryLog) Enabled(context.Context, slog.Level) bool { return true }

func (h retryLog) Handle(_ context.Context, r slog.Record) error {
	if !strings.Contains(r.Message, "retrying") {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			select {
			case h.errs <- a.Value.String():
			default:
			}
		}
		return true
	})
	return nil
}

func (h retryLog) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h retryLog) WithGroup(string) slog.Handler { return h }

// TestCaptureOutageIsNoCaptureError checks that capture failing to
// connect while the server is down reports no capture error (the poll
// reports the server down), so the source does not keep calling capture
// dead after the server is back, until capture's next try up to a minute
// later; and that capture resumes after the restart.
func TestCaptureOutageIsNoCaptureError(t *testing.T) {
	storeDir := t.TempDir()
	opts := func(port int) *server.Options {
		return &server.Options{Port: port, JetStream: true, StoreDir: storeDir, NoLog: true, NoSigs: true}
	}
	run := func(port int) *server.Server {
		t.Helper()
		s, err := server.NewServer(opts(port))
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatal("nats server not ready")
		}
		t.Cleanup(s.Shutdown)
		return s
	}
	s := run(-1)
	port := s.Addr().(*net.TCPAddr).Port
	c, err := New(config.NATS{Name: "n", URL: s.ClientURL(), DeadLetters: config.NATSDeadLetters{Capture: true, Stream: "QW_DL"}})
	if err != nil {
		t.Fatal(err)
	}
	log := retryLog{errs: make(chan string, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.RunCapture(ctx, slog.New(log)); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	f := &captureFixture{c: c}
	connect := func() {
		t.Helper()
		f.nc, f.js, err = c.Connect(context.Background(), "test")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.nc.Close)
	}
	connect()
	if _, err := f.js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	// EnsureCapture before dead-lettering, as capture's first start would:
	// advisories published before its stream exists are not kept.
	if _, err := c.EnsureCapture(context.Background(), f.js); err != nil {
		t.Fatal(err)
	}
	f.deadLetter(t, "worker", "orders.created", 1, true)
	f.waitDLQs(t, 1)
	// Capture counts as started once its first fetch (of at most a second)
	// ends; an outage before that would be a failed start.
	time.Sleep(1500 * time.Millisecond)

	s.Shutdown()
	s.WaitForShutdown()
	// Its connection lost, capture retries at once and fails to connect.
	for connectFailed := false; !connectFailed; {
		select {
		case e := <-log.errs:
			connectFailed = strings.Contains(e, "no servers available")
		case <-time.After(20 * time.Second):
			t.Fatal("capture logged no failed connection")
		}
	}
	if err := c.CaptureError(nil); err != nil {
		t.Errorf("while the server is down: capture error %v, want none", err)
	}

	run(port)
	if err := c.CaptureError(nil); err != nil {
		t.Errorf("once the server is back: capture error %v, want none", err)
	}
	connect()
	f.deadLetter(t, "payer", "orders.paid", 1, true)
	f.waitDLQs(t, 2)
}
