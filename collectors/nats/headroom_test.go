package nats_test

import (
	"math"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	collectnats "github.com/queuewatch/queuewatch/collectors/nats"
)

// TestHeadroomMaxAge: a consumer's headroom is its stream's max_age, as
// the server reports it, less the age of its next undelivered message; the
// server then deletes that message at the predicted time, seen within one
// poll. A consumer with nothing pending has none.
func TestHeadroomMaxAge(t *testing.T) {
	w := newWorld(t)
	if _, err := w.js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "AGED", Subjects: []string{"aged.>"}, MaxAge: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	w.publish(t, "aged.x", 3)
	w.consumer(t, "AGED", jetstream.ConsumerConfig{Durable: "slow"})
	idle := w.consumer(t, "AGED", jetstream.ConsumerConfig{Durable: "done"})
	fetch(t, idle, 3, 3)
	waitNoAckPending(t, idle)

	s := w.source(t, nil)
	snap := poll(t, s)
	st, err := w.js.Stream(t.Context(), "AGED")
	if err != nil {
		t.Fatal(err)
	}
	maxAge := st.CachedInfo().Config.MaxAge // the server's own setting
	stored := w.storedAt(t, "AGED", 1)
	predicted := stored.Add(maxAge)
	h := consumerOf(t, snap, "AGED", "slow").Headroom
	if want := predicted.Sub(snap.Time).Seconds(); !h.Known || h.Projected || math.Abs(h.Seconds-want) > 0.01 || h.Limit != "max_age 3s" {
		t.Fatalf("headroom %+v; want %.3fs from max_age %s", h, want, maxAge)
	}
	if h := consumerOf(t, snap, "AGED", "done").Headroom; h.Known {
		t.Errorf("caught-up consumer: headroom %+v; want none", h)
	}

	// Poll as queuewatch would, every 100ms, until the server deleted the
	// first message: it goes when the headroom said, within a poll.
	const every = 100 * time.Millisecond
	for {
		snap = poll(t, s)
		if st := snap.Streams[0]; st.FirstSeq > 1 || st.Messages == 0 {
			break
		}
		if time.Since(predicted) > 5*time.Second {
			t.Fatalf("the first message outlived its predicted deletion at %s by 5s", predicted.Format(time.StampMilli))
		}
		time.Sleep(every)
	}
	late := snap.Time.Sub(predicted)
	t.Logf("max_age %s: headroom %.3fs at the first poll; deleted by the poll %s after the predicted time", maxAge, h.Seconds, late)
	if late < 0 || late > every+time.Second {
		t.Errorf("deleted by %s, %s after the predicted %s; want within a poll", snap.Time.Format(time.StampMilli), late, predicted.Format(time.StampMilli))
	}
}

// TestHeadroomMaxMsgsProjected: on a stream with max_msgs and discard old,
// the headroom is projected from the first sequence gaining on the
// consumer's next one across polls. Polls are 100s apart on the source's
// clock.
func TestHeadroomMaxMsgsProjected(t *testing.T) {
	w := newWorld(t)
	if _, err := w.js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "CAPPED", Subjects: []string{"capped.>"}, MaxMsgs: 100, Discard: jetstream.DiscardOld}); err != nil {
		t.Fatal(err)
	}
	w.publish(t, "capped.x", 100)
	c := w.consumer(t, "CAPPED", jetstream.ConsumerConfig{Durable: "slow"})
	fetch(t, c, 50, 50)
	waitNoAckPending(t, c)

	s := w.source(t, nil)
	t0 := time.Now()
	collectnats.SetNow(s, func() time.Time { return t0 })
	if h := consumerOf(t, poll(t, s), "CAPPED", "slow").Headroom; h.Known {
		t.Fatalf("first poll: headroom %+v; want none: no max_age, no trend yet", h)
	}
	// 20 more messages push the first sequence from 1 to 21 in 100s
	// (0.2/s) while the consumer stays at 51: 30 messages ahead of it go
	// in 150s.
	w.publish(t, "capped.x", 20)
	collectnats.SetNow(s, func() time.Time { return t0.Add(100 * time.Second) })
	snap := poll(t, s)
	if st := snap.Streams[0]; st.FirstSeq != 21 {
		t.Fatalf("first sequence %d, want 21", st.FirstSeq)
	}
	h := consumerOf(t, snap, "CAPPED", "slow").Headroom
	if !h.Known || !h.Projected || math.Abs(h.Seconds-150) > 0.01 || h.Limit != "max_msgs 100, discard old" {
		t.Errorf("headroom %+v; want 150s projected from max_msgs 100, discard old", h)
	}
}
