package realkafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/collectors/kafka/kafkatest"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// groupResource is the GROUP config resource type (KIP-848), which kmsg
// has no constant for.
const groupResource kmsg.ConfigResourceType = 32

// TestShareGroupIgnored has the Java share consumer (KIP-932, on by
// default in Kafka 4.4) read a topic that a classic group also reads:
// queuewatch reports the classic group and leaves the share group out (it
// has no committed offsets to measure), without a partial-poll error.
func TestShareGroupIgnored(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	topic := b.topic(1)
	b.produceAt(topic, 0, 5, time.Now())
	share, classic := testenv.Unique("share"), testenv.Unique("classic")
	b.groupConfig(share, "share.auto.offset.reset", "earliest")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := b.node.Java(ctx, "org.apache.kafka.tools.consumer.ConsoleShareConsumer",
		"--bootstrap-server", b.node.Addr(), "--topic", topic, "--group", share,
		"--max-messages", "3", "--timeout-ms", "90000"); err != nil {
		t.Fatal(err)
	}
	b.commit(classic, topic, map[int32]int64{0: 2})

	listed, err := b.adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := listed[share]; !ok || g.GroupType != "share" {
		t.Fatalf("the broker lists share group %s as %+v; want type share", share, g)
	}
	snap := poll(t, b.source(false, share, classic))
	if _, ok := snap.Group(share); ok {
		t.Error("share group reported as a consumer group")
	}
	if g := kafkatest.Group(t, snap, classic); g.TotalLag() != 3 {
		t.Errorf("classic group lag %d; want 3", g.TotalLag())
	}
	if len(snap.Partial) != 0 {
		t.Errorf("partial poll: %v", snap.Partial)
	}
}

// groupConfig sets one dynamic group config with IncrementalAlterConfigs.
func (b *broker) groupConfig(group, name, value string) {
	b.t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = groupResource, group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = name, &value
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(context.Background(), b.cl)
	if err != nil {
		b.t.Fatal(err)
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			msg := ""
			if r.ErrorMessage != nil {
				msg = *r.ErrorMessage
			}
			b.t.Fatalf("set %s=%s on group %s: %v %s", name, value, group, err, strings.TrimSpace(msg))
		}
	}
}
