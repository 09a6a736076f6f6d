package kafka

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/demo"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

var testDLQPattern = regexp.MustCompile(`(?i)[._-](dlq|dlt)$`)

func dlqByName(topic string) (queue.DLQDetection, bool) {
	return queue.DetectedName, testDLQPattern.MatchString(topic)
}

func findDLQ(t *testing.T, snap *queue.Snapshot, name string) queue.DLQ {
	t.Helper()
	for _, d := range snap.DLQs {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("DLQ %s missing; have %+v", name, snap.DLQs)
	return queue.DLQ{}
}

// TestDemoDLQs reads the demo's Spring and Connect dead-letter topics.
func TestDemoDLQs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := demo.Start(ctx, demo.Options{Speed: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := New(Options{Cluster: testenv.KafkaCluster(t, "demo", d.Brokers()), DLQTopic: dlqByName})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	snap := poll(t, s)
	for name, source := range map[string]string{demo.TopicOrdersDLT: demo.TopicOrders, demo.TopicPaymentsDLQ: demo.TopicPayments} {
		dlq := findDLQ(t, snap, name)
		if dlq.Messages < demo.SeededDeadLetters || dlq.Source() != source || !dlq.HasOldestAge || dlq.OldestAge < 30*time.Minute {
			t.Errorf("%s: %d messages from %q, oldest %v; want ≥ %d from %s, seeded up to an hour ago",
				name, dlq.Messages, dlq.Source(), dlq.OldestAge, demo.SeededDeadLetters, source)
		}
	}

	// With the cursor at the end as of a listing, depth is at most what was
	// dead-lettered since.
	adm := kadm.NewClient(s.Client())
	ends, err := adm.ListEndOffsets(ctx, demo.TopicOrdersDLT)
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.CommitAllOffsets(ctx, config.DefaultKafkaCursorGroup, ends.Offsets()); err != nil {
		t.Fatal(err)
	}
	after := findDLQ(t, poll(t, s), demo.TopicOrdersDLT)
	if after.Messages >= demo.SeededDeadLetters {
		t.Errorf("after moving the cursor to the end: %d messages", after.Messages)
	}
}
