package nats_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkNATSPoll polls 1,000 consumers over 100 streams on an embedded
// server, every consumer lagging at a different sequence. cold-ms is the
// first poll (every backlog visible), lag-seconds-ms the time until every
// lag second is known too (the first poll, Finish reading every next
// message, and a second poll); ns/op is a steady poll (all cached).
//
//	go test -run '^$' -bench NATSPoll -benchtime 3x ./collectors/nats/
func BenchmarkNATSPoll(b *testing.B) {
	const streams, perStream, msgs = 100, 10, 20
	w := newWorld(b)
	for i := range streams {
		name := fmt.Sprintf("S%03d", i)
		w.stream(b, name, name+".>")
		w.publish(b, name+".x", msgs)
		for j := range perStream {
			w.consumer(b, name, jetstream.ConsumerConfig{
				Durable: fmt.Sprintf("c%02d", j), DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: uint64(j + 1),
			})
		}
	}
	s := w.source(b, nil)
	start := time.Now()
	poll(b, s)
	cold := time.Since(start)
	s.Finish(b.Context())
	snap := poll(b, s)
	complete := time.Since(start)
	if len(snap.Consumers) != streams*perStream || len(snap.Partial) > 0 {
		b.Fatalf("consumers = %d, partial %v", len(snap.Consumers), snap.Partial)
	}
	for _, c := range snap.Consumers {
		if !c.HasLagSeconds || c.Pending == 0 {
			b.Fatalf("consumer %s/%s: pending %d, lag seconds known %v", c.Stream, c.Name, c.Pending, c.HasLagSeconds)
		}
	}
	before := s.Requests()
	b.ResetTimer()
	for range b.N {
		poll(b, s)
	}
	b.StopTimer()
	b.ReportMetric(float64(cold.Milliseconds()), "cold-ms")
	b.ReportMetric(float64(complete.Milliseconds()), "lag-seconds-ms")
	b.ReportMetric(float64(s.Requests()-before)/float64(b.N), "requests/poll")
}
