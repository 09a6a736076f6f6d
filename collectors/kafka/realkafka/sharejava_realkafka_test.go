package realkafka

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestShareGroupJavaClient has the Java client's KafkaShareConsumer
// (kafka-clients 4.4, explicit acknowledgement) read 10 records and
// accept 0–3, release 4 and 5, accept 6, reject 7, accept 8 and hold 9
// (acquired, never acknowledged: in flight). With the member still there,
// queuewatch must show what kafka-share-groups --describe shows: state
// Stable, one member, start offset 4 and the broker's lag of 3 (the two
// released records and the one in flight; the accepted and rejected ones
// past the start offset do not count). Neither answer says how many
// records are in flight. When the member leaves, its held record goes
// back to the group: the lag stays 3, now with nobody reading, so the
// group is stopped.
func TestShareGroupJavaClient(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	topic := b.topic(1)
	b.produceAt(topic, 0, 10, time.Now())
	share := testenv.Unique("share")
	b.groupConfig(share, "share.auto.offset.reset", "earliest")
	member := b.javaShareAcks(topic, share, "aaaarraxah", 0)

	s := judge(b.source(false, share))
	want := queue.SharePartition{Topic: topic, Partition: 0, Initialized: true, Start: 4, End: 10, Lag: 3, LagSource: queue.LagFromBroker}
	g := b.waitShare(s, share, func(g *queue.ShareGroup) bool { return len(g.Partitions) == 1 && g.Partitions[0] == want })
	if len(g.Partitions) != 1 || g.Partitions[0] != want {
		t.Errorf("partitions %+v; want %+v", g.Partitions, want)
	}
	if g.State != "Stable" || len(g.Members) != 1 || g.Members[0].ClientID != "queuewatch-share-acks" {
		t.Errorf("state %s, members %+v; want Stable, the Java member", g.State, g.Members)
	}
	b.compareShareTool(g)
	// Nothing the tool prints, even verbose, counts the held record apart.
	for _, row := range b.shareTool("--describe", "--offsets", "--verbose", "--group", share) {
		for col := range row {
			if strings.Contains(col, "FLIGHT") || strings.Contains(col, "ACQUIRED") || strings.Contains(col, "DELIVER") {
				t.Errorf("kafka-share-groups --verbose has a column %s: show it", col)
			}
		}
	}

	member.leave()
	g = b.waitShare(s, share, func(g *queue.ShareGroup) bool { return len(g.Members) == 0 })
	if len(g.Members) != 0 || g.State != "Empty" {
		t.Fatalf("after the member left: state %s, members %+v; want Empty, none", g.State, g.Members)
	}
	if len(g.Partitions) != 1 || g.Partitions[0] != want || g.Status != queue.StatusStop {
		t.Errorf("after the member left: %+v, %s %q; want %+v, stop", g.Partitions, g.Status, g.StatusReason, want)
	}
	b.compareShareTool(g)
}

// waitShare polls s until ok holds for the share group (the broker's
// persisted share state follows the acknowledgements a moment later) or
// 30 s passed, and returns the last read.
func (b *broker) waitShare(s *judgedSource, name string, ok func(*queue.ShareGroup) bool) *queue.ShareGroup {
	b.t.Helper()
	g := shareGroup(b.t, s.poll(b.t), name)
	for deadline := time.Now().Add(30 * time.Second); !ok(g) && time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		g = shareGroup(b.t, s.poll(b.t), name)
	}
	return g
}

// javaMember is a running ShareAcks program (internal/testenv/testdata/
// frameworks/kafka-share): a share group member that acknowledged what
// its plan said and stays until leave.
type javaMember struct {
	t     *testing.T
	stdin io.Closer
	wait  func() error
	read  <-chan struct{} // closed once stdout was read to its end
	out   *strings.Builder
}

// javaShareAcks starts ShareAcks for group on topic's partition 0 with
// plan (one letter per offset: a accept, r release, x reject, R release
// until the delivery limit, h hold) and waits until it printed DONE: every
// acknowledgement is committed. limit is the group's delivery limit
// (0: the default, 5).
func (b *broker) javaShareAcks(topic, group, plan string, limit int) *javaMember {
	b.t.Helper()
	fw := testenv.RealFramework(b.t, "kafka-share")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	b.t.Cleanup(cancel)
	args := []string{b.node.Addr(), topic, group, plan}
	if limit > 0 {
		args = append(args, fmt.Sprint(limit))
	}
	cmd := fw.Command(ctx, "io.queuewatch.frameworks.ShareAcks", args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.t.Fatal(err)
	}
	out := &strings.Builder{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	read, done := make(chan struct{}), make(chan struct{})
	m := &javaMember{t: b.t, stdin: stdin, wait: cmd.Wait, read: read, out: out}
	go func() {
		defer close(read)
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			b.t.Logf("ShareAcks: %s", lines.Text())
			if lines.Text() == "DONE" {
				close(done)
			}
		}
	}()
	select {
	case <-done:
		b.t.Cleanup(func() { _ = stdin.Close(); <-read; _ = cmd.Wait() })
		return m
	case <-read:
		err := cmd.Wait()
		b.t.Fatalf("ShareAcks %v ended before DONE: %v: %s", args, err, out)
		return nil
	}
}

// leave closes the member's standard input: it closes the consumer,
// leaving the group, and exits.
func (m *javaMember) leave() {
	m.t.Helper()
	if err := m.stdin.Close(); err != nil {
		m.t.Fatal(err)
	}
	<-m.read
	if err := m.wait(); err != nil {
		m.t.Fatalf("ShareAcks: %v: %s", err, m.out)
	}
}
