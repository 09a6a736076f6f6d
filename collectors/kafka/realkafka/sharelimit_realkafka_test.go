package realkafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	collector "github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/collectors/kafka/kafkatest"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestShareGroupDeliveryLimit sets the share group's delivery limit to 2
// (share.delivery.count.limit, the lowest the 4.4 broker allows) and has
// the Java KafkaShareConsumer accept offsets 0 and 3 of 4 and release 1
// and 2 on every delivery: their second release reaches the limit and the
// broker archives them. Nothing then waits: lag 0, as kafka-share-groups
// says, and status ok; the start offset, as after rejects, trails at 1 (the
// persisted state; the tool says the same). The broker reports nothing else
// about them (no count of archived records, no copy: the group has no
// dead-letter topic, so no topic with the broker's "dlq." prefix names
// it). When the group is deleted it is gone from the next poll.
func TestShareGroupDeliveryLimit(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	topic := b.topic(1)
	b.produceAt(topic, 0, 4, time.Now())
	share := testenv.Unique("share")
	b.groupConfig(share, "share.auto.offset.reset", "earliest")
	b.groupConfig(share, "share.delivery.count.limit", "2")
	member := b.javaShareAcks(topic, share, "aRRa", 2)

	s := judge(b.source(false, share))
	done := func(g *queue.ShareGroup) bool {
		p := g.Partitions
		return len(p) == 1 && p[0].Initialized && p[0].Lag == 0 && p[0].End == 4 && p[0].Start >= 1 && p[0].Start <= 4
	}
	g := b.waitShare(s, share, done)
	if !done(g) || g.Status != queue.StatusOK {
		t.Errorf("partitions %+v, %s %q; want lag 0, end 4, a start offset past the accepted 0, ok", g.Partitions, g.Status, g.StatusReason)
	}
	b.compareShareTool(g)
	b.logShareOffsets(share)
	topics, err := b.adm.ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range topics.Names() {
		if strings.HasPrefix(name, "dlq.") && strings.Contains(name, share) {
			t.Errorf("topic %s names the group: the broker kept a copy", name)
		}
	}

	member.leave()
	if _, err := b.node.Java(context.Background(), "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
		"--bootstrap-server", b.node.Addr(), "--delete", "--group", share); err != nil {
		t.Fatal(err)
	}
	if g, ok := s.poll(t).ShareGroup(share); ok {
		t.Errorf("deleted share group still reported: %+v", g)
	}
}

// TestShareGroupDeadLetterTopic checks what Kafka 4.4 does with a share
// group's dead-letter topic (KIP-1191: the group configs
// errors.deadletterqueue.topic.name, which must start with the broker's
// errors.deadletterqueue.topic.name.prefix "dlq.", and
// errors.deadletterqueue.copy.record.enable; the topic's own config
// errors.deadletterqueue.group.enable): a record rejected and one
// archived at the delivery limit are written there with the broker's
// __dlq.errors.* headers, so the README can say when Kafka keeps a copy;
// queuewatch, told the topic is a DLQ (dlq_topics), shows both.
func TestShareGroupDeadLetterTopic(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	topic := b.topic(1)
	b.produceAt(topic, 0, 4, time.Now())
	share := testenv.Unique("share")
	dlq := "dlq." + share
	// The topic must agree to take a share group's dead letters.
	enable := "true"
	if _, err := b.adm.CreateTopic(context.Background(), 1, 1, map[string]*string{"errors.deadletterqueue.group.enable": &enable}, dlq); err != nil {
		t.Fatal(err)
	}
	b.groupConfig(share, "share.auto.offset.reset", "earliest")
	b.groupConfig(share, "share.delivery.count.limit", "2")
	b.groupConfig(share, "errors.deadletterqueue.topic.name", dlq)
	b.groupConfig(share, "errors.deadletterqueue.copy.record.enable", "true")
	b.javaShareAcks(topic, share, "aRxa", 2)

	got := b.readTopic(dlq, 2, 30*time.Second)
	offsets := map[string]bool{}
	for _, r := range got {
		h := map[string]string{}
		for _, kv := range r.Headers {
			h[kv.Key] = string(kv.Value)
		}
		t.Logf("%s offset %d: value %q headers %v", dlq, r.Offset, r.Value, h)
		offsets[h["__dlq.errors.offset"]] = true
		if h["__dlq.errors.topic"] != topic || h["__dlq.errors.group"] != share {
			t.Errorf("dead letter headers %v; want topic %s, group %s", h, topic, share)
		}
	}
	if len(got) != 2 || !offsets["1"] || !offsets["2"] {
		t.Errorf("%d dead letters, of offsets %v; want the 2 of offsets 1 and 2", len(got), offsets)
	}

	access, err := brokerkafka.New(config.Kafka{Name: "real", Brokers: []string{b.node.Addr()}, DLQTopics: []string{`dlq\..*`}},
		config.DLQ{KafkaCursorGroup: config.DefaultKafkaCursorGroup})
	if err != nil {
		t.Fatal(err)
	}
	s, err := collector.New(collector.Options{Cluster: access, IncludeGroup: func(string) bool { return false }, DLQTopic: access.DLQTopic})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if d := kafkatest.FindDLQ(t, poll(t, s), dlq); d.Messages != 2 {
		t.Errorf("queuewatch shows %s as %+v; want a DLQ of 2 messages", dlq, d)
	}
}

// logShareOffsets logs the broker's whole DescribeShareGroupOffsets answer
// for group and fails if it carries a tagged field kmsg does not know: what
// 4.4 reports of a share partition is its start offset, leader epoch and
// lag, no count of records in flight, delivered or archived.
func (b *broker) logShareOffsets(group string) {
	b.t.Helper()
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	rg.GroupID = group // no topics: all of them
	req.Groups = append(req.Groups, rg)
	shard := b.cl.RequestSharded(context.Background(), req)
	for _, sh := range shard {
		if sh.Err != nil {
			b.t.Fatal(sh.Err)
		}
		resp := sh.Resp.(*kmsg.DescribeShareGroupOffsetsResponse)
		for _, g := range resp.Groups {
			if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
				b.t.Fatalf("describe share group offsets %s: %v", group, err)
			}
			for _, tp := range g.Topics {
				for _, p := range tp.Partitions {
					b.t.Logf("DescribeShareGroupOffsets v%d %s %s/%d: start offset %d, leader epoch %d, lag %d, unknown tags %d",
						resp.GetVersion(), group, tp.Topic, p.Partition, p.StartOffset, p.LeaderEpoch, p.Lag, p.UnknownTags.Len())
					if p.UnknownTags.Len() != 0 || tp.UnknownTags.Len() != 0 || g.UnknownTags.Len() != 0 {
						b.t.Errorf("the broker sent tagged fields kmsg does not know: %+v", p.UnknownTags)
					}
				}
			}
		}
	}
}

// readTopic reads up to n records of topic from its start, for at most
// wait.
func (b *broker) readTopic(topic string, n int, wait time.Duration) []*kgo.Record {
	b.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.node.Addr()), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		b.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n && ctx.Err() == nil {
		out = append(out, cl.PollFetches(ctx).Records()...)
	}
	return out
}
