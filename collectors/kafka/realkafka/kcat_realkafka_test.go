package realkafka

import (
	"context"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestKcatLagMatchesConsumerGroupsTool drives a classic group with
// librdkafka (Debian's kcat, whose librdkafka predates KIP-848) and checks
// queuewatch against kafka-consumer-groups, as for the other clients.
func TestKcatLagMatchesConsumerGroupsTool(t *testing.T) {
	t.Parallel()
	kcat, err := exec.LookPath("kcat")
	testenv.Require(t, "kcat", err)
	eachVersion(t, func(t *testing.T, b *broker) { kcatLagMatchesConsumerGroupsTool(t, b, kcat) })
}

func kcatLagMatchesConsumerGroupsTool(t *testing.T, b *broker, kcat string) {
	topic := b.topic(3)
	b.produce(topic, 3, 10)
	group := testenv.Unique("kcat")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, "-b", b.node.Addr(), "-G", group, "-c", strconv.Itoa(9), "-q",
		"-X", "auto.offset.reset=earliest", "-X", "client.id=kcat", topic).CombinedOutput()
	if err != nil {
		t.Fatalf("kcat: %v: %s", err, out)
	}

	g, ok := poll(t, b.source(false, group)).Group(group)
	if !ok {
		t.Fatalf("group %s missing", group)
	}
	assertMatches(t, g, b.describeGroups(group)[group])
	if g.Type != queue.GroupClassic || g.State != "Empty" || g.Members != 0 || g.TotalLag() != 30-9 {
		t.Errorf("kcat group: type %q state %q members %d lag %d; want classic, Empty, 0, 21", g.Type, g.State, g.Members, g.TotalLag())
	}
}
