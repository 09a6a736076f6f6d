package kafka

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/queue"
)

// shareConsume has a franz-go share consumer of group read topic's first
// n records (one partition) and accept those whose offset accept says,
// release the others, and flush the acknowledgements. It returns the
// consumer, still a member of the group.
func (tc *testCluster) shareConsume(topic, group string, n int, accept func(offset int64) bool) *kgo.Client {
	tc.t.Helper()
	cl := tc.shareConsumer(topic, group)
	tc.shareAck(cl, n, func(r *kgo.Record) kgo.AckStatus {
		if accept(r.Offset) {
			return kgo.AckAccept
		}
		return kgo.AckRelease
	})
	return cl
}

// shareConsumer is a franz-go share consumer of topic in group.
func (tc *testCluster) shareConsumer(topic, group string) *kgo.Client {
	tc.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tc.c.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ShareGroup(group), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		tc.t.Fatal(err)
	}
	tc.t.Cleanup(cl.Close)
	return cl
}

// shareAck has cl receive n records (redeliveries count), acknowledge each
// as ack says, and flush the acknowledgements.
func (tc *testCluster) shareAck(cl *kgo.Client, n int, ack func(*kgo.Record) kgo.AckStatus) {
	tc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for got := 0; got < n; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			tc.t.Fatalf("read %d of %d records: %v", got, n, ctx.Err())
		}
		for _, r := range fs.Records() {
			got++
			r.Ack(ack(r))
		}
	}
	if err := cl.FlushAcks(ctx); err != nil {
		tc.t.Fatal(err)
	}
}

// TestShareGroup: a share group on kfake is listed with its state, member
// and assignment, the start offset after a known accept/release sequence,
// and the broker's lag (KIP-1226), which leaves out the records accepted
// past the start offset. When its member leaves it is stopped with the
// same lag; once deleted it is gone. No consumer group shows it.
func TestShareGroup(t *testing.T) {
	tc := newCluster(t)
	tc.topic("orders", 1)
	tc.produce("orders", 0, 10, time.Now())
	tc.c.SetGroupConfigs("workers", map[string]string{"share.auto.offset.reset": "earliest"})
	// Offsets 0–3 and 6–7 accepted, 4, 5, 8, 9 released: the start offset
	// is 4, and 4 records wait (6 by the estimate).
	cl := tc.shareConsume("orders", "workers", 10, func(o int64) bool { return o < 4 || o == 6 || o == 7 })
	s := tc.source(Options{})
	ev := judgement()

	snap := judgedPoll(t, s, ev)
	if _, ok := snap.Group("workers"); ok {
		t.Error("share group reported as a consumer group")
	}
	g, ok := snap.ShareGroup("workers")
	if !ok {
		t.Fatalf("share group missing: %+v", snap.ShareGroups)
	}
	if g.State != "Stable" || len(g.Members) != 1 || g.Err != "" {
		t.Errorf("group state %q, %d members, err %q; want Stable, 1, none", g.State, len(g.Members), g.Err)
	}
	if len(g.Members) == 1 && (len(g.Members[0].Assigned) != 1 || g.Members[0].Assigned[0].Topic != "orders") {
		t.Errorf("member assigned %+v; want orders", g.Members[0].Assigned)
	}
	want := []queue.SharePartition{{Topic: "orders", Partition: 0, Initialized: true, Start: 4, End: 10, Lag: 4, LagSource: queue.LagFromBroker}}
	if len(g.Partitions) != 1 || g.Partitions[0] != want[0] {
		t.Errorf("partitions %+v; want %+v", g.Partitions, want)
	}
	if g.Status != queue.StatusOK {
		t.Errorf("status %s %q; want ok at the first poll", g.Status, g.StatusReason)
	}
	if len(snap.Partial) != 0 {
		t.Errorf("partial poll: %v", snap.Partial)
	}

	cl.Close()
	waitShare(t, s, ev, "member leaves", func(g *queue.ShareGroup, ok bool) bool { return ok && len(g.Members) == 0 },
		func(g *queue.ShareGroup) {
			// The judgement's sentence, since when (the onset alerts adds) aside.
			reason := regexp.MustCompile(`^no members since [^:]+:\d\d UTC \([^)]*\): `).ReplaceAllString(g.StatusReason, "no members: ")
			if g.Status != queue.StatusStop || reason != "no members: 4 records waiting" || g.TotalLag() != 4 {
				t.Errorf("after the member left: %s %q lag %d; want stop with 4 waiting", g.Status, g.StatusReason, g.TotalLag())
			}
		})

	if _, err := tc.adm.DeleteGroup(context.Background(), "workers"); err != nil {
		t.Fatal(err)
	}
	waitShare(t, s, ev, "deleted", func(_ *queue.ShareGroup, ok bool) bool { return !ok }, func(*queue.ShareGroup) {})
}

// TestShareGroupLagEstimate: a broker that answers DescribeShareGroupOffsets
// only at v0 (before KIP-1226, as Kafka 4.0 and 4.1) sends no lag, so it is
// estimated as end − start offset and marked so.
func TestShareGroupLagEstimate(t *testing.T) {
	v := kversion.Stable()
	v.SetMaxKeyVersion(kmsg.DescribeShareGroupOffsets.Int16(), 0)
	tc := newCluster(t, kfake.MaxVersions(v))
	tc.topic("orders", 1)
	tc.produce("orders", 0, 10, time.Now())
	tc.c.SetGroupConfigs("workers", map[string]string{"share.auto.offset.reset": "earliest"})
	tc.shareConsume("orders", "workers", 10, func(o int64) bool { return o < 4 || o == 6 || o == 7 })

	snap := poll(t, tc.source(Options{}))
	g, ok := snap.ShareGroup("workers")
	if !ok {
		t.Fatalf("share group missing: %+v", snap.ShareGroups)
	}
	want := queue.SharePartition{Topic: "orders", Partition: 0, Initialized: true, Start: 4, End: 10, Lag: 6, LagSource: queue.LagEstimated}
	if len(g.Partitions) != 1 || g.Partitions[0] != want {
		t.Errorf("partitions %+v; want %+v", g.Partitions, want)
	}
	if !g.LagEstimated() {
		t.Error("lag not marked estimated")
	}
}

// judgement judges share groups as the scheduler's evaluator does (they
// are judged in alerts), without hysteresis: these tests read the
// judgement of each poll.
func judgement() *alerts.Evaluator {
	return alerts.NewEvaluator(alerts.StatusOptions{HysteresisPolls: 1})
}

// judgedPoll is poll with the evaluation the scheduler gives each
// snapshot: the poll that completes pending lag seconds takes the place of
// the one before it.
func judgedPoll(t *testing.T, s *Source, ev *alerts.Evaluator) *queue.Snapshot {
	t.Helper()
	snap := pollOnce(t, s)
	ev.Evaluate(snap)
	if snap.LagSecondsPending() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if !s.Finish(ctx) {
			t.Fatal("lag seconds pending, but Finish had nothing to read")
		}
		snap = pollOnce(t, s)
		ev.Complete(snap)
	}
	return snap
}

// waitShare polls s, judged by ev, until done says the share group is as
// wanted, then checks it; a member's leaving shows only after the broker
// notices.
func waitShare(t *testing.T, s *Source, ev *alerts.Evaluator, what string, done func(*queue.ShareGroup, bool) bool, check func(*queue.ShareGroup)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		snap := pollOnce(t, s)
		ev.Evaluate(snap)
		g, ok := snap.ShareGroup("workers")
		if done(g, ok) {
			check(g)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: share group still %+v (listed %v)", what, g, ok)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestShareGroupRejectAndDeliveryLimit: records a member rejects, and
// records released until the delivery limit (2 here), are archived, and
// the start offset moves past them: after offsets 0–1 rejected, 2–3
// accepted and 4–9 released the group starts at 4 with 6 waiting; once
// 4–9 are released a second time it starts at 10 with none waiting.
func TestShareGroupRejectAndDeliveryLimit(t *testing.T) {
	tc := newCluster(t, kfake.BrokerConfigs(map[string]string{"group.share.delivery.count.limit": "2"}))
	tc.topic("orders", 1)
	tc.produce("orders", 0, 10, time.Now())
	tc.c.SetGroupConfigs("workers", map[string]string{"share.auto.offset.reset": "earliest"})
	cl := tc.shareConsumer("orders", "workers")
	tc.shareAck(cl, 10, func(r *kgo.Record) kgo.AckStatus {
		switch {
		case r.Offset < 2:
			return kgo.AckReject
		case r.Offset < 4:
			return kgo.AckAccept
		}
		return kgo.AckRelease
	})
	s := tc.source(Options{})
	ev := judgement()
	want := queue.SharePartition{Topic: "orders", Partition: 0, Initialized: true, Start: 4, End: 10, Lag: 6, LagSource: queue.LagFromBroker}
	if g := workers(t, judgedPoll(t, s, ev)); len(g.Partitions) != 1 || g.Partitions[0] != want {
		t.Errorf("after reject, accept and release: %+v; want %+v", g.Partitions, want)
	}

	tc.shareAck(cl, 6, func(*kgo.Record) kgo.AckStatus { return kgo.AckRelease })
	want.Start, want.Lag = 10, 0
	g := workers(t, judgedPoll(t, s, ev))
	if len(g.Partitions) != 1 || g.Partitions[0] != want {
		t.Errorf("after the delivery limit: %+v; want %+v", g.Partitions, want)
	}
	if g.Status != queue.StatusOK {
		t.Errorf("status %s %q; want ok with nothing waiting", g.Status, g.StatusReason)
	}
}

// workers is the snapshot's share group "workers", read without error.
func workers(t *testing.T, snap *queue.Snapshot) *queue.ShareGroup {
	t.Helper()
	g, ok := snap.ShareGroup("workers")
	if !ok || g.Err != "" {
		t.Fatalf("share group workers: %+v (listed %v)", g, ok)
	}
	return g
}
