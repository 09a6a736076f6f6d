package realkafka

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/collectors/kafka/kafkatest"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestConfluentKafkaLagMatchesConsumerGroupsTool drives a KIP-848 group
// and a classic group with librdkafka 2.16 (confluent-kafka for Python),
// each reading and committing part of a topic, and checks queuewatch
// against kafka-consumer-groups as for the other clients.
func TestConfluentKafkaLagMatchesConsumerGroupsTool(t *testing.T) {
	t.Parallel()
	python, scripts, err := testenv.KafkaPython()
	testenv.Require(t, "confluent-kafka", err)
	eachVersion(t, func(t *testing.T, b *broker) { confluentKafkaLagMatchesConsumerGroupsTool(t, b, python, scripts) })
}

func confluentKafkaLagMatchesConsumerGroupsTool(t *testing.T, b *broker, python, scripts string) {
	topic := b.topic(3)
	b.produce(topic, 3, 10)
	groups := map[string]string{
		testenv.Unique("rdkafka-848"):     "consumer",
		testenv.Unique("rdkafka-classic"): "classic",
	}
	reads := map[string]int{"consumer": 8, "classic": 14}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for group, protocol := range groups {
		wg.Go(func() {
			out, err := exec.CommandContext(ctx, python, filepath.Join(scripts, "consume.py"),
				b.node.Addr(), topic, group, protocol, strconv.Itoa(reads[protocol])).CombinedOutput()
			if err != nil {
				mu.Lock()
				defer mu.Unlock()
				t.Errorf("confluent-kafka %s consumer: %v: %s", protocol, err, out)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	var names []string
	for g := range groups {
		names = append(names, g)
	}
	snap := poll(t, b.source(false, names...))
	want := b.describeGroups(names...)
	for g, protocol := range groups {
		got := kafkatest.Group(t, snap, g)
		assertMatches(t, got, want[g])
		typ := queue.GroupClassic
		if protocol == "consumer" {
			typ = queue.GroupConsumer
		}
		if got.Type != typ || got.State != "Empty" || got.Members != 0 || got.TotalLag() != int64(30-reads[protocol]) {
			t.Errorf("%s: type %q state %q members %d lag %d; want %q, Empty, 0, %d",
				g, got.Type, got.State, got.Members, got.TotalLag(), typ, 30-reads[protocol])
		}
	}
}
